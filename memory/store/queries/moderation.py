"""What moderators see and change of a story's shared context: anchors and positions, with the
history of what was dropped, by whom and why (ids and reasons; the texts stay where they were)."""

from __future__ import annotations

from dataclasses import dataclass

from memory.store.db import Row, Store, Tx

# Dropped anchors and positions shown under the held ones.
HISTORY_SHOWN = 10


@dataclass(frozen=True, slots=True)
class HeldAnchor:
    """An anchor of a story: who added it (None: a reflection) and, once dropped, why."""

    id: int
    text: str
    created_at: float
    added_by: int | None = None
    dropped_at: float | None = None
    drop_reason: str | None = None
    dropped_by: int | None = None
    # The display name of the person whose message it was drawn from, when known.
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class PositionDrop:
    """A position a moderator dropped: its topic, why, by whom, when."""

    id: int
    topic: str
    reason: str
    dropped_by: int
    dropped_at: float


# The speaker's name as they last wrote in that story.
_SPEAKER = (
    "SELECT author_name FROM messages WHERE story_id = a.story_id AND user_id = a.user_id"
    " ORDER BY id DESC LIMIT 1"
)
_ANCHOR = (
    "SELECT a.id, a.text, a.created_at, a.added_by, a.dropped_at, a.drop_reason, a.dropped_by,"
    f" ({_SPEAKER}) FROM anchors a"
)


def _anchor(r: Row) -> HeldAnchor:
    return HeldAnchor(int(r[0]), str(r[1]), float(r[2]), r[3], r[4], r[5], r[6], r[7])


async def anchors(store: Store, story_id: int) -> list[HeldAnchor]:
    """The story's held anchors, oldest first, then the last dropped ones, latest first."""
    held = await store.fetchall(
        f"{_ANCHOR} WHERE a.story_id = ? AND a.dropped_at IS NULL ORDER BY a.id", (story_id,)
    )
    dropped = await store.fetchall(
        f"{_ANCHOR} WHERE a.story_id = ? AND a.dropped_at IS NOT NULL"
        " ORDER BY a.dropped_at DESC, a.id DESC LIMIT ?",
        (story_id, HISTORY_SHOWN),
    )
    return [_anchor(r) for r in (*held, *dropped)]


async def add_anchor(tx: Tx, story_id: int, text: str, *, by: int, now: float) -> int:
    """Hold a key fact a moderator wrote (no exchange made it); no reflection can drop it."""
    return await tx.execute(
        "INSERT INTO anchors (story_id, text, created_at, added_by) VALUES (?, ?, ?, ?)",
        (story_id, text, now, by),
    )


async def drop_anchor(
    tx: Tx, story_id: int, anchor_id: int, reason: str, *, by: int, now: float
) -> bool:
    """Drop a held anchor of this story, keeping who and why; False when none is held."""
    await tx.execute(
        "UPDATE anchors SET dropped_at = ?, drop_reason = ?, dropped_by = ?"
        " WHERE id = ? AND story_id = ? AND dropped_at IS NULL",
        (now, reason, by, anchor_id, story_id),
    )
    return await tx.changes() > 0


async def drop_position(
    tx: Tx, story_id: int, position_id: int, reason: str, *, by: int, now: float
) -> str | None:
    """Remove a position of this story, recording its topic, who and why; return the topic, or
    None when the story has no such position."""
    row = await tx.fetchone(
        "SELECT topic FROM positions WHERE id = ? AND story_id = ?", (position_id, story_id)
    )
    if row is None:
        return None
    await tx.execute("DELETE FROM positions WHERE id = ?", (position_id,))
    await tx.execute(
        "INSERT INTO position_drops (story_id, topic, reason, dropped_by, dropped_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (story_id, str(row[0]), reason, by, now),
    )
    return str(row[0])


async def position_drops(store: Store, story_id: int) -> list[PositionDrop]:
    """The last positions dropped in this story, latest first."""
    rows = await store.fetchall(
        "SELECT id, topic, reason, dropped_by, dropped_at FROM position_drops WHERE story_id = ?"
        " ORDER BY id DESC LIMIT ?",
        (story_id, HISTORY_SHOWN),
    )
    return [PositionDrop(int(r[0]), str(r[1]), str(r[2]), int(r[3]), float(r[4])) for r in rows]
