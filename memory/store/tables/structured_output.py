"""The structured-output mode learned for each chat server and model, whether it streams its
replies (see memory.backends.structured), whether it takes one request at a time
(memory.turn.admission.BoundedChat), and the context it takes (memory.backends.context_size)."""

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


async def one_at_a_time(store: Store, server: str, model: str) -> bool:
    """Whether this server was learned to take one request at a time for this model."""
    row = await store.fetchone(
        "SELECT 1 FROM chat_one_at_a_time WHERE server = ? AND model = ?", (server, model)
    )
    return row is not None


async def save_one_at_a_time(store: Store, server: str, model: str, *, now: float) -> None:
    """Remember that this server takes one request at a time for this model."""
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO chat_one_at_a_time (server, model, learned_at) VALUES (?, ?, ?)"
            " ON CONFLICT (server, model) DO UPDATE SET learned_at = excluded.learned_at",
            (server, model, now),
        )
    )


async def load_context(store: Store) -> dict[tuple[str, str], tuple[int, str]]:
    """Return the context each (server, model) takes, in tokens, and where it was learned."""
    rows = await store.fetchall("SELECT server, model, tokens, source FROM chat_context")
    return {(str(r["server"]), str(r["model"])): (int(r["tokens"]), str(r["source"])) for r in rows}


async def save_context(
    store: Store, server: str, model: str, tokens: int, source: str, *, now: float
) -> None:
    """Remember the context this server takes for this model, and where it was learned."""
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO chat_context (server, model, tokens, source, learned_at)"
            " VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (server, model) DO UPDATE SET tokens = excluded.tokens,"
            " source = excluded.source, learned_at = excluded.learned_at",
            (server, model, tokens, source, now),
        )
    )
