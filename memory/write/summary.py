"""The story's rolling summary, and the anchors under it.

The summary is rewritten whole by each reflection: a fact the model stops repeating vanishes from
it. Anchors are the net: key facts held by the code, listed to the model with their ids, that the
reflection may drop only by id and with a stated reason (kept in history). Measured on the original
deployment: anchors alone kept 1 key fact in 4 (the model promoted almost nothing into them), the
full summary 3 in 4: both are kept, and a repeat between them is accepted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from memory.model import Source
from memory.store import Store, Tx
from memory.store.tables import anchors, history
from memory.text import clean
from memory.write.dedup import SIMILARITY_THRESHOLD, similarity

MAX_ANCHOR_CHARS = 500
MAX_NEW_ANCHORS = 5
MAX_ANCHORS = 30
# Anchor ids are SQLite rowids: positive and signed 64-bit. A larger Python integer raises
# OverflowError when it is bound to a query.
MAX_ANCHOR_ID = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Anchor:
    """A key fact of a story, with the id the reflection must name to drop it."""

    id: int
    text: str
    created_at: float


def parse_anchor_changes(
    new: object, drops: object, dropped: list[tuple[str, str]]
) -> tuple[list[str], list[tuple[int, str]]]:
    """Validate `new_anchors` (texts) and `drop_anchors` ({id, reason}) item by item."""
    texts: list[str] = []
    if isinstance(new, list):
        for index, item in enumerate(new):
            text = clean(item) if isinstance(item, str) else ""
            if not text or len(text) > MAX_ANCHOR_CHARS or index >= MAX_NEW_ANCHORS:
                dropped.append((f"new_anchors[{index}]", "invalid_anchor"))
            else:
                texts.append(text)
    elif new is not None:
        dropped.append(("new_anchors", "not_a_list"))
    removals: list[tuple[int, str]] = []
    if isinstance(drops, list):
        for index, item in enumerate(drops):
            anchor_id = item.get("id") if isinstance(item, dict) else None
            reason = item.get("reason") if isinstance(item, dict) else None
            if not isinstance(anchor_id, int) or isinstance(anchor_id, bool):
                dropped.append((f"drop_anchors[{index}]", "no_anchor_id"))
            elif not 1 <= anchor_id <= MAX_ANCHOR_ID:
                dropped.append((f"drop_anchors[{index}]", "anchor_id_out_of_range"))
            else:
                removals.append((anchor_id, clean(reason) if isinstance(reason, str) else ""))
    elif drops is not None:
        dropped.append(("drop_anchors", "not_a_list"))
    return texts, removals


async def active(store: Store, story_id: int) -> list[Anchor]:
    """Return the story's anchors still held, oldest first."""
    return [Anchor(*row) for row in await anchors.held(store, story_id)]


async def apply_summary(
    tx: Tx,
    story_id: int,
    *,
    summary: str | None,
    new_anchors: list[str],
    drops: list[tuple[int, str]],
    now: float,
    source: Source,
) -> Counter[str]:
    """Replace the summary, add anchors (no near-duplicates), drop anchors named with a reason;
    what is written records the exchange it came from."""
    done: Counter[str] = Counter()
    if summary:
        await history.set_summary(tx, story_id, summary, now, source=source)
        done["summary_rewritten"] += 1
    for anchor_id, reason in drops:
        if not reason:
            done["anchor_drop_refused_no_reason"] += 1
            continue
        dropped = await anchors.drop_by_reflection(tx, story_id, anchor_id, reason[:500], now=now)
        done["anchor_dropped" if dropped else "anchor_drop_unknown_id"] += 1
    held = [text for _, text, _ in await anchors.held(tx, story_id)]
    for text in new_anchors:
        if len(held) >= MAX_ANCHORS:
            done["anchor_refused_full"] += 1
        elif any(similarity(text, h) >= SIMILARITY_THRESHOLD for h in held):
            done["anchor_repeat"] += 1
        else:
            await anchors.add_from_exchange(tx, story_id, text, now=now, source=source)
            held.append(text)
            done["anchor_added"] += 1
    return done
