"""What each turn cost and how its prompt was planned, for the operator's page.

`turn_timings` holds one row per answered turn (when, how long, why degraded) and nothing about
the person: it outlives the turns pruned for /why, and is itself kept `TIMINGS_DAYS`.
`turn_plans` holds the context plan of a recorded turn (block kinds, keys, statuses, reasons,
tokens; never a text) and goes with its turn.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from memory.store.db import Store, Tx

# The overview shows up to a month; older timings are deleted by the turns that follow.
TIMINGS_DAYS = 31
# Old timings are pruned on one turn in this many, to keep the statement off most turns.
PRUNE_EVERY = 64
DAY = 86_400.0

# Why a turn ran degraded (the CHECK of migration 17 lists the same words).
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
    """Record a turn's timing, and its plan when the turn itself was recorded."""

    async def run(tx: Tx) -> None:
        row_id = await tx.execute(
            "INSERT INTO turn_timings (at, latency_ms, degraded) VALUES (?, ?, ?)",
            (now, max(0.0, latency_ms), degraded),
        )
        if plan is not None and turn_id > 0:
            await tx.execute(
                "INSERT OR REPLACE INTO turn_plans"
                " (turn_id, latency_ms, strategy, tokens, budget, decisions)"
                " SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM turns WHERE id = ?)",
                (turn_id, max(0.0, latency_ms), plan.strategy, plan.tokens, plan.budget,
                 _blocks_json(plan.blocks), turn_id),
            )  # fmt: skip
        if row_id % PRUNE_EVERY == 0:
            await tx.execute("DELETE FROM turn_timings WHERE at < ?", (now - TIMINGS_DAYS * DAY,))

    await store.transact(run)


def _blocks_json(blocks: Sequence[PlannedBlock]) -> str:
    return json.dumps(
        [
            {"kind": b.kind, "key": b.key, "status": b.status, "reason": b.reason,
             "tokens": b.tokens}
            for b in blocks
        ]
    )  # fmt: skip


def blocks_from_json(text: str) -> tuple[PlannedBlock, ...]:
    """Read the blocks `record` stored."""
    return tuple(
        PlannedBlock(str(d["kind"]), str(d["key"]), str(d["status"]), str(d["reason"]),
                     int(d["tokens"]))
        for d in json.loads(text)
    )  # fmt: skip
