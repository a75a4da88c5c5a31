"""A turn's latency and context plan, recorded for the operator's page (never failing the
turn that records it)."""

from __future__ import annotations

import logging

from memory.context.budget import ContextPlan
from memory.errors import StoreError, unexpected
from memory.store import Store
from memory.store.tables import timings
from memory.turn.values import Recall

log = logging.getLogger(__name__)


async def record_timing(
    store: Store, recalled: Recall, plan: ContextPlan, latency_ms: float, *, now: float
) -> None:
    """Record the turn's latency and context plan for the operator's page; never raises."""
    planned = timings.TurnPlan(
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
    try:
        await timings.record(
            store,
            turn_id=recalled.turn_id,
            latency_ms=latency_ms,
            degraded=recalled.why_degraded,
            plan=planned,
            now=now,
        )
    except StoreError as exc:
        log.warning("turn timing not recorded (%s)", exc)
    except Exception as exc:
        log.error("turn timing not recorded: %s", unexpected(exc))
