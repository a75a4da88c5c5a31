"""Pictures people posted (schema 38): whether each chat server's model sees images, and the
exchanges whose message brought pictures. Counts and ids only: a picture is never stored."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.db import Store, Tx


async def load_sight(store: Store) -> dict[tuple[str, str], bool]:
    """Return whether each (server, model) sees images, where learned."""
    rows = await store.fetchall("SELECT server, model, sees FROM chat_vision")
    return {(str(r["server"]), str(r["model"])): bool(r["sees"]) for r in rows}


async def save_sight(store: Store, server: str, model: str, sees: bool, *, now: float) -> None:
    """Remember whether this server's model sees images."""
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO chat_vision (server, model, sees, learned_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (server, model) DO UPDATE SET sees = excluded.sees,"
            " learned_at = excluded.learned_at",
            (server, model, int(sees), now),
        )
    )


async def record(tx: Tx, exchange_id: str, pictures: int) -> None:
    """Record that this exchange's message brought `pictures` pictures."""
    await tx.execute(
        "INSERT INTO exchange_pictures (exchange_id, pictures) VALUES (?, ?)"
        " ON CONFLICT (exchange_id) DO UPDATE SET pictures = excluded.pictures",
        (exchange_id, pictures),
    )


async def count(store: Store | Tx, exchange_id: str) -> int:
    """How many pictures this exchange's message brought (0: none)."""
    row = await store.fetchone(
        "SELECT pictures FROM exchange_pictures WHERE exchange_id = ?", (exchange_id,)
    )
    return int(row[0]) if row else 0


async def mark_seen(tx: Tx, exchange_id: str) -> None:
    """Record that this exchange's reflection was shown its pictures."""
    await tx.execute("UPDATE exchange_pictures SET seen = 1 WHERE exchange_id = ?", (exchange_id,))


async def seen_among(store: Store | Tx, exchange_ids: Sequence[str]) -> set[str]:
    """The exchanges among these whose reflection was shown their pictures."""
    if not exchange_ids:
        return set()
    marks = ", ".join("?" * len(exchange_ids))
    rows = await store.fetchall(
        f"SELECT exchange_id FROM exchange_pictures WHERE seen = 1 AND exchange_id IN ({marks})",
        list(exchange_ids),
    )
    return {str(r[0]) for r in rows}
