"""What the store holds about one person, for their export: their messages with the replies to
them, and what reflections on their exchanges derived (anchors, positions, state changes)."""

from __future__ import annotations

from typing import Any

from memory.store.db import Store, Tx


async def messages(store: Store, user_id: int) -> list[dict[str, Any]]:
    """The person's messages, oldest first, each with the character's reply to it (if stored)."""
    rows = await store.fetchall(
        "SELECT m.id, m.story_id, m.author_name, m.content, m.excluded, m.created_at, r.content"
        " FROM messages m LEFT JOIN messages r ON r.source_id = m.source_id || ':reply'"
        " WHERE m.user_id = ? ORDER BY m.id",
        (user_id,),
    )
    return [
        {
            "id": r[0],
            "story_id": r[1],
            "author_name": r[2],
            "text": r[3],
            "excluded": bool(r[4]),
            "created_at": r[5],
            "reply": r[6],
        }
        for r in rows
    ]


async def derived(store: Store, user_id: int) -> dict[str, list[dict[str, Any]]]:
    """What reflections on the person's exchanges made (as far as provenance was recorded)."""
    anchors = await store.fetchall(
        "SELECT id, story_id, text, created_at, dropped_at, drop_reason FROM anchors"
        " WHERE user_id = ? ORDER BY id",
        (user_id,),
    )
    positions = await store.fetchall(
        "SELECT DISTINCT p.id, p.story_id, p.topic, p.idea, p.justification, p.created_at,"
        " p.anchored_at FROM positions p JOIN position_sources s ON s.position_id = p.id"
        " WHERE s.user_id = ? ORDER BY p.id",
        (user_id,),
    )
    changes = await store.fetchall(
        "SELECT story_id, field, delta, at FROM state_changes WHERE user_id = ? ORDER BY id",
        (user_id,),
    )
    return {
        "anchors": [
            {
                "id": r[0],
                "story_id": r[1],
                "text": r[2],
                "created_at": r[3],
                "dropped_at": r[4],
                "drop_reason": r[5],
            }
            for r in anchors
        ],
        "positions": [
            {
                "id": r[0],
                "story_id": r[1],
                "topic": r[2],
                "idea": r[3],
                "justification": r[4],
                "created_at": r[5],
                "anchored_at": r[6],
            }
            for r in positions
        ],
        "state_changes": [
            {"story_id": r[0], "field": r[1], "delta": r[2], "at": r[3]} for r in changes
        ],
    }


async def restore(
    tx: Tx, user_id: int, memory_id: int, *, pinned: bool, created_at: float, updated_at: float
) -> None:
    """Give an imported memory back its pin and its dates."""
    await tx.execute(
        "UPDATE memories SET pinned = ?, created_at = ?, updated_at = ?"
        " WHERE id = ? AND user_id = ?",
        (int(pinned), created_at, updated_at, memory_id, user_id),
    )
    tx.touch(user_id, [memory_id])
