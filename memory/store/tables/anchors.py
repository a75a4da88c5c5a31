"""A story's anchors as the reflection reads and changes them (moderators' side:
memory.store.queries.moderation)."""

from __future__ import annotations

from memory.model import Source
from memory.store.db import Store, Tx


async def held(store: Store | Tx, story_id: int) -> list[tuple[int, str, float]]:
    """The story's anchors still held (id, text, created_at), oldest first."""
    rows = await store.fetchall(
        "SELECT id, text, created_at FROM anchors WHERE story_id = ? AND dropped_at IS NULL"
        " ORDER BY id",
        (story_id,),
    )
    return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]


async def drop_by_reflection(
    tx: Tx, story_id: int, anchor_id: int, reason: str, *, now: float
) -> bool:
    """Drop one of the reflection's own anchors of this story; False when none is held (a
    moderator's anchor stays until a moderator drops it)."""
    await tx.execute(
        "UPDATE anchors SET dropped_at = ?, drop_reason = ?"
        " WHERE id = ? AND story_id = ? AND dropped_at IS NULL AND added_by IS NULL",
        (now, reason, anchor_id, story_id),
    )
    return await tx.changes() > 0


async def add_from_exchange(tx: Tx, story_id: int, text: str, *, now: float, source: Source) -> int:
    """Hold a key fact the reflection drew from an exchange, recording which one."""
    return await tx.execute(
        "INSERT INTO anchors (story_id, text, created_at, exchange_id, user_id)"
        " VALUES (?, ?, ?, ?, ?)",
        (story_id, text, now, source.exchange_id, source.user_id),
    )
