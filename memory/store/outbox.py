"""The reflection outbox: exchanges waiting for their reflection. It survives restarts."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from memory.model import Exchange
from memory.store.db import Store, Tx


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """A pending reflection and how many times it was tried."""

    id: int
    exchange: Exchange
    attempts: int


# Reflections one person may have waiting. A normal conversation leaves one or two behind the
# worker; twenty is a flood, whose oldest exchanges are dropped (counted) rather than let one
# person's backlog delay everyone's memories for hours.
BACKLOG_PER_PERSON = 20


async def enqueue(
    tx: Tx, exchange: Exchange, *, now: float, backlog: int = BACKLOG_PER_PERSON
) -> int:
    """Queue the reflection of an exchange (once per exchange id). Past `backlog` pending rows
    of this person (their oldest, perhaps being reflected, not counted), drop the oldest of the
    others; return how many were dropped (never another person's)."""
    await tx.execute(
        "INSERT INTO outbox (exchange_id, user_id, story_id, origin, user_name, user_message,"
        " reply, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (exchange_id) DO NOTHING",
        (
            exchange.exchange_id, exchange.user_id, exchange.story_id, exchange.origin,
            exchange.user_name, exchange.user_message, exchange.reply, now, now,
        ),
    )  # fmt: skip
    # The oldest pending row is kept: the worker takes each person's oldest first, so it may be
    # reflecting on it right now (dropping it would count as lost a reflection about to land).
    await tx.execute(
        "UPDATE outbox SET status = 'dropped', last_error = 'over the backlog of this person'"
        " WHERE id IN (SELECT id FROM outbox WHERE user_id = ?1 AND status = 'pending'"
        " ORDER BY id DESC LIMIT -1 OFFSET ?2)"
        " AND id != (SELECT min(id) FROM outbox WHERE user_id = ?1 AND status = 'pending')",
        (exchange.user_id, max(0, backlog)),
    )
    return await tx.changes()


_COLUMNS = "id, exchange_id, user_id, story_id, origin, user_name, user_message, reply, attempts"


def _row(row: sqlite3.Row) -> OutboxRow:
    exchange = Exchange(
        str(row["exchange_id"]),
        int(row["user_id"]),
        int(row["story_id"]),
        str(row["origin"]),
        str(row["user_name"]),
        str(row["user_message"]),
        str(row["reply"]),
    )
    return OutboxRow(int(row["id"]), exchange, int(row["attempts"]))


async def due(store: Store, *, now: float, limit: int = 10) -> list[OutboxRow]:
    """Return pending rows whose next attempt is due, taking people in turn: everyone's oldest
    first (oldest person first), then everyone's second, and so on."""
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM (SELECT *, row_number() OVER"
        " (PARTITION BY user_id ORDER BY next_attempt_at, id) AS place,"
        " min(next_attempt_at) OVER (PARTITION BY user_id) AS first_due"
        " FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?)"
        " ORDER BY place, first_due, user_id, next_attempt_at, id LIMIT ?",
        (now, limit),
    )
    return [_row(r) for r in rows]


async def get(store: Store, exchange_id: str) -> OutboxRow | None:
    """Return the pending row of this exchange, if any."""
    row = await store.fetchone(
        f"SELECT {_COLUMNS} FROM outbox WHERE exchange_id = ? AND status = 'pending'",
        (exchange_id,),
    )
    return _row(row) if row else None


async def mark_done(tx: Tx, row_id: int) -> None:
    """Record that an exchange was reflected; its row keeps ids only (the exchange itself is
    in the history, as long as the history keeps it)."""
    await tx.execute(
        "UPDATE outbox SET status = 'done', last_error = NULL, user_name = '', user_message = '',"
        " reply = '' WHERE id = ?",
        (row_id,),
    )


async def queued_at(tx: Tx, exchange_id: str) -> float | None:
    """When this exchange was queued for its reflection, if it was."""
    row = await tx.fetchone("SELECT created_at FROM outbox WHERE exchange_id = ?", (exchange_id,))
    return float(row[0]) if row else None


async def mark_failed(tx: Tx, row_id: int, *, error: str, next_attempt_at: float | None) -> None:
    """Record a failed attempt; drop the row when `next_attempt_at` is None."""
    await tx.execute(
        "UPDATE outbox SET attempts = attempts + 1, last_error = ?,"
        " status = CASE WHEN CAST(? AS DOUBLE PRECISION) IS NULL THEN 'dropped' ELSE 'pending' END,"
        " next_attempt_at = coalesce(?, next_attempt_at) WHERE id = ? AND status = 'pending'",
        (error[:500], next_attempt_at, next_attempt_at, row_id),
    )


async def pending_count(store: Store) -> int:
    row = await store.fetchone("SELECT count(*) FROM outbox WHERE status = 'pending'")
    return int(row[0]) if row else 0


async def last_error(store: Store) -> str | None:
    """The error of the latest exchange whose reflection failed and is not done (still
    retried, or dropped after its attempts)."""
    row = await store.fetchone(
        "SELECT last_error FROM outbox WHERE attempts > 0 AND last_error IS NOT NULL"
        " ORDER BY id DESC LIMIT 1"
    )
    return str(row[0]) if row else None
