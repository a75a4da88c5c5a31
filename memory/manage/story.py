"""A story's shared context: its summary and anchors for anyone in it (/summary); for its
moderators, its anchors and positions seen, an anchor added, one of them dropped with a reason kept
in history.

The front ends decide who may (Manage Messages in a server, the person in their own DMs, the
terminal's owner); these functions only ever reach the story they are given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memory.errors import InvalidInput, NotFound
from memory.store import Store
from memory.store.queries import moderation
from memory.store.queries.moderation import HeldAnchor, PositionDrop
from memory.store.tables import history
from memory.text import clean
from memory.write import stances
from memory.write import summary as rolling
from memory.write.stances import Position
from memory.write.summary import MAX_ANCHOR_CHARS, Anchor

MAX_REASON_CHARS = 500


@dataclass(frozen=True, slots=True)
class Positions:
    """A story's positions, and the last ones dropped by a moderator."""

    held: tuple[Position, ...]
    dropped: tuple[PositionDrop, ...]


@dataclass(frozen=True, slots=True)
class Summary:
    """A story's rolling summary, rewritten by each reflection, and the anchors held under it."""

    text: str  # '' until a reflection wrote one
    anchors: tuple[Anchor, ...]


async def summary(store: Store, story_id: int) -> Summary:
    """Return the story's rolling summary and its anchors still held, oldest first."""
    text = await history.summary(store, story_id)
    return Summary(text, tuple(await rolling.active(store, story_id)))


async def anchors(store: Store, story_id: int) -> list[HeldAnchor]:
    """Return the story's held anchors, then the last dropped ones with who and why."""
    return await moderation.anchors(store, story_id)


async def positions(store: Store, story_id: int) -> Positions:
    """Return the story's positions and the last dropped ones."""
    held = await stances.for_story(store, story_id)
    return Positions(tuple(held), tuple(await moderation.position_drops(store, story_id)))


def _reason(reason: str) -> str:
    text = clean(reason)
    if not text or len(text) > MAX_REASON_CHARS:
        raise InvalidInput(f"say why in 1 to {MAX_REASON_CHARS} characters")
    return text


async def add_anchor(
    store: Store, story_id: int, text: str, *, by: int, now: float | None = None
) -> int:
    """Hold a key fact of this story that no reflection can drop; return its id."""
    fact = clean(text)
    if not fact or len(fact) > MAX_ANCHOR_CHARS:
        raise InvalidInput(f"an anchor is 1 to {MAX_ANCHOR_CHARS} characters")
    when = time.time() if now is None else now
    return await store.transact(
        lambda tx: moderation.add_anchor(tx, story_id, fact, by=by, now=when)
    )


async def drop_anchor(
    store: Store, story_id: int, anchor_id: int, reason: str, *, by: int, now: float | None = None
) -> None:
    """Drop one of this story's anchors; the reason, who and when stay in its history."""
    why = _reason(reason)
    when = time.time() if now is None else now
    if not await store.transact(
        lambda tx: moderation.drop_anchor(tx, story_id, anchor_id, why, by=by, now=when)
    ):
        raise NotFound(f"no anchor #{anchor_id} held here")


async def drop_position(
    store: Store,
    story_id: int,
    position_id: int,
    reason: str,
    *,
    by: int,
    now: float | None = None,
) -> str:
    """Drop one of this story's positions; its topic, the reason, who and when stay in the
    history. Return the topic."""
    why = _reason(reason)
    when = time.time() if now is None else now
    topic = await store.transact(
        lambda tx: moderation.drop_position(tx, story_id, position_id, why, by=by, now=when)
    )
    if topic is None:
        raise NotFound(f"no position #{position_id} here")
    return topic
