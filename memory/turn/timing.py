"""A turn's latency and context plan, recorded for the operator's page with the turn's reply
(in the same transaction: memory.turn.exchanges)."""

from __future__ import annotations

from memory.context.budget import ContextPlan
from memory.store import Tx
from memory.store.tables import timings
from memory.turn.values import Recall


class TurnTimings:
    """Records each turn's latency and plan; the days past timings.TIMINGS_DAYS are deleted
    by this process's first turn of each day (a statement the other turns of the day save)."""

    def __init__(self) -> None:
        self._pruned_day: int | None = None

    async def record_in(
        self, tx: Tx, recalled: Recall, plan: ContextPlan, latency_ms: float, *, now: float
    ) -> None:
        """Record the turn's latency and context plan in `tx`."""
        day = int(now // timings.DAY)
        # Kept even if `tx` rolls back: the next day's first turn deletes what this one left.
        prune, self._pruned_day = day != self._pruned_day, day
        await timings.record_in(
            tx,
            turn_id=recalled.turn_id,
            latency_ms=latency_ms,
            degraded=recalled.why_degraded,
            plan=planned(recalled, plan, latency_ms),
            now=now,
            prune=prune,
        )


def planned(recalled: Recall, plan: ContextPlan, latency_ms: float) -> timings.TurnPlan:
    """The turn's context plan as recorded: no text, what each block was and became."""
    return timings.TurnPlan(
        recalled.turn_id,
        latency_ms,
        plan.strategy,
        plan.tokens,
        plan.budget.prompt,
        tuple(
            timings.PlannedBlock(
                d.block.kind.value, d.block.key, d.status.value, d.reason, d.tokens
            )
            for d in plan.decisions
        ),
    )
