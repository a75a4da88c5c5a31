"""Bounded state: small numeric deltas proposed by the reflection, clamped by the code."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from memory.model import Source
from memory.store.db import Store, Tx

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
        row = await tx.fetchone(
            "SELECT value FROM story_state WHERE story_id = ? AND field = ?",
            (story_id, name.casefold()),
        )
        current = float(row[0]) if row else start
        value = min(high, max(low, current + min(step, max(-step, delta))))
        await tx.execute(
            "INSERT INTO story_state (story_id, field, value, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (story_id, field) DO UPDATE SET value = excluded.value,"
            " updated_at = excluded.updated_at",
            (story_id, name.casefold(), value, now),
        )
        if value != current:
            await tx.execute(
                "INSERT INTO state_changes (story_id, field, delta, exchange_id, user_id, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (story_id, name.casefold(), value - current, source.exchange_id,
                 source.user_id, now),
            )  # fmt: skip
        done["state_applied" if value == current + delta else "state_clamped"] += 1
    return done


async def for_story(store: Store, story_id: int) -> dict[str, float]:
    """Return the story's state fields."""
    rows = await store.fetchall(
        "SELECT field, value FROM story_state WHERE story_id = ? ORDER BY field", (story_id,)
    )
    return {str(r[0]): float(r[1]) for r in rows}
