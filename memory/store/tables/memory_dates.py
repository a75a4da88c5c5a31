"""The days each memory means (schema 23), as the write path resolved them from its text."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from memory.store.db import Store, Tx


async def record(tx: Tx, memory_id: int, spans: Iterable[tuple[date, date]]) -> None:
    """Set the days a memory means (first, last included): those of its current text only."""
    await tx.execute("DELETE FROM memory_dates WHERE memory_id = ?", (memory_id,))
    rows = {(memory_id, first.isoformat(), last.isoformat()) for first, last in spans}
    if rows:
        await tx.executemany(
            "INSERT INTO memory_dates (memory_id, first_day, last_day) VALUES (?, ?, ?)",
            sorted(rows),
        )


async def of(db: Store | Tx, memory_id: int) -> list[tuple[date, date]]:
    """The days a memory means, earliest first (none: the day it was said)."""
    rows = await db.fetchall(
        "SELECT first_day, last_day FROM memory_dates WHERE memory_id = ? ORDER BY first_day,"
        " last_day",
        (memory_id,),
    )
    return [(date.fromisoformat(r[0]), date.fromisoformat(r[1])) for r in rows]


async def for_user(db: Store | Tx, user_id: int) -> dict[int, list[tuple[date, date]]]:
    """The days each of the user's memories means (for the export), by memory, earliest first."""
    rows = await db.fetchall(
        "SELECT d.memory_id, d.first_day, d.last_day FROM memory_dates d"
        " JOIN memories m ON m.id = d.memory_id WHERE m.user_id = ?"
        " ORDER BY d.memory_id, d.first_day, d.last_day",
        (user_id,),
    )
    out: dict[int, list[tuple[date, date]]] = {}
    for r in rows:
        out.setdefault(int(r[0]), []).append((date.fromisoformat(r[1]), date.fromisoformat(r[2])))
    return out
