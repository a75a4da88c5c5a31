"""The days each memory means (schema 23), as the write path resolved them from its text."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from memory.store.db import Store, Tx


async def record(tx: Tx, memory_id: int, spans: Iterable[tuple[date, date]]) -> None:
    """Set the days a memory means (first, last included): those of its current text only,
    kept under its owner (schema 36)."""
    await tx.execute("DELETE FROM memory_dates WHERE memory_id = ?", (memory_id,))
    days = {(first.isoformat(), last.isoformat()) for first, last in spans}
    owner = await tx.fetchone("SELECT user_id FROM memories WHERE id = ?", (memory_id,))
    if days and owner is not None:
        await tx.executemany(
            "INSERT INTO memory_dates (memory_id, user_id, first_day, last_day)"
            " VALUES (?, ?, ?, ?)",
            [(memory_id, owner[0], first, last) for first, last in sorted(days)],
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


# The days of one person's memories that meet a window: a range of memory_dates_by_person.
MEETING = (
    "SELECT memory_id, first_day, last_day FROM memory_dates"
    " WHERE user_id = ? AND last_day >= ? AND first_day <= ?"
    " ORDER BY memory_id, first_day, last_day"
)


async def meeting(
    db: Store | Tx, user_id: int, first: date, last: date
) -> dict[int, tuple[date, date]]:
    """The user's memories whose days meet `first` to `last` (both included), each with the
    earliest of its spans that does. One range of the person's index: their days ending on
    `first` or later, whatever everyone else's."""
    rows = await db.fetchall(MEETING, (user_id, first.isoformat(), last.isoformat()))
    out: dict[int, tuple[date, date]] = {}
    for r in rows:
        out.setdefault(int(r[0]), (date.fromisoformat(r[1]), date.fromisoformat(r[2])))
    return out
