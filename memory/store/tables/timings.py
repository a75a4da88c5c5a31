"""What each turn cost and how its prompt was planned, for the operator's page.

`turn_days` counts answered turns per UTC day, by why they ran degraded and by latency bucket
(5% wide: a percentile read from it is within 5% of the exact one), and nothing about the person:
it outlives the turns pruned for /why and is kept `TIMINGS_DAYS`; reading a month of it costs the
same at ten turns a day as at ten thousand. `turn_plans` holds the context plan of a recorded
turn (block kinds, keys, statuses, reasons, tokens; never a text) and goes with its turn.
`reflection_days` counts what the reflections applied each day did with their candidates.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memory.store.db import Store, Tx

# The overview shows up to a month; older days are deleted by the turns that follow.
TIMINGS_DAYS = 31
# Reflections per day are kept longer: the backfill of migration 16 brings a year at most.
KEPT_DAYS = 366
DAY = 86_400.0
# Latency bucket b holds the turns from GROWTH**b ms to GROWTH**(b + 1) ms (under 1 ms: 0).
GROWTH = 1.05

# Why a turn ran degraded (the CHECK of migration 16 lists the same words).
EMBEDDING = "embedding"  # the turn's own embedding did not come (timeout, server error)
VECTORS = "vectors"  # the stored vectors could not be scored against it (another dimension)


@dataclass(frozen=True, slots=True)
class PlannedBlock:
    """One block of a turn's prompt as planned: no text, only what it was and what happened."""

    kind: str
    key: str
    status: str
    reason: str
    tokens: int


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """A turn's context plan as recorded."""

    turn_id: int
    latency_ms: float
    strategy: str
    tokens: int
    budget: int
    blocks: tuple[PlannedBlock, ...]


async def record(
    store: Store,
    *,
    turn_id: int,
    latency_ms: float,
    degraded: str,
    plan: TurnPlan | None,
    now: float,
) -> None:
    """Count an answered turn in its day, in a transaction of its own (record_in, pruning)."""
    await store.transact(
        lambda tx: record_in(
            tx, turn_id=turn_id, latency_ms=latency_ms, degraded=degraded, plan=plan, now=now
        )
    )


async def record_in(
    tx: Tx,
    *,
    turn_id: int,
    latency_ms: float,
    degraded: str,
    plan: TurnPlan | None,
    now: float,
    prune: bool = True,
) -> None:
    """Count an answered turn in its day (latency, why degraded); record its plan when the turn
    itself was recorded. `prune`: delete the days older than TIMINGS_DAYS too (a turn that
    knows it was done today already leaves it out)."""
    day = int(now // DAY)
    await tx.execute(
        "INSERT INTO turn_days (day, degraded, bucket, turns) VALUES (?, ?, ?, 1)"
        " ON CONFLICT (day, degraded, bucket) DO UPDATE SET turns = turn_days.turns + 1",
        (day, degraded, bucket(latency_ms)),
    )
    if prune:
        # A seek on the primary key.
        await tx.execute("DELETE FROM turn_days WHERE day < ?", (day - TIMINGS_DAYS,))
    if plan is None or turn_id <= 0:
        return
    # Only for a turn still recorded (its plan goes with it): asked in the same statement.
    await tx.execute(
        "INSERT INTO turn_plans (turn_id, latency_ms, strategy, tokens, budget, decisions)"
        " SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM turns WHERE id = ?1)"
        " ON CONFLICT (turn_id) DO UPDATE SET"
        " latency_ms = excluded.latency_ms, strategy = excluded.strategy,"
        " tokens = excluded.tokens, budget = excluded.budget,"
        " decisions = excluded.decisions",
        (
            turn_id,
            max(0.0, latency_ms),
            plan.strategy,
            plan.tokens,
            plan.budget,
            _blocks_json(plan.blocks),
        ),
    )


async def count_reflection(tx: Tx, outcomes: Sequence[tuple[str, str]], *, now: float) -> None:
    """Count what one applied reflection did with its candidates (action, rejection reason or
    "") in its UTC day."""
    amounts = Counter(outcomes)
    await tx.executemany(
        "INSERT INTO reflection_days (day, action, reason, candidates) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (day, action, reason) DO UPDATE SET"
        " candidates = reflection_days.candidates + excluded.candidates",
        [(int(now // DAY), action, reason, n) for (action, reason), n in sorted(amounts.items())],
    )
    await tx.execute("DELETE FROM reflection_days WHERE day < ?", (int(now // DAY) - KEPT_DAYS,))


def bucket(latency_ms: float) -> int:
    """The latency bucket of a turn that took `latency_ms`."""
    return 0 if latency_ms < GROWTH else int(math.log(latency_ms) / math.log(GROWTH))


def bucket_top(number: int) -> float:
    """The upper edge of a latency bucket (ms): a percentile read from buckets is given as this."""
    return float(GROWTH ** (number + 1))


def _blocks_json(blocks: Sequence[PlannedBlock]) -> str:
    return json.dumps(
        [
            {
                "kind": b.kind,
                "key": b.key,
                "status": b.status,
                "reason": b.reason,
                "tokens": b.tokens,
            }
            for b in blocks
        ]
    )


def blocks_from_json(text: str) -> tuple[PlannedBlock, ...]:
    """Read the blocks `record` stored."""
    return tuple(
        PlannedBlock(
            str(d["kind"]), str(d["key"]), str(d["status"]), str(d["reason"]), int(d["tokens"])
        )
        for d in json.loads(text)
    )
