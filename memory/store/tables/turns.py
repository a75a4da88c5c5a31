"""Turns: what each turn selected (for /why) and the read-time counters it moves.

A degraded turn is recorded (so /why can say so) but counts nothing: a sleeping embedding server
must not look like ignored memories. A non-degraded turn writes O(selected) rows: its visibility
buckets (at most three), and the served/semantic counters of the memories it selected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.model import Reason, Selected, Turn
from memory.store.db import Store, Tx
from memory.store.queries import erasure
from memory.store.tables import counters, reply_versions
from memory.store.tables.memories import MEMORY_COLUMNS, MEMORY_FROM, from_row, turn_buckets

# Turns kept per (user, story) for /why (at least); older ones are pruned every few turns, to
# keep the statement off most turns.
KEPT_TURNS = 20
PRUNE_EVERY = 16


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """The place of a turn: whose, in which story, where."""

    user_id: int
    story_id: int
    origin: str


async def record(
    store: Store,
    where: TurnRecord,
    selected: Sequence[Selected],
    *,
    degraded: bool,
    now: float,
    exchange_id: str = "",
) -> int:
    """Record a turn's selection and move the counters in a transaction of its own (record_in)."""
    return await store.transact(
        lambda tx: record_in(
            tx, where, selected, degraded=degraded, now=now, exchange_id=exchange_id
        )
    )


async def record_in(
    tx: Tx,
    where: TurnRecord,
    selected: Sequence[Selected],
    *,
    degraded: bool,
    now: float,
    exchange_id: str = "",
) -> int:
    """Record a turn's selection and move the counters; return the turn id, or 0 when the
    turn's own message (`exchange_id`) was erased while the turn ran: nothing is recorded."""
    if exchange_id:
        # An erasure of the message, or of its author, that committed while this turn
        # embedded and scored it: the turn row would keep the person's id, and its keyword
        # hits the words of the message. After the erasure's commit (the lock, shared, on
        # PostgreSQL: erasure.erase), or before it, and then the erasure removes the row.
        await tx.serialize("erasure", shared=True)
        if await erasure.was_erased(tx, exchange_id):
            return 0
    turn_id = await open_in(tx, where, now=now, exchange_id=exchange_id, degraded=degraded)
    await select_in(tx, turn_id, where, selected, degraded=degraded)
    return turn_id


async def open_in(
    tx: Tx, where: TurnRecord, *, now: float, exchange_id: str, degraded: bool = False
) -> int:
    """Insert a turn's row, what it selected to follow (`select_in`); return its id. Stored
    with its message, before the recall (the erasure lock held: see `record_in`), it names
    where the message was said when the turn dies before its reply."""
    turn_id = await tx.execute(
        "INSERT INTO turns (user_id, story_id, origin, degraded, created_at, exchange_id)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (where.user_id, where.story_id, where.origin, int(degraded), now, exchange_id),
    )
    if turn_id % PRUNE_EVERY == 0:
        await tx.execute(
            "DELETE FROM turns WHERE user_id = ? AND story_id = ? AND id <= ?",
            (where.user_id, where.story_id, turn_id - KEPT_TURNS),
        )
    return turn_id


async def select_in(
    tx: Tx,
    turn_id: int,
    where: TurnRecord,
    selected: Sequence[Selected],
    *,
    degraded: bool,
    opened: bool = False,
) -> None:
    """Record what the turn `turn_id` selected and move the counters (a degraded turn counts
    nothing). `opened`: its row was stored before the recall knew whether it ran degraded."""
    await tx.executemany(
        "INSERT INTO turn_selections (turn_id, memory_id, position, reason, score, matched)"
        " SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?2)"
        " AND EXISTS (SELECT 1 FROM turns WHERE id = ?1)",
        [
            (turn_id, s.memory.id, i, s.reason.value, _clip(s.score), " ".join(s.matched))
            for i, s in enumerate(selected)
        ],
    )
    if degraded:
        if opened:
            await tx.execute("UPDATE turns SET degraded = 1 WHERE id = ?", (turn_id,))
        await counters.bump(tx, "degraded_turns")
    else:
        await _count(tx, where, selected)


async def drop_in(tx: Tx, turn_id: int) -> None:
    """Delete a turn's row (its message was erased before the turn selected anything)."""
    await tx.execute("DELETE FROM turns WHERE id = ?", (turn_id,))


def _clip(score: float | None) -> float | None:
    return None if score is None else max(-1.0, min(1.0, score))


# Served by meaning: by the message's cosine (or its keywords), or by the recent conversation's.
_BY_MEANING = (Reason.SEMANTIC, Reason.CONVERSATION)


async def _count(tx: Tx, where: TurnRecord, selected: Sequence[Selected]) -> None:
    await tx.executemany(
        "INSERT INTO turn_buckets (user_id, bucket, turns) VALUES (?, ?, 1)"
        " ON CONFLICT (user_id, bucket) DO UPDATE SET turns = turn_buckets.turns + 1",
        [(where.user_id, b) for b in turn_buckets(where.story_id, where.origin)],
    )
    await tx.executemany(
        "UPDATE memory_counters SET served = served + 1, semantic = semantic + ?"
        " WHERE memory_id = ?",
        [(int(s.reason in _BY_MEANING), s.memory.id) for s in selected],
    )


async def last(store: Store, user_id: int, story_id: int) -> Turn | None:
    """Return this user's last turn in this story, with what it selected (as it is now): for a
    message answered more than once, the turn behind the answer shown."""
    row = await store.fetchone(
        "SELECT id, degraded, created_at, exchange_id FROM turns WHERE user_id = ?"
        " AND story_id = ? ORDER BY id DESC LIMIT 1",
        (user_id, story_id),
    )
    if row is None:
        return None
    shown = (
        await reply_versions.shown_turn(store, str(row["exchange_id"]))
        if row["exchange_id"]
        else None
    )
    if shown is not None and shown != row["id"]:
        behind = await store.fetchone(
            "SELECT id, degraded, created_at, exchange_id FROM turns WHERE id = ?"
            " AND user_id = ? AND story_id = ?",
            (shown, user_id, story_id),
        )
        row = behind or row
    rows = await store.fetchall(
        f"SELECT {MEMORY_COLUMNS}, s.reason, s.score, s.matched {MEMORY_FROM}"
        " JOIN turn_selections s ON s.memory_id = m.id"
        " WHERE s.turn_id = ? AND m.user_id = ? ORDER BY s.position",
        (row["id"], user_id),
    )
    # The selection's own columns follow the memory's (see MEMORY_COLUMNS).
    selected = tuple(
        Selected(from_row(r), Reason(r["reason"]), r["score"], tuple(r["matched"].split()))
        for r in rows
    )
    return Turn(
        id=int(row["id"]),
        user_id=user_id,
        story_id=story_id,
        selected=selected,
        degraded=bool(row["degraded"]),
        created_at=float(row["created_at"]),
        exchange_id=str(row["exchange_id"]),
    )


async def recent_places(store: Store, *, since: float, limit: int) -> list[tuple[int, int, str]]:
    """The (user, story, origin) of turns since `since`, the most recently active first."""
    rows = await store.fetchall(
        "SELECT user_id, story_id, origin FROM turns WHERE created_at >= ?"
        " GROUP BY user_id, story_id, origin ORDER BY max(id) DESC LIMIT ?",
        (since, limit),
    )
    return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]
