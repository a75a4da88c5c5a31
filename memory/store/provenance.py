"""What was derived from exchanges, found by the exchange it came from: anchors, positions, state
changes, the rolling summary's revisions and the condensed history's sentences.

An erasure lists the exchanges it removes in `erased_exchanges`; `erase_derived` then takes out
everything made from them. The rolling summary is rewritten whole by every reflection from the
one before it, so any revision written after an erased exchange was reflected may carry its
words: the summary goes back to the last revision written before. Rows made before provenance
was recorded (exchange '') are judged the same way, by date.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from memory.store import context
from memory.store.db import Store, Tx

# What an anchor dropped by a forgotten exchange's reflection keeps as its reason.
FORGOTTEN_REASON = "(the reason was forgotten with the message it came from)"

_ERASED = "SELECT exchange_id FROM erased_exchanges WHERE erasure_id = ?"


@dataclass(frozen=True, slots=True)
class Derived:
    """How many derived things an erasure took out."""

    anchors: int = 0
    positions: int = 0
    state_changes: int = 0
    summaries: int = 0  # stories whose rolling summary went back (or was cleared)
    condensed: int = 0  # sentences taken out of condensed histories

    @property
    def total(self) -> int:
        return self.anchors + self.positions + self.state_changes + self.summaries + self.condensed


async def reflected_since(tx: Tx, erasure_id: int) -> dict[int, float]:
    """Per story, when the first of the erased exchanges was reflected (nothing was derived
    from an exchange never reflected)."""
    rows = await tx.fetchall(
        "SELECT x.story_id, min(a.applied_at) FROM erased_exchanges x"
        " JOIN applied_exchanges a ON a.exchange_id = x.exchange_id"
        " WHERE x.erasure_id = ? GROUP BY x.story_id",
        (erasure_id,),
    )
    return {int(r[0]): float(r[1]) for r in rows}


async def erase_derived(
    tx: Tx,
    erasure_id: int,
    *,
    since: Mapping[int, float],
    messages: Mapping[int, Collection[int]],
    bounds: Mapping[str, tuple[float, float]],
) -> Derived:
    """Take out what the erased exchanges made. `since`: per story, when the first of them was
    reflected; `messages`: per story, the history rows removed with them; `bounds`: each state
    field's range."""
    anchors = await _anchors(tx, erasure_id, since)
    positions = await _positions(tx, erasure_id, since)
    changes = await _state(tx, erasure_id, bounds)
    summaries = 0
    for story_id, at in since.items():
        summaries += await _revert_summary(tx, story_id, at)
    condensed = 0
    for story_id, ids in messages.items():
        if ids:
            condensed += await context.drop_sentences(tx, story_id, set(ids), before=min(ids))
    return Derived(anchors, positions, changes, summaries, condensed)


async def _anchors(tx: Tx, erasure_id: int, since: Mapping[int, float]) -> int:
    await tx.execute(f"DELETE FROM anchors WHERE exchange_id IN ({_ERASED})", (erasure_id,))
    removed = await tx.changes()
    for story_id, at in since.items():
        await tx.execute(
            "DELETE FROM anchors WHERE story_id = ? AND exchange_id = ''"
            " AND (created_at >= ? OR dropped_at >= ?)",
            (story_id, at, at),
        )
        removed += await tx.changes()
    # A reflection drops anchors with the same clock reading it records itself applied at.
    await tx.execute(
        "UPDATE anchors SET drop_reason = ? WHERE drop_reason <> ? AND dropped_at IN"
        " (SELECT a.applied_at FROM erased_exchanges x JOIN applied_exchanges a"
        " ON a.exchange_id = x.exchange_id"
        " WHERE x.erasure_id = ? AND x.story_id = anchors.story_id)",
        (FORGOTTEN_REASON, FORGOTTEN_REASON, erasure_id),
    )
    return removed


async def _positions(tx: Tx, erasure_id: int, since: Mapping[int, float]) -> int:
    # A position shaped by an erased exchange goes whole: its idea or justification may be
    # in that exchange's words, whoever else re-anchored it.
    await tx.execute(
        "DELETE FROM positions WHERE id IN (SELECT position_id FROM position_sources"
        f" WHERE exchange_id IN ({_ERASED}))",
        (erasure_id,),
    )
    removed = await tx.changes()
    for story_id, at in since.items():
        await tx.execute(
            "DELETE FROM positions WHERE story_id = ? AND anchored_at >= ? AND id IN"
            " (SELECT position_id FROM position_sources WHERE exchange_id = '')",
            (story_id, at),
        )
        removed += await tx.changes()
    return removed


async def _state(tx: Tx, erasure_id: int, bounds: Mapping[str, tuple[float, float]]) -> int:
    rows = await tx.fetchall(
        "SELECT story_id, field, sum(delta), count(*) FROM state_changes"
        f" WHERE exchange_id IN ({_ERASED}) GROUP BY story_id, field",
        (erasure_id,),
    )
    for story_id, name, delta, _ in rows:
        low, high = bounds.get(str(name), (-1000.0, 1000.0))
        await tx.execute(
            "UPDATE story_state SET value = max(?, min(?, value - ?))"
            " WHERE story_id = ? AND field = ?",
            (low, high, float(delta), story_id, name),
        )
    await tx.execute(f"DELETE FROM state_changes WHERE exchange_id IN ({_ERASED})", (erasure_id,))
    return sum(int(r[3]) for r in rows)


async def _revert_summary(tx: Tx, story_id: int, at: float) -> int:
    """Take the story's rolling summary back to its last revision before `at`; 1 if it moved."""
    await tx.execute("DELETE FROM summary_revisions WHERE story_id = ? AND at >= ?", (story_id, at))
    current = await tx.fetchone(
        "SELECT updated_at FROM story_summaries WHERE story_id = ?", (story_id,)
    )
    if current is None or float(current[0]) < at:
        return 0
    previous = await tx.fetchone(
        "SELECT summary, at FROM summary_revisions WHERE story_id = ? ORDER BY at DESC, id DESC"
        " LIMIT 1",
        (story_id,),
    )
    if previous is None:
        await tx.execute("DELETE FROM story_summaries WHERE story_id = ?", (story_id,))
    else:
        await tx.execute(
            "UPDATE story_summaries SET summary = ?, updated_at = ? WHERE story_id = ?",
            (previous[0], previous[1], story_id),
        )
    return 1


@dataclass(frozen=True, slots=True)
class Leftover:
    """A stored message an exchange came from: its history id, where, and its source id."""

    history_id: int
    story_id: int
    source_id: str


@dataclass(frozen=True, slots=True)
class Leftovers:
    """What still holds the words of some exchanges: their messages, and what they made."""

    messages: tuple[Leftover, ...] = ()
    anchors: int = 0
    positions: int = 0
    summaries: int = 0
    condensed: int = 0

    @property
    def derived(self) -> int:
        return self.anchors + self.positions + self.summaries + self.condensed


async def memory_sources(store: Store, user_id: int, memory_id: int) -> list[str]:
    """The exchanges that created or confirmed one of this person's memories."""
    rows = await store.fetchall(
        "SELECT e.exchange_id FROM memory_events e JOIN memories m ON m.id = e.memory_id"
        " WHERE e.memory_id = ? AND m.user_id = ? GROUP BY e.exchange_id ORDER BY min(e.id)",
        (memory_id, user_id),
    )
    return [str(r[0]) for r in rows]


async def leftovers(store: Store, exchange_ids: Collection[str]) -> Leftovers:
    """What is still stored from these exchanges: the messages, anchors held or dropped,
    positions, rolling summaries rewritten since they were reflected, condensed sentences."""
    wanted = sorted(exchange_ids)
    if not wanted:
        return Leftovers()
    marks = ", ".join("?" * len(wanted))
    messages = await store.fetchall(
        f"SELECT id, story_id, source_id FROM messages WHERE source_id IN ({marks}) ORDER BY id",
        wanted,
    )
    anchors = await store.fetchone(
        f"SELECT count(*) FROM anchors WHERE exchange_id IN ({marks})", wanted
    )
    positions = await store.fetchone(
        f"SELECT count(DISTINCT position_id) FROM position_sources WHERE exchange_id IN ({marks})",
        wanted,
    )
    summaries = await store.fetchone(
        "SELECT count(DISTINCT s.story_id) FROM story_summaries s JOIN outbox o"
        " ON o.story_id = s.story_id JOIN applied_exchanges a ON a.exchange_id = o.exchange_id"
        f" WHERE o.exchange_id IN ({marks}) AND s.updated_at >= a.applied_at",
        wanted,
    )
    condensed = 0
    by_story: dict[int, set[int]] = {}
    for r in messages:
        by_story.setdefault(int(r[1]), set()).add(int(r[0]))
    for story_id, ids in by_story.items():
        held = await context.condensed(store, story_id)
        condensed += sum(1 for i in range(len(held.sentences)) if held.source_of(i) in ids)
    return Leftovers(
        tuple(Leftover(int(r[0]), int(r[1]), str(r[2])) for r in messages),
        int(anchors[0]) if anchors else 0,
        int(positions[0]) if positions else 0,
        int(summaries[0]) if summaries else 0,
        condensed,
    )
