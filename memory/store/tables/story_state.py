"""The story's bounded state fields (mood, closeness, ...) and the log of their changes."""

from __future__ import annotations

from memory.model import Source
from memory.store.db import Store, Tx


async def value(tx: Tx, story_id: int, field: str) -> float | None:
    """The field's current value, None when the story never had it."""
    row = await tx.fetchone(
        "SELECT value FROM story_state WHERE story_id = ? AND field = ?", (story_id, field)
    )
    return float(row[0]) if row else None


async def set_value(
    tx: Tx, story_id: int, field: str, value: float, *, change: float, now: float, source: Source
) -> None:
    """Store the field's new value; a real change is logged with the exchange it came from."""
    await tx.execute(
        "INSERT INTO story_state (story_id, field, value, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (story_id, field) DO UPDATE SET value = excluded.value,"
        " updated_at = excluded.updated_at",
        (story_id, field, value, now),
    )
    if change:
        await tx.execute(
            "INSERT INTO state_changes (story_id, field, delta, exchange_id, user_id, at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (story_id, field, change, source.exchange_id, source.user_id, now),
        )


async def for_story(store: Store, story_id: int) -> dict[str, float]:
    """The story's state fields, by name."""
    rows = await store.fetchall(
        "SELECT field, value FROM story_state WHERE story_id = ? ORDER BY field", (story_id,)
    )
    return {str(r[0]): float(r[1]) for r in rows}
