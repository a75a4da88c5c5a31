"""The structured-output mode learned for each chat server and model, and whether it streams
its replies (see memory.backends.structured)."""

from __future__ import annotations

from memory.store.db import Store


async def load(store: Store) -> dict[tuple[str, str], str]:
    """Return the mode learned for each (server, model)."""
    rows = await store.fetchall("SELECT server, model, mode FROM structured_output")
    return {(str(r["server"]), str(r["model"])): str(r["mode"]) for r in rows}


async def save(store: Store, server: str, model: str, mode: str, *, now: float) -> None:
    """Remember the mode this server accepts for this model."""
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO structured_output (server, model, mode, learned_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (server, model) DO UPDATE SET mode = excluded.mode,"
            " learned_at = excluded.learned_at",
            (server, model, mode, now),
        )
    )


async def load_streaming(store: Store) -> dict[tuple[str, str], bool]:
    """Return whether each (server, model) streams its replies, where learned."""
    rows = await store.fetchall("SELECT server, model, streams FROM chat_streaming")
    return {(str(r["server"]), str(r["model"])): bool(r["streams"]) for r in rows}


async def save_streaming(
    store: Store, server: str, model: str, streams: bool, *, now: float
) -> None:
    """Remember whether this server streams its replies for this model."""
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO chat_streaming (server, model, streams, learned_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (server, model) DO UPDATE SET streams = excluded.streams,"
            " learned_at = excluded.learned_at",
            (server, model, int(streams), now),
        )
    )
