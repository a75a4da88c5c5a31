"""Messages their authors keep off the record (table `off_record`): answered and kept in the
history, never reflected. Ids only."""

from __future__ import annotations

from memory.store.db import Store, Tx


async def mark(tx: Tx, exchange_id: str, user_id: int, *, now: float) -> bool:
    """Keep an exchange off the record; return whether it was not already."""
    await tx.execute(
        "INSERT INTO off_record (exchange_id, user_id, marked_at) VALUES (?, ?, ?)"
        " ON CONFLICT (exchange_id) DO NOTHING",
        (exchange_id, user_id, now),
    )
    return await tx.changes() > 0


async def marked(db: Store | Tx, exchange_id: str) -> bool:
    """Tell whether an exchange is kept off the record."""
    row = await db.fetchone("SELECT 1 FROM off_record WHERE exchange_id = ?", (exchange_id,))
    return row is not None


async def forget_person(tx: Tx, user_id: int) -> None:
    """Drop a person's marks (their data erased: nothing of theirs is left to keep out)."""
    await tx.execute("DELETE FROM off_record WHERE user_id = ?", (user_id,))
