"""Read-only queries of the operator's page: the whole bot's figures, by day, by person; then
one thing at a time: people and one person's memories, the last turns with their selections and
plans, stories and their history.

Nothing here writes.
Days are UTC calendar days (SQLite's `date(at, 'unixepoch')`).
"""

from __future__ import annotations

import datetime
import math
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from memory.model import Memory, Reason, Selected, Turn
from memory.store.db import Store
from memory.store.tables.memories import MEMORY_COLUMNS, MEMORY_FROM, from_row
from memory.store.tables.timings import DAY, TurnPlan, blocks_from_json, bucket_top

# The candidate count of a memory and its served ratio, on the aliases of MEMORY_FROM.
CANDIDATES = "(coalesce(b.turns, 0) - coalesce(c.candidate_base, 0))"
SERVED = "coalesce(c.served, 0)"
SEMANTIC = "coalesce(c.semantic, 0)"
RATIO = f"(CASE WHEN {CANDIDATES} > 0 THEN min(1.0, {SERVED} * 1.0 / {CANDIDATES}) END)"
# The proleptic ordinal of 1970-01-01: a Unix day number plus this is a date's ordinal.
EPOCH = datetime.date(1970, 1, 1).toordinal()
# Bins of the served/candidate histogram: [0, 0.1), [0.1, 0.2) ... [0.9, 1.0].
RATIO_BINS = 10


@dataclass(frozen=True, slots=True)
class TurnDay:
    """Answered turns of one day, and how many ran degraded, by why."""

    day: str
    turns: int
    degraded: dict[str, int]


@dataclass(frozen=True, slots=True)
class Latency:
    """Reply latency percentiles (ms, nearest rank) of a day's answered turns, or of all of
    them (day "")."""

    day: str
    p50: float
    p95: float


@dataclass(frozen=True, slots=True)
class ReflectionDay:
    """What the reflections applied on one day did with their candidates: action → count (and
    "replaced": of the merged, those that made a memory's new version), and the rejections by
    reason."""

    day: str
    actions: dict[str, int]
    rejected: dict[str, int]


@dataclass(frozen=True, slots=True)
class OutboxState:
    pending: int
    oldest_pending_at: float | None
    dropped: int


@dataclass(frozen=True, slots=True)
class LanguageFit:
    """What `echo-bot calibrate` read for one embedding model and language."""

    model: str
    language: str
    fit: bool
    margin: float
    threshold: float
    measured_at: float


@dataclass(frozen=True, slots=True)
class TokenFit:
    """The token estimator of one chat model, learned from the backend's counts."""

    model: str
    factor: float
    samples: int
    rejected: int
    updated_at: float


@dataclass(frozen=True, slots=True)
class RecallSplit:
    """Memories by how they come back: never, only by the passes that do not read the message
    (pinned, global, quotas, fallback, rules), or recalled by meaning or keywords at least once."""

    total: int
    never_candidate: int
    never_served: int
    only_without_recall: int
    recalled: int


async def turn_timings(store: Store, since: float) -> tuple[list[TurnDay], list[Latency]]:
    """Answered turns per day since `since` (degraded ones by why), and their reply latency
    percentiles (within 5%): over the whole range first (day ""), then per day."""
    rows = await store.fetchall(
        "SELECT day, degraded, bucket, turns FROM turn_days WHERE day >= ? ORDER BY day, bucket",
        (int(since // DAY),),
    )
    buckets: dict[int, Counter[int]] = defaultdict(Counter)
    why: dict[int, Counter[str]] = defaultdict(Counter)
    for day, degraded, number, turns in rows:
        buckets[int(day)][int(number)] += int(turns)
        if degraded:
            why[int(day)][str(degraded)] += int(turns)
    days = sorted(buckets)
    names = {d: datetime.date.fromordinal(EPOCH + d).isoformat() for d in days}
    counted = [TurnDay(names[d], sum(buckets[d].values()), dict(why[d])) for d in days]
    everything = sum(buckets.values(), Counter[int]())
    latencies = [_latency("", everything)] if everything else []
    latencies += [_latency(names[d], buckets[d]) for d in days]
    return counted, latencies


def _latency(day: str, counts: Counter[int]) -> Latency:
    return Latency(day, percentile(counts, 0.50), percentile(counts, 0.95))


def percentile(counts: Counter[int], share: float) -> float:
    """The nearest-rank percentile of turns counted by latency bucket, as its bucket's upper
    edge: the exact value is at most 5% below it."""
    rank = max(1, math.ceil(round(share * sum(counts.values()), 9)))
    seen = 0
    for number in sorted(counts):
        seen += counts[number]
        if seen >= rank:
            return bucket_top(number)
    raise ValueError("no turn counted")


async def reflection_days(store: Store, since: float) -> list[ReflectionDay]:
    """What the reflections applied since the day of `since` did, per day."""
    rows = await store.fetchall(
        "SELECT day, action, reason, candidates FROM reflection_days WHERE day >= ? ORDER BY day",
        (int(since // DAY),),
    )
    days: dict[int, ReflectionDay] = {}
    for day, action, reason, n in rows:
        name = datetime.date.fromordinal(EPOCH + int(day)).isoformat()
        found = days.setdefault(int(day), ReflectionDay(name, {}, {}))
        found.actions[str(action)] = found.actions.get(str(action), 0) + int(n)
        if action == "merged" and reason == "superseded":  # a memory's new version
            found.actions["replaced"] = int(n)
        if action == "rejected":
            found.rejected[str(reason) or "unknown"] = int(n)
    return list(days.values())


async def outbox_state(store: Store) -> OutboxState:
    """Reflections waiting, since when, and how many were given up (all time)."""
    row = await store.fetchone(
        "SELECT count(*), min(created_at) FROM outbox WHERE status = 'pending'"
    )
    dropped = await store.fetchone("SELECT count(*) FROM outbox WHERE status = 'dropped'")
    return OutboxState(
        int(row[0]) if row else 0,
        float(row[1]) if row and row[1] is not None else None,
        int(dropped[0]) if dropped else 0,
    )


async def vectors_missing(store: Store) -> int:
    """Memories with no vector at all (a stale vector is only known to the running indexer)."""
    row = await store.fetchone(
        "SELECT count(*) FROM memories m WHERE NOT EXISTS"
        " (SELECT 1 FROM embeddings e WHERE e.memory_id = m.id)"
    )
    return int(row[0]) if row else 0


async def language_fits(store: Store) -> list[LanguageFit]:
    rows = await store.fetchall(
        "SELECT model, language, fit, margin, threshold, measured_at FROM model_calibration"
        " ORDER BY model, language"
    )
    return [
        LanguageFit(str(r[0]), str(r[1]), bool(r[2]), float(r[3]), float(r[4]), float(r[5]))
        for r in rows
    ]


async def token_fits(store: Store) -> list[TokenFit]:
    rows = await store.fetchall(
        "SELECT model, factor, samples, rejected, updated_at FROM token_calibration ORDER BY model"
    )
    return [TokenFit(str(r[0]), float(r[1]), int(r[2]), int(r[3]), float(r[4])) for r in rows]


def _where_origin(origin: str | None) -> tuple[str, tuple[str, ...]]:
    return ("WHERE m.origin = ?", (origin,)) if origin is not None else ("", ())


async def served_ratios(store: Store, origin: str | None) -> tuple[list[int], RecallSplit]:
    """How many memories fall in each served/candidate ratio bin (those never a candidate have
    no ratio), and how memories come back: one scan of the counters for both."""
    where, params = _where_origin(origin)
    rows = await store.fetchall(
        f"SELECT CASE WHEN {CANDIDATES} > 0"
        f" THEN min(CAST({RATIO} * {RATIO_BINS} AS INTEGER), {RATIO_BINS - 1}) END AS bin,"
        f" count(*), {_count_if(f'{CANDIDATES} <= 0')}, {_count_if(f'{SERVED} = 0')},"
        f" {_count_if(f'{SERVED} > 0 AND {SEMANTIC} = 0')}, {_count_if(f'{SEMANTIC} > 0')}"
        f" {MEMORY_FROM} {where} GROUP BY bin",
        params,
    )
    bins = [0] * RATIO_BINS
    totals = [0] * 5
    for bin_, *counts in rows:
        if bin_ is not None:
            bins[int(bin_)] = int(counts[0])
        totals = [t + int(c or 0) for t, c in zip(totals, counts, strict=True)]
    return bins, RecallSplit(*totals)


async def never_served(store: Store, origin: str | None, *, limit: int) -> list[Memory]:
    """The memories never served, oldest first."""
    where, params = _where_origin(origin)
    where = f"{where} AND" if where else "WHERE"
    rows = await store.fetchall(
        f"SELECT {MEMORY_COLUMNS} {MEMORY_FROM} {where} {SERVED} = 0"
        " ORDER BY m.created_at, m.id LIMIT ?",
        (*params, limit),
    )
    return [from_row(r) for r in rows]


async def origins(store: Store) -> list[tuple[str, int]]:
    """Where memories were learned (a server id, or 'dm'), with how many, most first."""
    rows = await store.fetchall(
        "SELECT origin, count(*) FROM memories GROUP BY origin ORDER BY count(*) DESC, origin"
    )
    return [(str(r[0]), int(r[1])) for r in rows]


async def reasons_served(store: Store) -> dict[str, int]:
    """Why the memories of the turns still kept (for /why) were selected: reason → count."""
    rows = await store.fetchall("SELECT reason, count(*) FROM turn_selections GROUP BY reason")
    return {str(r[0]): int(r[1]) for r in rows}


def _count_if(condition: str) -> str:
    """How many rows meet `condition` (PostgreSQL does not sum booleans as SQLite does)."""
    return f"sum(CASE WHEN {condition} THEN 1 ELSE 0 END)"


# A person's display name as they last wrote it, anywhere.
_LAST_NAME = (
    "(SELECT author_name FROM messages WHERE user_id = {uid} AND user_id IS NOT NULL"
    " ORDER BY id DESC LIMIT 1)"
)

# The orders a person's memories can be listed in: name → ORDER BY (ties by id).
MEMORY_ORDERS: dict[str, str] = {
    "id": "m.id",
    "created": "m.created_at",
    "updated": "m.updated_at",
    "kind": "m.kind",
    "served": SERVED,
    "candidates": CANDIDATES,
    "ratio": f"coalesce({RATIO}, -1.0)",
}
KINDS = ("fact", "preference", "promise", "episode", "rule")
SCOPES = ("global", "story")


@dataclass(frozen=True, slots=True)
class PersonRow:
    """One person, by the id they are known by (a Discord or terminal id), with every id a
    character keeps them under (memory.character.cast)."""

    user_id: int
    name: str | None
    memories: int
    last_turn_at: float | None
    # (the id, its character): None is the home's, whose id is the person's own.
    ids: tuple[tuple[int, str | None], ...] = ()


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which of a person's memories to list, in which order, which page."""

    kind: str | None = None
    scope: str | None = None
    never_served: bool = False
    text: str = ""
    order: str = "id"
    descending: bool = True
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True, slots=True)
class StoryRow:
    story_id: int
    messages: int
    last_message_at: float | None


@dataclass(frozen=True, slots=True)
class Revision:
    """A former rolling summary of a story."""

    at: float
    summary: str


@dataclass(frozen=True, slots=True)
class StateChange:
    field: str
    delta: float
    at: float
    user_id: int | None


# Each id with memories or turns, the person it stands for, its character and its last turn.
_PERSON_IDS = (
    "SELECT p.user_id, coalesce(c.real_id, p.user_id) AS owner, c.character,"
    " (SELECT max(created_at) FROM turns WHERE user_id = p.user_id) AS last_turn"
    " FROM (SELECT user_id FROM memories UNION SELECT user_id FROM turns) p"
    " LEFT JOIN character_ids c ON c.derived = p.user_id AND c.kind = 'person'"
)


async def people(store: Store, *, limit: int, offset: int) -> tuple[list[PersonRow], int]:
    """One row per person with memories or turns (their ids for every character together),
    the latest turn first; and how many."""
    total = await store.fetchone(f"SELECT count(DISTINCT owner) FROM ({_PERSON_IDS}) ids")
    page = await store.fetchall(
        f"SELECT owner, max(last_turn) AS last FROM ({_PERSON_IDS}) ids GROUP BY owner"
        " ORDER BY last DESC NULLS LAST, owner LIMIT ? OFFSET ?",
        (limit, offset),
    )
    owners = [int(r[0]) for r in page]
    ids: dict[int, list[tuple[int, str | None, float | None]]] = {o: [] for o in owners}
    if owners:
        rows = await store.fetchall(
            f"SELECT user_id, owner, character, last_turn FROM ({_PERSON_IDS}) ids"
            f" WHERE owner IN ({', '.join('?' * len(owners))}) ORDER BY character, user_id",
            tuple(owners),
        )
        for r in rows:
            ids[int(r[1])].append((int(r[0]), r[2], r[3]))
    found = []
    for r in page:
        theirs = ids[int(r[0])]
        latest = max(theirs, key=lambda i: (i[2] is not None, i[2] or 0.0))[0]
        count = await store.fetchone(
            f"SELECT count(*) FROM memories WHERE user_id IN ({', '.join('?' * len(theirs))})",
            tuple(i for i, _, _ in theirs),
        )
        found.append(
            PersonRow(
                int(r[0]),
                await person_name(store, latest),
                int(count[0]) if count else 0,
                r[1],
                tuple((i, key) for i, key, _ in theirs),
            )
        )
    return found, int(total[0]) if total else 0


async def person_name(store: Store, user_id: int) -> str | None:
    row = await store.fetchone(f"SELECT {_LAST_NAME.format(uid='?')}", (user_id,))
    return str(row[0]) if row and row[0] is not None else None


async def names(store: Store, user_ids: Collection[int]) -> dict[int, str]:
    """The display name each of these people last wrote under (those with a message kept)."""
    wanted = sorted(set(user_ids))
    found: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        rows = await store.fetchall(
            "SELECT user_id, author_name FROM messages m WHERE id IN (SELECT max(id) FROM"
            f" messages WHERE user_id IN ({', '.join('?' * len(batch))}) GROUP BY user_id)",
            tuple(batch),
        )
        found.update((int(r[0]), str(r[1])) for r in rows)
    return found


async def owners(store: Store, user_ids: Collection[int]) -> dict[int, int]:
    """The person each of these ids stands for, for those a character derived (the others are
    the person's own)."""
    wanted = sorted(set(user_ids))
    found: dict[int, int] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        rows = await store.fetchall(
            "SELECT derived, real_id FROM character_ids WHERE kind = 'person' AND derived IN"
            f" ({', '.join('?' * len(batch))})",
            tuple(batch),
        )
        found.update((int(r[0]), int(r[1])) for r in rows)
    return found


async def own_story(store: Store, person: int) -> bool:
    """Whether this person (their own id) has talked in a story kept under their own id, for
    any character: the terminal chat's, as a Discord DM's is kept under its channel's id."""
    row = await store.fetchone(
        "SELECT 1 WHERE EXISTS (SELECT 1 FROM messages WHERE story_id = ?"
        " OR story_id IN (SELECT derived FROM character_ids WHERE kind = 'story' AND real_id = ?))"
        " OR EXISTS (SELECT 1 FROM turns WHERE story_id = ?"
        " OR story_id IN (SELECT derived FROM character_ids WHERE kind = 'story' AND real_id = ?))",
        (person, person, person, person),
    )
    return row is not None


async def person_memories(
    store: Store, user_id: int, chosen: MemoryFilter
) -> tuple[list[Memory], int]:
    """One page of a person's memories as filtered and ordered; and how many match."""
    where = ["m.user_id = ?"]
    params: list[object] = [user_id]
    if chosen.kind in KINDS:
        where.append("m.kind = ?")
        params.append(chosen.kind)
    if chosen.scope in SCOPES:
        where.append("m.scope = ?")
        params.append(chosen.scope)
    if chosen.never_served:
        where.append(f"{SERVED} = 0")
    if chosen.text:
        # lower() folds ASCII only: "É" matches only "É".
        where.append("instr(lower(m.text), lower(?)) > 0")
        params.append(chosen.text)
    clause = " AND ".join(where)
    # The counters' joins only when a filter or the order reads them; the page's ids first,
    # then their rows: sorting 50k whole rows (texts) cost 250 ms, their ids 10 (bench/web.py).
    order = MEMORY_ORDERS.get(chosen.order, "m.id")
    joins = MEMORY_FROM if chosen.never_served or not order.startswith("m.") else "FROM memories m"
    total = await store.fetchone(f"SELECT count(*) {joins} WHERE {clause}", params)
    direction = "DESC" if chosen.descending else "ASC"
    ids = await store.fetchall(
        f"SELECT m.id {joins} WHERE {clause}"
        f" ORDER BY {order} {direction}, m.id {direction} LIMIT ? OFFSET ?",
        (*params, chosen.limit, chosen.offset),
    )
    rank = {int(r[0]): i for i, r in enumerate(ids)}
    rows = (
        await store.fetchall(
            f"SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE m.id IN ({', '.join('?' * len(rank))})",
            list(rank),
        )
        if rank
        else []
    )
    found = sorted((from_row(r) for r in rows), key=lambda m: rank[m.id])
    return found, int(total[0]) if total else 0


@dataclass(frozen=True, slots=True)
class Answered:
    """The message a turn answered: the person's last one in the story when the turn ran (it
    is stored before the turn is recorded)."""

    message_id: int
    at: float


# The person's last message in the story when the turn was recorded.
_ANSWERED = (
    "(SELECT {column} FROM messages m WHERE m.user_id = t.user_id AND m.story_id = t.story_id"
    " AND m.role = 'user' AND m.created_at <= t.created_at ORDER BY m.id DESC LIMIT 1)"
)


async def recent_turns(
    store: Store, *, limit: int, user_id: int | None = None
) -> list[tuple[Turn, str, Answered | None]]:
    """The last recorded turns, newest first, each with what it selected (as the memories are
    now, like /why), where it was (a server id, or 'dm') and the message it answered (None:
    no longer stored)."""
    where, params = ("WHERE t.user_id = ?", (user_id,)) if user_id is not None else ("", ())
    rows = await store.fetchall(
        "SELECT t.id, t.user_id, t.story_id, t.origin, t.degraded, t.created_at,"
        f" {_ANSWERED.format(column='m.id')}, {_ANSWERED.format(column='m.created_at')}"
        f" FROM turns t {where} ORDER BY t.id DESC LIMIT ?",
        (*params, limit),
    )
    if not rows:
        return []
    ids = [int(r[0]) for r in rows]
    marks = ", ".join("?" * len(ids))
    chosen = await store.fetchall(
        f"SELECT {MEMORY_COLUMNS}, s.reason, s.score, s.matched, s.turn_id {MEMORY_FROM}"
        " JOIN turn_selections s ON s.memory_id = m.id"
        f" WHERE s.turn_id IN ({marks}) ORDER BY s.turn_id, s.position",
        ids,
    )
    by_turn: dict[int, list[Selected]] = {i: [] for i in ids}
    for r in chosen:
        by_turn[int(r["turn_id"])].append(
            Selected(from_row(r), Reason(r["reason"]), r["score"], tuple(r["matched"].split()))
        )
    turns = [
        Turn(int(r[0]), int(r[1]), int(r[2]), tuple(by_turn[int(r[0])]), bool(r[4]), float(r[5]))
        for r in rows
    ]
    return [
        (t, str(r[3]), None if r[6] is None else Answered(int(r[6]), float(r[7])))
        for t, r in zip(turns, rows, strict=True)
    ]


async def plans(store: Store, turn_ids: Sequence[int]) -> dict[int, TurnPlan]:
    """The recorded context plans of these turns."""
    if not turn_ids:
        return {}
    marks = ", ".join("?" * len(turn_ids))
    rows = await store.fetchall(
        "SELECT turn_id, latency_ms, strategy, tokens, budget, decisions FROM turn_plans"
        f" WHERE turn_id IN ({marks})",
        list(turn_ids),
    )
    return {
        int(r[0]): TurnPlan(
            int(r[0]), float(r[1]), str(r[2]), int(r[3]), int(r[4]), blocks_from_json(str(r[5]))
        )
        for r in rows
    }


async def stories(store: Store, *, limit: int) -> list[StoryRow]:
    """Stories with a history, anchors, positions or state, the latest message first."""
    rows = await store.fetchall(
        "WITH ids AS (SELECT story_id FROM messages UNION SELECT story_id FROM anchors"
        " UNION SELECT story_id FROM positions UNION SELECT story_id FROM story_state"
        " UNION SELECT story_id FROM story_summaries)"
        " SELECT i.story_id, (SELECT count(*) FROM messages WHERE story_id = i.story_id),"
        " (SELECT max(created_at) FROM messages WHERE story_id = i.story_id) AS last"
        " FROM ids i ORDER BY last DESC NULLS LAST, i.story_id LIMIT ?",
        (limit,),
    )
    return [StoryRow(int(r[0]), int(r[1]), r[2]) for r in rows]


async def speakers(store: Store, story_ids: Collection[int]) -> dict[int, list[int]]:
    """The people with a message kept in each of these stories, by id."""
    wanted = sorted(set(story_ids))
    found: dict[int, list[int]] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        rows = await store.fetchall(
            "SELECT DISTINCT story_id, user_id FROM messages WHERE role = 'user' AND story_id IN"
            f" ({', '.join('?' * len(batch))}) ORDER BY story_id, user_id",
            tuple(batch),
        )
        for r in rows:
            found.setdefault(int(r[0]), []).append(int(r[1]))
    return found


async def revisions(store: Store, story_id: int, *, limit: int) -> list[Revision]:
    """The story's former rolling summaries, latest first."""
    rows = await store.fetchall(
        "SELECT at, summary FROM summary_revisions WHERE story_id = ?"
        " ORDER BY at DESC, id DESC LIMIT ?",
        (story_id, limit),
    )
    return [Revision(float(r[0]), str(r[1])) for r in rows]


async def state_changes(store: Store, story_id: int, *, limit: int) -> list[StateChange]:
    """What the reflections moved the story's state by, latest first."""
    rows = await store.fetchall(
        "SELECT field, delta, at, user_id FROM state_changes WHERE story_id = ?"
        " ORDER BY id DESC LIMIT ?",
        (story_id, limit),
    )
    return [StateChange(str(r[0]), float(r[1]), float(r[2]), r[3]) for r in rows]
