"""Follow-ups (schema 37): who asked for them, the ones planned from dated memories, and the
lease a process holds on one while it writes and posts it.

The lease is the outbox's (memory.store.tables.outbox): a process `claim`s one due row in a
write transaction serialised across processes; the row then carries the claim's token and the
end of its lease. The holder checks in each later transaction that it still `holds` it. A row
whose memory is forgotten is gone (the foreign key cascades), so its holder finds nothing to
hold and sends nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from memory.store.db import Row, Store, Tx
from memory.store.tables import counters

# What a follow-up may come back to: the kinds of memories that hold events and promises (a
# preference or a rule has no day to come back to).
KINDS = ("fact", "promise", "episode")


@dataclass(frozen=True, slots=True)
class DatedRow:
    """A memory with a day it means, where it was said, and who said it (real ids)."""

    memory_id: int
    person_id: int
    user_id: int
    character: str | None
    kind: str
    origin: str
    first_day: date
    last_day: date
    said_at: float
    touched_at: float
    story_id: int | None
    channel_id: int | None


@dataclass(frozen=True, slots=True)
class Planned:
    """One follow-up row."""

    id: int
    memory_id: int
    user_id: int
    person_id: int
    story_id: int
    channel_id: int
    origin: str
    character: str
    event_day: date
    said_at: float
    due_at: float
    status: str
    reason: str
    attempts: int
    sent_at: float | None


@dataclass(frozen=True, slots=True)
class Lease:
    """A claimed follow-up: who holds it (one claim's token) and until when."""

    row: Planned
    holder: str
    until: float


def exchange_id(followup_id: int) -> str:
    """The id a sent follow-up's line is kept under in the history ("…:reply") and its posts."""
    return f"followup:{followup_id}"


_COLUMNS = (
    "id, memory_id, user_id, person_id, story_id, channel_id, origin, character, event_day,"
    " said_at, due_at, status, reason, attempts, sent_at"
)


def _planned(r: Row) -> Planned:
    return Planned(
        int(r["id"]),
        int(r["memory_id"]),
        int(r["user_id"]),
        int(r["person_id"]),
        int(r["story_id"]),
        int(r["channel_id"]),
        str(r["origin"]),
        str(r["character"]),
        date.fromisoformat(str(r["event_day"])),
        float(r["said_at"]),
        float(r["due_at"]),
        str(r["status"]),
        str(r["reason"]),
        int(r["attempts"]),
        None if r["sent_at"] is None else float(r["sent_at"]),
    )


async def choice(db: Store | Tx, user_id: int) -> bool | None:
    """The person's own choice (None: they made none)."""
    row = await db.fetchone("SELECT enabled FROM followup_choices WHERE user_id = ?", (user_id,))
    return None if row is None else bool(row[0])


async def choices(db: Store | Tx, user_ids: Sequence[int]) -> dict[int, bool]:
    """The choices these people made (those who made none are absent)."""
    found: dict[int, bool] = {}
    for user_id in set(user_ids):
        chosen = await choice(db, user_id)
        if chosen is not None:
            found[user_id] = chosen
    return found


async def choose(tx: Tx, user_id: int, enabled: bool, *, now: float) -> int:
    """Record the person's choice; turned off, what was planned for them is dropped (return
    how many)."""
    await tx.execute(
        "INSERT INTO followup_choices (user_id, enabled, updated_at) VALUES (?, ?, ?)"
        " ON CONFLICT (user_id) DO UPDATE SET enabled = excluded.enabled,"
        " updated_at = excluded.updated_at",
        (user_id, int(enabled), now),
    )
    if enabled:
        return 0
    await tx.execute(
        "UPDATE followups SET status = 'dropped', reason = 'off', leased_by = NULL,"
        " lease_until = NULL WHERE user_id = ? AND status = 'planned'",
        (user_id,),
    )
    return await tx.changes()


async def forget_person(tx: Tx, user_id: int) -> None:
    """Erase everything kept of a person's follow-ups, their choice too."""
    await tx.execute("DELETE FROM followups WHERE user_id = ?", (user_id,))
    await tx.execute("DELETE FROM followup_choices WHERE user_id = ?", (user_id,))


async def dated(db: Store | Tx, *, said_since: float, last_day_from: date) -> list[DatedRow]:
    """The memories a follow-up may be planned for: of a kind that holds events, said since
    `said_since`, meaning a day on or after `last_day_from`, with none planned yet; each with
    where it was first said (the exchange that created it) and the real ids behind it."""
    kinds = ", ".join(f"'{k}'" for k in KINDS)
    rows = await db.fetchall(
        "SELECT m.id, m.user_id, m.kind, m.origin, m.created_at, d.first_day, d.last_day,"
        " m.updated_at, (SELECT max(e.at) FROM memory_events e WHERE e.memory_id = m.id)"
        " AS confirmed_at,"
        " (SELECT h.story_id FROM memory_events e JOIN messages h ON h.source_id = e.exchange_id"
        " AND h.role = 'user' WHERE e.memory_id = m.id AND e.action = 'created'"
        " ORDER BY e.at, e.id LIMIT 1) AS story_id,"
        " coalesce(p.real_id, m.user_id) AS real_user, p.character"
        " FROM memories m JOIN memory_dates d ON d.memory_id = m.id"
        " LEFT JOIN character_ids p ON p.derived = m.user_id AND p.kind = 'person'"
        f" WHERE m.kind IN ({kinds}) AND m.created_at >= ? AND d.last_day >= ?"
        " AND NOT EXISTS (SELECT 1 FROM followups f WHERE f.memory_id = m.id)"
        " ORDER BY m.id, d.last_day DESC",
        (said_since, last_day_from.isoformat()),
    )
    out: list[DatedRow] = []
    seen: set[int] = set()
    for r in rows:
        memory_id = int(r[0])
        if memory_id in seen:  # the latest day a memory means is the one come back to
            continue
        seen.add(memory_id)
        story_id = None if r["story_id"] is None else int(r["story_id"])
        out.append(
            DatedRow(
                memory_id=memory_id,
                person_id=int(r[1]),
                user_id=int(r["real_user"]),
                character=None if r["character"] is None else str(r["character"]),
                kind=str(r[2]),
                origin=str(r[3]),
                first_day=date.fromisoformat(str(r[5])),
                last_day=date.fromisoformat(str(r[6])),
                said_at=float(r[4]),
                touched_at=max(float(r["updated_at"]), float(r["confirmed_at"] or 0.0)),
                story_id=story_id,
                channel_id=None if story_id is None else await _real_story(db, story_id),
            )
        )
    return out


async def _real_story(db: Store | Tx, story_id: int) -> int:
    row = await db.fetchone(
        "SELECT real_id FROM character_ids WHERE derived = ? AND kind = 'story'", (story_id,)
    )
    return int(row[0]) if row else story_id


async def plan(
    tx: Tx,
    rows: Sequence[tuple[DatedRow, float]],
    *,
    character: str,
    now: float,
) -> int:
    """Plan a follow-up of each (memory, due time) by `character` unless one is planned for
    that memory already (by another process meanwhile); return how many were added."""
    added = 0
    for r, due_at in rows:
        if r.story_id is None or r.channel_id is None:
            continue
        await tx.execute(
            "INSERT INTO followups (memory_id, user_id, person_id, story_id, channel_id, origin,"
            " character, event_day, said_at, due_at, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO NOTHING",
            (
                r.memory_id,
                r.user_id,
                r.person_id,
                r.story_id,
                r.channel_id,
                r.origin,
                r.character or character,
                r.last_day.isoformat(),
                r.said_at,
                due_at,
                now,
            ),
        )
        added += await tx.changes()
    return added


async def person_of(db: Store | Tx, exchange: str) -> int | None:
    """The person a follow-up's line was for (the id their memories are kept under), by the id
    the line is kept under (`exchange_id`); None when it names no follow-up kept."""
    kind, _, number = exchange.partition(":")
    if kind != "followup" or not (number.isascii() and number.isdigit()):
        return None
    row = await db.fetchone("SELECT person_id FROM followups WHERE id = ?", (int(number),))
    return int(row[0]) if row else None


async def sent_of(tx: Tx, person_id: int, memory_ids: Sequence[int]) -> list[int]:
    """The follow-ups of these memories of a person (the id the memories are kept under) that
    were posted, or began to be: each may have left a line in the history."""
    if not memory_ids:
        return []
    rows = await tx.fetchall(
        "SELECT id FROM followups WHERE person_id = ? AND status IN ('posting', 'sent')"
        f" AND memory_id IN ({', '.join('?' * len(memory_ids))}) ORDER BY id",
        [person_id, *memory_ids],
    )
    return [int(r[0]) for r in rows]


async def of_person(db: Store | Tx, user_id: int) -> list[Planned]:
    """The person's follow-ups planned, being sent and sent, soonest due first."""
    rows = await db.fetchall(
        f"SELECT {_COLUMNS} FROM followups WHERE user_id = ? AND status IN"
        " ('planned', 'posting', 'sent') ORDER BY status <> 'planned', due_at, id",
        (user_id,),
    )
    return [_planned(r) for r in rows]


async def get(db: Store | Tx, followup_id: int) -> Planned | None:
    row = await db.fetchone(f"SELECT {_COLUMNS} FROM followups WHERE id = ?", (followup_id,))
    return _planned(row) if row else None


async def last_sent(db: Store | Tx, user_id: int, story_id: int) -> Planned | None:
    """The follow-up last sent to this person in this story, if any."""
    row = await db.fetchone(
        f"SELECT {_COLUMNS} FROM followups WHERE user_id = ? AND story_id = ?"
        " AND status = 'sent' ORDER BY sent_at DESC, id DESC LIMIT 1",
        (user_id, story_id),
    )
    return _planned(row) if row else None


async def drop(tx: Tx, user_id: int, followup_id: int, *, reason: str) -> bool:
    """Drop one of the person's planned follow-ups; False when none of theirs is planned with
    this id (another person's answers like a missing one)."""
    await tx.execute(
        "UPDATE followups SET status = 'dropped', reason = ?, leased_by = NULL,"
        " lease_until = NULL WHERE id = ? AND user_id = ? AND status = 'planned'",
        (reason, followup_id, user_id),
    )
    return await tx.changes() > 0


async def claim(
    tx: Tx, *, holder: str, now: float, today: date, lease: float, only: int | None = None
) -> Lease | None:
    """Claim the follow-up due first for `holder` until `now + lease`, or None.

    Claimable: planned, due, no live lease on it, and nothing else of its person's being sent
    (a live lease, or posting) or sent `today` (the character's day): one a day to a person.
    `only`: this person's alone (the terminal shows its own person's).
    Serialised across processes like the outbox's claims (`Tx.serialize`); a row taken over
    from an expired lease counts an attempt (its holder died or hung)."""
    await tx.serialize("followups")
    row = await tx.fetchone(
        f"SELECT {_COLUMNS}, leased_by FROM followups f WHERE status = 'planned'"
        " AND due_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)"
        " AND NOT EXISTS (SELECT 1 FROM followups o WHERE o.user_id = f.user_id AND o.id <> f.id"
        " AND (o.sent_day = ?2 OR o.status = 'posting'"
        " OR (o.status = 'planned' AND o.lease_until > ?1)))"
        + ("" if only is None else " AND f.user_id = ?3")
        + " ORDER BY due_at, id LIMIT 1",
        (now, today.isoformat()) + (() if only is None else (only,)),
    )
    if row is None:
        return None
    taken_over = row["leased_by"] is not None
    await tx.execute(
        "UPDATE followups SET leased_by = ?, lease_until = ?, attempts = attempts + ?"
        " WHERE id = ? AND status = 'planned'",
        (holder, now + lease, int(taken_over), row["id"]),
    )
    if not await tx.changes():
        return None
    if taken_over:
        await counters.bump(tx, "followup_lease_expired")
    claimed = _planned(row)
    return Lease(claimed, holder, now + lease)


async def holds(tx: Tx, lease: Lease, *, status: str = "planned") -> bool:
    """Whether `lease` still holds its row (in `status`): not forgotten, dropped or taken."""
    row = await tx.fetchone(
        "SELECT 1 FROM followups WHERE id = ? AND status = ? AND leased_by = ?" + tx.for_update(),
        (lease.row.id, status, lease.holder),
    )
    return row is not None


async def release(tx: Tx, lease: Lease, *, due_at: float, failed: bool) -> None:
    """Give a claimed row back, due again at `due_at` (a failed attempt counted or not)."""
    await tx.execute(
        "UPDATE followups SET leased_by = NULL, lease_until = NULL, due_at = ?,"
        " attempts = attempts + ? WHERE id = ? AND leased_by = ? AND status = 'planned'",
        (due_at, int(failed), lease.row.id, lease.holder),
    )


async def posting(tx: Tx, lease: Lease, *, day: date, now: float, until: float) -> None:
    """Mark a held row as being posted (from now on it is never posted again, even if its
    holder dies before recording the post) and counted for the person's `day`."""
    await tx.execute(
        "UPDATE followups SET status = 'posting', sent_day = ?, sent_at = ?, lease_until = ?"
        " WHERE id = ? AND leased_by = ?",
        (day.isoformat(), now, until, lease.row.id, lease.holder),
    )


async def finish(tx: Tx, lease: Lease, *, status: str, reason: str = "") -> bool:
    """End a held row: 'sent', 'dropped' (with its reason) or 'blocked'; False when the row is
    gone (its memory was forgotten meanwhile)."""
    day = "sent_day" if status == "sent" else "NULL"
    sent_at = "sent_at" if status == "sent" else "NULL"
    await tx.execute(
        f"UPDATE followups SET status = ?, reason = ?, sent_day = {day}, sent_at = {sent_at},"
        " leased_by = NULL, lease_until = NULL WHERE id = ? AND leased_by = ?",
        (status, reason, lease.row.id, lease.holder),
    )
    return await tx.changes() > 0


async def settle_stale(tx: Tx, *, now: float) -> int:
    """Rows left 'posting' by a process that died after it began posting: counted sent and
    never posted again (a post may be out; twice is worse than a record missed)."""
    await tx.execute(
        "UPDATE followups SET status = 'sent', reason = 'unconfirmed', leased_by = NULL,"
        " lease_until = NULL WHERE status = 'posting' AND lease_until <= ?",
        (now,),
    )
    return await tx.changes()


async def counts(db: Store | Tx) -> dict[str, int]:
    """How many follow-ups there are by status."""
    rows = await db.fetchall("SELECT status, count(*) FROM followups GROUP BY status")
    return {str(r[0]): int(r[1]) for r in rows}


async def touched_at(db: Store | Tx, memory_id: int) -> float:
    """The last time a person's words touched this memory (written, reworded, confirmed)."""
    row = await db.fetchone(
        "SELECT m.updated_at, (SELECT max(e.at) FROM memory_events e WHERE e.memory_id = m.id)"
        " FROM memories m WHERE m.id = ?",
        (memory_id,),
    )
    return 0.0 if row is None else max(float(row[0]), float(row[1] or 0.0))


async def last_spoke(db: Store | Tx, person_id: int, story_id: int) -> float:
    """When the person last wrote in this story (0: never)."""
    row = await db.fetchone(
        "SELECT max(created_at) FROM messages WHERE story_id = ? AND user_id = ? AND role = 'user'",
        (story_id, person_id),
    )
    return float(row[0]) if row and row[0] is not None else 0.0


async def blocked(db: Store | Tx, user_id: int) -> bool:
    """Whether a DM follow-up to this person was refused before."""
    row = await db.fetchone(
        "SELECT 1 FROM followups WHERE user_id = ? AND status = 'blocked' LIMIT 1", (user_id,)
    )
    return row is not None
