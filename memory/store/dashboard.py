"""Read-only queries of the operator's page: the whole bot's figures, by day, by person.

Nothing here writes. The people and turns queries (and the story ones) are in dashboard_detail.
Days are UTC calendar days (SQLite's `date(at, 'unixepoch')`).
"""

from __future__ import annotations

import datetime
import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from memory.model import Memory
from memory.store.db import Store
from memory.store.memories import MEMORY_COLUMNS, MEMORY_FROM, from_row
from memory.store.timings import DAY, bucket_top

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
