"""Bounded state: small numeric deltas proposed by the reflection, clamped by the code."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from memory.model import Source
from memory.store import Tx
from memory.store.tables import story_state

# Declared fields: (lowest, highest, largest change one reflection may make, starting value).
DEFAULT_FIELDS: Mapping[str, tuple[float, float, float, float]] = {
    "mood": (-1.0, 1.0, 0.2, 0.0),
    "closeness": (0.0, 1.0, 0.1, 0.0),
}


async def apply_deltas(
    tx: Tx,
    story_id: int,
    deltas: Mapping[str, float],
    *,
    now: float,
    source: Source,
    fields: Mapping[str, tuple[float, float, float, float]] = DEFAULT_FIELDS,
) -> Counter[str]:
    """Add each declared field's delta (clamped) to the story's state, logging the change with
    the exchange it came from; count unknown fields."""
    done: Counter[str] = Counter()
    for name, delta in deltas.items():
        declared = fields.get(name.casefold())
        if declared is None:
            done["state_unknown_field"] += 1
            continue
        low, high, step, start = declared
        field = name.casefold()
        stored = await story_state.value(tx, story_id, field)
        current = start if stored is None else stored
        value = min(high, max(low, current + min(step, max(-step, delta))))
        await story_state.set_value(
            tx, story_id, field, value, change=value - current, now=now, source=source
        )
        done["state_applied" if value == current + delta else "state_clamped"] += 1
    return done


for_story = story_state.for_story
