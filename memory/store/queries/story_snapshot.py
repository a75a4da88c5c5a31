"""A story as one turn sees it, read in one statement: its window of messages, rolling summary,
held anchors, freshest positions and who shaped them, state, strategy and condensed history.

The prompt (memory.context.builder) and the conversation query (memory.recall.conversation) both
take their part of the same snapshot: they cannot disagree about the story, and the turn reads
it once. One statement, not a transaction of several: it is one snapshot of the database on
both backends, and on PostgreSQL one round trip where a read per part cost one each (and the
pool's reset after each). Each part keeps the order its own query gave it (SQL's collation, not
Python's), numbered by a window function.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.model import CondensedHistory
from memory.store.db import Store
from memory.store.queries.moderation import HeldAnchor
from memory.store.tables.history import HistoryMessage
from memory.store.tables.positions import Position

# Parts of the statement's result, in its first column.
_CONTEXT, _SUMMARY, _MESSAGE, _ANCHOR, _POSITION, _SPEAKER, _STATE = range(7)

# The speaker of a row (anchor, position source): their name as they last wrote in the story.
_NAME = (
    "(SELECT author_name FROM messages WHERE story_id = ?1 AND user_id = {0}.user_id"
    " ORDER BY id DESC LIMIT 1)"
)
# Every row: (part, order, n1, n2, n3, f1, f2, t1, t2, t3, t4). The first arm types the columns
# for PostgreSQL, which resolves a UNION's NULLs pairwise from the left.
_READ = (
    "WITH fresh AS (SELECT id, topic, idea, justification, created_at, anchored_at,"
    " row_number() OVER (ORDER BY anchored_at DESC, id DESC) AS rank"
    " FROM positions WHERE story_id = ?1)"
    f" SELECT {_CONTEXT}, 0, summary_through, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT),"
    " CAST(NULL AS DOUBLE PRECISION), CAST(NULL AS DOUBLE PRECISION), strategy, summary,"
    " summary_omitted, summary_sources FROM story_context WHERE story_id = ?1"
    f" UNION ALL SELECT {_SUMMARY}, 0, NULL, NULL, NULL, NULL, NULL, summary, NULL, NULL, NULL"
    " FROM story_summaries WHERE story_id = ?1"
    # The prompt's window (the last ?3, excluded ones too) and the conversation's (the last ?4
    # not excluded): the second reaches further back only past excluded messages.
    f" UNION ALL SELECT {_MESSAGE}, id, id, user_id, excluded, created_at, NULL, role, author_name,"
    " content, source_id FROM messages WHERE id IN ("
    "SELECT id FROM (SELECT id FROM messages WHERE story_id = ?1 AND id < ?2"
    " ORDER BY id DESC LIMIT ?3) AS w UNION SELECT id FROM (SELECT id FROM messages"
    " WHERE story_id = ?1 AND id < ?2 AND excluded = 0 ORDER BY id DESC LIMIT ?4) AS c)"
    f" UNION ALL SELECT {_ANCHOR}, a.id, a.id, a.added_by, NULL, a.created_at, NULL, a.text,"
    f" {_NAME.format('a')}, NULL, NULL FROM anchors a"
    " WHERE a.story_id = ?1 AND a.dropped_at IS NULL"
    f" UNION ALL SELECT {_POSITION}, rank, id, NULL, NULL, created_at, anchored_at, topic, idea,"
    " justification, NULL FROM fresh WHERE rank <= ?5"
    f" UNION ALL SELECT {_SPEAKER},"
    " row_number() OVER (ORDER BY s.position_id, s.exchange_id), s.position_id, NULL, NULL,"
    f" NULL, NULL, {_NAME.format('s')}, NULL, NULL, NULL"
    " FROM position_sources s JOIN fresh p ON p.id = s.position_id"
    " WHERE p.rank <= ?5 AND s.user_id IS NOT NULL"
    f" UNION ALL SELECT {_STATE}, row_number() OVER (ORDER BY field), NULL, NULL, NULL, value,"
    " NULL, field, NULL, NULL, NULL FROM story_state WHERE story_id = ?1"
    " ORDER BY 1, 2"
)


@dataclass(frozen=True, slots=True)
class StorySnapshot:
    """What one turn reads of a story, at one moment."""

    story_id: int
    # The prompt's window: the last messages before the turn's own, excluded ones included
    # (marked), oldest first.
    history: tuple[HistoryMessage, ...] = ()
    # The conversation query's window: the last messages before the turn's own that nobody
    # excluded, oldest first.
    conversation: tuple[HistoryMessage, ...] = ()
    summary: str = ""
    # Held anchors, oldest first.
    anchors: tuple[HeldAnchor, ...] = ()
    # The freshest positions, freshest anchoring first, and per position id the names of the
    # people whose messages shaped it (known ones, first source first).
    positions: tuple[Position, ...] = ()
    speakers: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    state: tuple[tuple[str, float], ...] = ()
    # The strategy chosen for the story (None: the configured default).
    strategy: str | None = None
    condensed: CondensedHistory = field(default_factory=CondensedHistory)


async def read(
    store: Store,
    story_id: int,
    *,
    before_id: int | None,
    history: int,
    conversation: int,
    positions: int,
) -> StorySnapshot:
    """Read the story in one statement: the last `history` messages before `before_id` (None:
    all stored), the last `conversation` of them nobody excluded, the `positions` freshest."""
    before = before_id if before_id is not None else 2**62
    rows = await store.fetchall(
        _READ, (story_id, before, max(history, 0), max(conversation, 0), max(positions, 0))
    )
    return _snapshot(story_id, rows, history=history, conversation=conversation)


def _snapshot(
    story_id: int, rows: Sequence[Any], *, history: int, conversation: int
) -> StorySnapshot:
    parts: dict[int, list[Any]] = {}
    for r in rows:
        parts.setdefault(int(r[0]), []).append(r)
    messages = [_message(r, story_id) for r in parts.get(_MESSAGE, ())]
    kept = [m for m in messages if not m.excluded]
    speakers: dict[int, list[str]] = {}
    for r in parts.get(_SPEAKER, ()):
        names = speakers.setdefault(int(r[2]), [])
        if r[7] is not None and str(r[7]) not in names:
            names.append(str(r[7]))
    context = parts.get(_CONTEXT)
    summary = parts.get(_SUMMARY)
    return StorySnapshot(
        story_id=story_id,
        history=tuple(messages[max(len(messages) - history, 0) :]),
        conversation=tuple(kept[max(len(kept) - conversation, 0) :]),
        summary=str(summary[0][7]) if summary else "",
        anchors=tuple(
            HeldAnchor(int(r[2]), str(r[7]), float(r[5]), r[3], speaker=r[8])
            for r in parts.get(_ANCHOR, ())
        ),
        positions=tuple(
            Position(int(r[2]), str(r[7]), str(r[8]), str(r[9]), float(r[5]), float(r[6]))
            for r in parts.get(_POSITION, ())
        ),
        speakers={k: tuple(v) for k, v in speakers.items()},
        state=tuple((str(r[7]), float(r[5])) for r in parts.get(_STATE, ())),
        strategy=None if not context or context[0][7] is None else str(context[0][7]),
        condensed=_condensed(context[0]) if context else CondensedHistory(),
    )


def _message(r: Any, story_id: int) -> HistoryMessage:
    return HistoryMessage(
        int(r[2]),
        str(r[7]),
        str(r[8]),
        str(r[9]),
        r[3],
        bool(r[4]),
        str(r[10]),
        story_id,
        float(r[5]),
    )


def _condensed(r: Any) -> CondensedHistory:
    return CondensedHistory(
        tuple(str(s) for s in json.loads(r[8])),
        int(r[2]),
        tuple(int(i) for i in json.loads(r[9])),
        tuple(int(i) for i in json.loads(r[10])),
    )
