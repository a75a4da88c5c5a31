"""The character's positions per story, and the exchanges that shaped each one."""

from __future__ import annotations

from dataclasses import dataclass

from memory.model import Source
from memory.store.db import Store, Tx


@dataclass(frozen=True, slots=True)
class Position:
    """What the character thinks of a topic in a story, and why."""

    id: int
    topic: str
    idea: str
    justification: str
    created_at: float
    anchored_at: float


async def by_topic(tx: Tx, story_id: int, topic: str) -> tuple[int, str] | None:
    """The id and idea of the story's position on a topic, if it has one."""
    row = await tx.fetchone(
        "SELECT id, idea FROM positions WHERE story_id = ? AND topic = ?", (story_id, topic)
    )
    return None if row is None else (int(row[0]), str(row[1]))


async def create(
    tx: Tx, story_id: int, topic: str, idea: str, justification: str, *, now: float
) -> int:
    """Add a position anchored now; return its id."""
    return await tx.execute(
        "INSERT INTO positions (story_id, topic, idea, justification, created_at, anchored_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (story_id, topic, idea, justification, now, now),
    )


async def reanchor(tx: Tx, position_id: int, idea: str, justification: str, *, now: float) -> None:
    """Rewrite a position's idea and justification; its anchoring date never goes back."""
    await tx.execute(
        "UPDATE positions SET idea = ?, justification = ?, anchored_at = max(anchored_at, ?)"
        " WHERE id = ?",
        (idea, justification, now, position_id),
    )


async def shaped_by(tx: Tx, position_id: int, source: Source) -> None:
    """Record the exchange (and its author) that shaped a position."""
    await tx.execute(
        "INSERT INTO position_sources (position_id, exchange_id, user_id) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (position_id, source.exchange_id, source.user_id),
    )


async def for_story(store: Store, story_id: int) -> list[Position]:
    """A story's positions, freshest anchoring first."""
    rows = await store.fetchall(
        "SELECT id, topic, idea, justification, created_at, anchored_at FROM positions"
        " WHERE story_id = ? ORDER BY anchored_at DESC, id DESC",
        (story_id,),
    )
    return [
        Position(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]), float(r[5])) for r in rows
    ]
