"""The messages a front end posted for each reply (schema 26): which exchange a message the
bot sent belongs to. Ids only; the rows go with their exchange (memory/store/queries/erasure.py)."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.db import Store, Tx


async def record(tx: Tx, exchange_id: str, message_ids: Sequence[int], *, now: float) -> int:
    """Record the messages posted for this exchange's reply, in order; return how many. Nothing
    is recorded for an exchange whose reply is not stored (the turn failed, or an erasure took
    it meanwhile): no row may outlive what it points at."""
    row = await tx.fetchone(
        "SELECT 1 FROM messages WHERE source_id = ?"
        " AND NOT EXISTS (SELECT 1 FROM erased_exchanges WHERE exchange_id = ?)",
        (f"{exchange_id}:reply", exchange_id),
    )
    if row is None:
        return 0
    start = await tx.fetchone(
        "SELECT coalesce(max(part) + 1, 0) FROM sent_messages WHERE exchange_id = ?",
        (exchange_id,),
    )
    first = int(start[0]) if start else 0
    await tx.executemany(
        "INSERT INTO sent_messages (message_id, exchange_id, part, sent_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (message_id) DO NOTHING",
        [(int(m), exchange_id, first + i, now) for i, m in enumerate(message_ids)],
    )
    return len(message_ids)


async def exchange_of(store: Store, message_id: int) -> str | None:
    """The exchange a posted message belongs to, or None (not one of the bot's replies)."""
    row = await store.fetchone(
        "SELECT exchange_id FROM sent_messages WHERE message_id = ?", (message_id,)
    )
    return str(row[0]) if row else None


async def exchanges_of(store: Store, message_ids: Sequence[int]) -> dict[int, str]:
    """The exchange of each of these messages the bot posted (the others left out)."""
    wanted = sorted(set(message_ids))
    found: dict[int, str] = {}
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        rows = await store.fetchall(
            "SELECT message_id, exchange_id FROM sent_messages"
            f" WHERE message_id IN ({', '.join('?' * len(batch))})",
            batch,
        )
        found.update({int(r[0]): str(r[1]) for r in rows})
    return found


# Ids bound in one statement, well under either backend's limit on parameters.
_BATCH = 500


async def of_person(store: Store, user_id: int) -> list[tuple[str, int]]:
    """The messages posted for the replies to a person's messages: (exchange, message id)."""
    rows = await store.fetchall(
        "SELECT s.exchange_id, s.message_id FROM sent_messages s JOIN messages m"
        " ON m.source_id = s.exchange_id WHERE m.user_id = ? AND m.role = 'user'"
        " ORDER BY s.exchange_id, s.part",
        (user_id,),
    )
    return [(str(r[0]), int(r[1])) for r in rows]


async def of_exchange(store: Store, exchange_id: str) -> list[int]:
    """The messages posted for an exchange's reply, in order."""
    rows = await store.fetchall(
        "SELECT message_id FROM sent_messages WHERE exchange_id = ? ORDER BY part",
        (exchange_id,),
    )
    return [int(r[0]) for r in rows]


async def forget(tx: Tx, exchange_id: str) -> int:
    """Drop the records of an exchange's posted messages; return how many."""
    await tx.execute("DELETE FROM sent_messages WHERE exchange_id = ?", (exchange_id,))
    return await tx.changes()


async def forget_posts(tx: Tx, message_ids: Sequence[int]) -> None:
    """Drop the records of these posts (their front end deleted them itself)."""
    await tx.executemany(
        "DELETE FROM sent_messages WHERE message_id = ?", [(int(m),) for m in message_ids]
    )
