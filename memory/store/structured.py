"""The structured-output mode learned for each chat server and model (see
memory.backends.structured)."""

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
