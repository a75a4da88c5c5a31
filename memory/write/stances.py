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
from memory.store import Tx
from memory.store.tables import positions
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
        held = await positions.by_topic(tx, story_id, change.topic)
        if held is None:
            if not change.idea:
                done["position_unknown_topic"] += 1
                continue
            position_id = await positions.create(
                tx, story_id, change.topic, change.idea, change.justification, now=now
            )
            await positions.shaped_by(tx, position_id, source)
            done["position_created"] += 1
            continue
        position_id, held_idea = held
        if self_cites(change.justification, held_idea):
            done["position_self_citation"] += 1
            continue
        idea = change.idea if change.action == "update" and change.idea else held_idea
        await positions.reanchor(tx, position_id, idea, change.justification, now=now)
        await positions.shaped_by(tx, position_id, source)
        done[f"position_{change.action}d"] += 1
    return done


Position = positions.Position
for_story = positions.for_story
