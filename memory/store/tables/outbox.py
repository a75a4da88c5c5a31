"""The reflection outbox: exchanges waiting for their reflection. It survives restarts.

Every process on the database may drain it. A process `claim`s one due row at a time, in a
write transaction: the row then carries the claim's token and the end of its lease. The holder
completes it (`mark_done`, `mark_failed`) or gives it back (`release`), each after checking in
the same transaction that it still `holds` it; a holder killed mid-reflection leaves its row to
the next claim once the lease has ended, and that claim counts an attempt.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memory.model import Exchange
from memory.store.db import Row, Store, Tx
from memory.store.tables import counters

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """A pending reflection and how many times it was tried."""

    id: int
    exchange: Exchange
    attempts: int


@dataclass(frozen=True, slots=True)
class Lease:
    """A claimed row: who holds it (one claim's token) and until when."""

    row: OutboxRow
    holder: str
    until: float


# Reflections one person may have waiting. A normal conversation leaves one or two behind the
# worker; twenty is a flood, whose oldest exchanges are dropped (counted) rather than let one
# person's backlog delay everyone's memories for hours.
BACKLOG_PER_PERSON = 20


async def enqueue(
    tx: Tx,
    exchange: Exchange,
    *,
    now: float,
    backlog: int = BACKLOG_PER_PERSON,
    due: float | None = None,
) -> int:
    """Queue the reflection of an exchange (once per exchange id), due at `due` (None: now: the
    reply's versions may change until then, see `replace_reply`). Past `backlog` pending rows
    of this person (their oldest, perhaps being reflected, not counted), drop the oldest of the
    others but those some process holds; return how many were dropped (never another
    person's)."""
    await tx.execute(
        "INSERT INTO outbox (exchange_id, user_id, story_id, origin, user_name, user_message,"
        " reply, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (exchange_id) DO NOTHING",
        (
            exchange.exchange_id,
            exchange.user_id,
            exchange.story_id,
            exchange.origin,
            exchange.user_name,
            exchange.user_message,
            exchange.reply,
            now if due is None else due,
            now,
        ),
    )
    # The oldest pending row is kept: the worker takes each person's oldest first, so it may be
    # reflecting on it right now (dropping it would count as lost a reflection about to land).
    await tx.execute(
        "UPDATE outbox SET status = 'dropped', last_error = 'over the backlog of this person'"
        " WHERE id IN (SELECT id FROM outbox WHERE user_id = ?1 AND status = 'pending'"
        " ORDER BY id DESC LIMIT -1 OFFSET ?2)"
        " AND id != (SELECT min(id) FROM outbox WHERE user_id = ?1 AND status = 'pending')"
        " AND (lease_until IS NULL OR lease_until <= ?3)",
        (exchange.user_id, max(0, backlog), now),
    )
    return await tx.changes()


async def replace_reply(tx: Tx, exchange_id: str, reply: str, *, due: float) -> bool:
    """Give a pending reflection the reply's version now shown, due no sooner than `due` (the
    versions settle first). A reflection of it under way loses its lease: its result, made from
    the other version, is discarded when it tries to apply it (`holds`), and the row is reflected
    again. Return whether a pending row was found."""
    await tx.execute(
        "UPDATE outbox SET reply = ?1, leased_by = NULL, lease_until = NULL, next_attempt_at ="
        " CASE WHEN next_attempt_at > ?2 THEN next_attempt_at ELSE ?2 END"
        " WHERE exchange_id = ?3 AND status = 'pending'",
        (reply, due, exchange_id),
    )
    return bool(await tx.changes())


async def settle_place(tx: Tx, user_id: int, story_id: int, *, now: float) -> None:
    """The person spoke again here: their earlier replies' versions settle, and the reflections
    waiting for that are due now (a retry's backoff is left alone)."""
    await tx.execute(
        "UPDATE outbox SET next_attempt_at = ?1 WHERE user_id = ?2 AND story_id = ?3"
        " AND status = 'pending' AND attempts = 0 AND next_attempt_at > ?1",
        (now, user_id, story_id),
    )


_COLUMNS = "id, exchange_id, user_id, story_id, origin, user_name, user_message, reply, attempts"


def _row(row: Row) -> OutboxRow:
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


async def claimable(store: Store, *, now: float) -> bool:
    """Whether some row may be claimable now (a read: an idle worker takes no write lock)."""
    row = await store.fetchone(
        "SELECT 1 FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?1"
        " AND (lease_until IS NULL OR lease_until <= ?1) LIMIT 1",
        (now,),
    )
    return row is not None


async def get(store: Store, exchange_id: str) -> OutboxRow | None:
    """Return the pending row of this exchange, if any."""
    row = await store.fetchone(
        f"SELECT {_COLUMNS} FROM outbox WHERE exchange_id = ? AND status = 'pending'",
        (exchange_id,),
    )
    return _row(row) if row else None


# The rows of a person or a story are reflected one at a time, in order, as by one process: a
# reflection reads the story's summary, anchors and positions that the one before it writes.
_CLAIMABLE = (
    "WITH busy AS (SELECT user_id, story_id FROM outbox"
    " WHERE lease_until > ?1 AND status = 'pending')"
    f" SELECT {_COLUMNS}, leased_by FROM (SELECT *, row_number() OVER"
    " (PARTITION BY user_id ORDER BY next_attempt_at, id) AS place,"
    " min(next_attempt_at) OVER (PARTITION BY user_id) AS first_due"
    " FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?1)"
    " WHERE (lease_until IS NULL OR lease_until <= ?1)"
    " AND user_id NOT IN (SELECT user_id FROM busy)"
    " AND story_id NOT IN (SELECT story_id FROM busy)"
)


async def claim(
    tx: Tx, *, holder: str, now: float, lease: float, max_attempts: int
) -> Lease | None:
    """Claim the next due row for `holder` (one claim's token) until `now + lease`, or None.

    Claimable: pending, its next attempt due, no live lease on it, and no live lease on
    another row of the same person or the same story. People are taken in turn as in `due`.
    A row taken over from an expired lease counts a failed attempt (its holder died or hung),
    and one whose attempts that takes to `max_attempts` is dropped, counted: a row that kills
    every process that reflects on it does not kill them forever. Runs in one write
    transaction, alone: SQLite's single writer serialises the claims of every process, an
    advisory lock held to the commit does on PostgreSQL (a claim reads then writes, and a row
    lock would not stop two processes from taking two rows of one person).
    """
    await tx.serialize("outbox")
    await tx.execute(
        "UPDATE outbox SET status = 'dropped', attempts = attempts + 1, last_error = ?,"
        " leased_by = NULL, lease_until = NULL"
        " WHERE lease_until <= ? AND status = 'pending' AND attempts + 1 >= ?",
        (LEASE_EXPIRED, now, max_attempts),
    )
    dropped = await tx.changes()
    if dropped:
        await counters.bump(tx, "reflection_failed:LeaseExpired", dropped)
        await counters.bump(tx, "reflection_dropped_after_retries:LeaseExpired", dropped)
        log.error("%d reflections dropped: their lease expired on the last attempt", dropped)
    for _ in range(_CLAIM_TRIES):
        row = await tx.fetchone(
            f"{_CLAIMABLE} ORDER BY place, first_due, user_id, next_attempt_at, id LIMIT 1",
            (now,),
        )
        if row is None:
            return None
        taken = await _lease(tx, row, holder=holder, now=now, lease=lease)
        if taken is not None:
            return taken
    return None


# A row read as claimable may be completed meanwhile by the transaction of its expired lease's
# holder (PostgreSQL: that transaction does not take the claims' lock); the claim then reads
# again, a few times at most.
_CLAIM_TRIES = 3


async def claim_exchange(
    tx: Tx, exchange_id: str, *, holder: str, now: float, lease: float
) -> Lease | None:
    """Claim this exchange's row for `holder` if it is pending and nobody holds it (due or
    not: the terminal reflects right away), or None."""
    row = await tx.fetchone(
        f"SELECT {_COLUMNS}, leased_by FROM outbox WHERE exchange_id = ? AND status = 'pending'"
        " AND (lease_until IS NULL OR lease_until <= ?)",
        (exchange_id, now),
    )
    return None if row is None else await _lease(tx, row, holder=holder, now=now, lease=lease)


async def _lease(tx: Tx, row: Row, *, holder: str, now: float, lease: float) -> Lease | None:
    """Lease `row` as it was read, or None when it changed since (on PostgreSQL another
    process's transaction may complete it or claim it between the read and this write: the
    update waits for that transaction, then finds the row no longer as read)."""
    taken_over = row["leased_by"] is not None
    await tx.execute(
        "UPDATE outbox SET leased_by = ?, lease_until = ?,"
        " attempts = attempts + ?, last_error = CASE WHEN ? THEN ? ELSE last_error END"
        " WHERE id = ? AND status = 'pending' AND leased_by IS ?",
        (
            holder,
            now + lease,
            int(taken_over),
            int(taken_over),
            LEASE_EXPIRED,
            row["id"],
            row["leased_by"],
        ),
    )
    if not await tx.changes():
        return None
    claimed = _row(row)
    if taken_over:
        claimed = OutboxRow(claimed.id, claimed.exchange, claimed.attempts + 1)
        await counters.bump(tx, "reflection_failed:LeaseExpired")
        log.warning(
            "exchange %s taken over after the lease of %s expired",
            claimed.exchange.exchange_id,
            row["leased_by"],
        )
    return Lease(claimed, holder, now + lease)


LEASE_EXPIRED = "lease expired: its process died or hung"


async def holds(tx: Tx, lease: Lease) -> bool:
    """Whether `lease` still holds its row: pending and claimed by nobody since (an expired
    lease nobody took over still holds)."""
    # Locked to the commit on PostgreSQL: a claim cannot take the row over between this check
    # and the completion it vouches for (its update waits, then finds the row done).
    row = await tx.fetchone(
        "SELECT 1 FROM outbox WHERE id = ? AND status = 'pending' AND leased_by = ?"
        + tx.for_update(),
        (lease.row.id, lease.holder),
    )
    return row is not None


async def release(tx: Tx, lease: Lease) -> None:
    """Give a claimed row back unchanged (its holder stops): the next claim takes it at once."""
    await tx.execute(
        "UPDATE outbox SET leased_by = NULL, lease_until = NULL WHERE id = ? AND leased_by = ?",
        (lease.row.id, lease.holder),
    )


async def mark_done(tx: Tx, row_id: int) -> None:
    """Record that an exchange was reflected; its row keeps ids only (the exchange itself is
    in the history, as long as the history keeps it)."""
    await tx.execute(
        "UPDATE outbox SET status = 'done', last_error = NULL, user_name = '', user_message = '',"
        " reply = '', leased_by = NULL, lease_until = NULL WHERE id = ?",
        (row_id,),
    )


async def set_aside(tx: Tx, exchange_id: str) -> None:
    """Mark an exchange's waiting row done unreflected, its texts blanked (kept off the record);
    a row a worker holds is left to it (the worker finds the mark when it writes)."""
    await tx.execute(
        "UPDATE outbox SET status = 'done', last_error = NULL, user_name = '', user_message = '',"
        " reply = '' WHERE exchange_id = ? AND status = 'pending' AND leased_by IS NULL",
        (exchange_id,),
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
        " next_attempt_at = coalesce(?, next_attempt_at), leased_by = NULL, lease_until = NULL"
        " WHERE id = ? AND status = 'pending'",
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
