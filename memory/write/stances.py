"""The character's positions: what it thinks of a topic, and the justification behind it.

The original deployment showed a loop: a line the character said was stored word for word as a
position, came back hours later, and the next reflection re-validated the position by quoting that
very line, so its date never aged. Two guards: the reflection field asks for the *idea* of the
position, never the character's wording (a quoting label made the model copy lines 4 times in 12, a
reworded one 0 in 12); and a justification that repeats SELF_CITATION_CHARS or more characters of
the position it claims to support does not re-anchor it.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass

from memory.model import Source
from memory.store.db import Store, Tx
from memory.text import clean, fold

# Read on the 21 real justifications of the original deployment's log: the self-quotes reused 53
# characters of their position, the closest legitimate justification 13.
SELF_CITATION_CHARS = 30

# Positions in the prompt: the freshest few, so an old position can age out and yield.
PROMPT_POSITIONS = 5

MAX_TOPIC_CHARS = 200
MAX_IDEA_CHARS = 1000
ACTIONS = ("create", "update", "revalidate")


@dataclass(frozen=True, slots=True)
class PositionChange:
    """What the reflection proposes for one topic."""

    topic: str
    idea: str
    justification: str
    action: str


@dataclass(frozen=True, slots=True)
class Position:
    """A stored position of the character in one story."""

    id: int
    topic: str
    idea: str
    justification: str
    created_at: float
    anchored_at: float


def shared_chars(a: str, b: str) -> int:
    """Return the length of the longest run of characters two texts share (folded)."""
    fa, fb = fold(a), fold(b)
    match = difflib.SequenceMatcher(None, fa, fb, autojunk=False).find_longest_match()
    return match.size


def self_cites(justification: str, idea: str) -> bool:
    """Tell whether a justification merely repeats the position it claims to support."""
    return shared_chars(justification, idea) >= SELF_CITATION_CHARS


def parse_positions(value: object, dropped: list[tuple[str, str]]) -> list[PositionChange]:
    """Validate the reflection's `positions` items one by one; count what is dropped."""
    if value is None:
        return []
    if not isinstance(value, list):
        dropped.append(("positions", "not_a_list"))
        return []
    out = []
    for index, item in enumerate(value[:5]):
        where = f"positions[{index}]"
        if not isinstance(item, dict):
            dropped.append((where, "not_an_object"))
            continue
        fields = [item.get(k) for k in ("topic", "idea", "justification", "action")]
        if not all(isinstance(f, str) for f in fields):
            dropped.append((where, "missing_field"))
            continue
        topic, idea, justification, action = (clean(str(f)) for f in fields)
        action = action.casefold()
        if action not in ACTIONS:
            dropped.append((where, "unknown_action"))
        elif not topic or len(topic) > MAX_TOPIC_CHARS or len(idea) > MAX_IDEA_CHARS:
            dropped.append((where, "bad_length"))
        elif action != "revalidate" and not idea:
            dropped.append((where, "empty_idea"))
        else:
            out.append(PositionChange(topic, idea, justification[:MAX_IDEA_CHARS], action))
    dropped.extend((f"positions[{i}]", "too_many_items") for i in range(5, len(value)))
    return out


async def apply_positions(
    tx: Tx, story_id: int, changes: list[PositionChange], *, now: float, source: Source
) -> Counter[str]:
    """Create, update or re-anchor positions; a self-citing justification moves nothing. Each
    position keeps the exchanges that shaped it."""
    done: Counter[str] = Counter()
    for change in changes:
        row = await tx.fetchone(
            "SELECT id, idea FROM positions WHERE story_id = ? AND topic = ?",
            (story_id, change.topic),
        )
        if row is None:
            if not change.idea:
                done["position_unknown_topic"] += 1
                continue
            position_id = await tx.execute(
                "INSERT INTO positions (story_id, topic, idea, justification, created_at,"
                " anchored_at) VALUES (?, ?, ?, ?, ?, ?)",
                (story_id, change.topic, change.idea, change.justification, now, now),
            )
            await _shaped_by(tx, position_id, source)
            done["position_created"] += 1
        elif self_cites(change.justification, str(row["idea"])):
            done["position_self_citation"] += 1
        else:
            idea = change.idea if change.action == "update" and change.idea else str(row["idea"])
            await tx.execute(
                "UPDATE positions SET idea = ?, justification = ?,"
                " anchored_at = max(anchored_at, ?) WHERE id = ?",
                (idea, change.justification, now, int(row["id"])),
            )
            await _shaped_by(tx, int(row["id"]), source)
            done[f"position_{change.action}d"] += 1
    return done


async def _shaped_by(tx: Tx, position_id: int, source: Source) -> None:
    await tx.execute(
        "INSERT INTO position_sources (position_id, exchange_id, user_id) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (position_id, source.exchange_id, source.user_id),
    )


async def for_story(store: Store, story_id: int) -> list[Position]:
    """Return a story's positions, freshest anchoring first."""
    rows = await store.fetchall(
        "SELECT id, topic, idea, justification, created_at, anchored_at FROM positions"
        " WHERE story_id = ? ORDER BY anchored_at DESC, id DESC",
        (story_id,),
    )
    return [
        Position(int(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4]), float(r[5])) for r in rows
    ]
