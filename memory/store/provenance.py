"""What was derived from exchanges, found by the exchange it came from: anchors, positions, state
changes, the rolling summary's revisions and the condensed history's sentences.

An erasure lists the exchanges it removes in `erased_exchanges`; `erase_derived` then takes out
everything made from them. The rolling summary is rewritten whole by every reflection from the
one before it, so any revision written after an erased exchange was reflected may carry its
words: the summary goes back to the last revision written before. Rows made before provenance
was recorded (exchange '') are judged the same way, by date.

A reflection is also shown the story's notes that other exchanges made (the summary, the
anchors, the positions), and may copy their words into what it writes for its own person.
`record_shown` keeps, per reflection, which revision and which notes its prompt held;
`copied_from` then finds the reflections that were shown what an erasure takes out, and takes
out the notes they made, except those whose every word but stopwords is in their own person's
message (those words are that person's). The memories they made go the same way
(memory/store/erasure.py). Reflections applied before this was recorded are judged by date.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from memory.store import context
from memory.store.db import Store, Tx

# What an anchor dropped by a forgotten exchange's reflection keeps as its reason.
FORGOTTEN_REASON = "(the reason was forgotten with the message it came from)"

_ERASED = "SELECT exchange_id FROM erased_exchanges WHERE erasure_id = ?"
# Ids bound in one statement, well under either backend's limit on parameters.
_BATCH = 500


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


@dataclass(frozen=True, slots=True)
class Shown:
    """The story's notes one reflection's prompt held: the rolling summary's revision (its
    date; None: there was none), the anchors and the positions by id."""

    summary_at: float | None = None
    anchors: tuple[int, ...] = ()
    positions: tuple[int, ...] = ()


async def record_shown(
    tx: Tx, exchange_id: str, story_id: int, shown: Shown, *, now: float
) -> None:
    """Record what the reflection of this exchange was shown (ids and a date, no text)."""
    await tx.execute(
        "INSERT INTO reflection_inputs (exchange_id, story_id, summary_at, anchors, positions,"
        " at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (exchange_id) DO NOTHING",
        (exchange_id, story_id, shown.summary_at, json.dumps(list(shown.anchors)),
         json.dumps(list(shown.positions)), now),
    )  # fmt: skip


async def shown_erased(tx: Tx, story_id: int, shown: Shown) -> bool:
    """Whether an erasure took out part of what a reflection was shown since its prompt was
    read: the summary went back before that revision, or a shown anchor or position is gone."""
    if shown.summary_at is not None:
        row = await tx.fetchone(
            "SELECT updated_at FROM story_summaries WHERE story_id = ?", (story_id,)
        )
        if row is None or float(row[0]) < shown.summary_at:
            return True
    held = await _note_ids(tx, story_id)
    return not set(shown.anchors) <= held[0] or not set(shown.positions) <= held[1]


async def _note_ids(tx: Tx, story_id: int) -> tuple[set[int], set[int]]:
    anchors = await tx.fetchall("SELECT id FROM anchors WHERE story_id = ?", (story_id,))
    positions = await tx.fetchall("SELECT id FROM positions WHERE story_id = ?", (story_id,))
    return {int(r[0]) for r in anchors}, {int(r[0]) for r in positions}


async def note_ids(tx: Tx, stories: Collection[int]) -> dict[int, tuple[set[int], set[int]]]:
    """Per story, the ids of its anchors and of its positions."""
    return {story_id: await _note_ids(tx, story_id) for story_id in stories}


@dataclass(frozen=True, slots=True)
class Copied:
    """The reflections shown what an erasure took out (their exchange and person), and the
    notes of other exchanges it took out with them."""

    exchanges: Mapping[str, tuple[int, str]]  # each one's person and message ('' when gone)
    anchors: int = 0
    positions: int = 0
    # Of those notes, how many came from other people's exchanges than the erased person's.
    others: int = 0


async def copied_from(
    tx: Tx,
    erasure_id: int,
    *,
    since: Mapping[int, float],
    before: Mapping[int, tuple[set[int], set[int]]],
    user_id: int,
    grounded: Callable[[str, str], bool],
) -> Copied:
    """Find the reflections that were shown what this erasure took out (`before`: per story,
    the anchor and position ids held before it), and take out the anchors and positions they
    made unless `grounded(text, their message)`; again for the reflections shown those, until
    none. Return the exchanges found, with their person and message."""
    found: dict[str, tuple[int, str]] = {}
    anchors = positions = others = 0
    for story_id, at in since.items():
        held = await _note_ids(tx, story_id)
        gone = (before[story_id][0] - held[0], before[story_id][1] - held[1])
        rows = await tx.fetchall(
            "SELECT r.exchange_id, r.summary_at, r.anchors, r.positions FROM reflection_inputs r"
            f" WHERE r.story_id = ? AND r.at >= ? AND r.exchange_id NOT IN ({_ERASED})"
            " ORDER BY r.at",
            (story_id, at, erasure_id),
        )
        waiting = [
            (str(r[0]), r[1] is not None and float(r[1]) >= at, set(json.loads(r[2])),
             set(json.loads(r[3])))
            for r in rows
        ]  # fmt: skip
        # Applied before what each reflection was shown was recorded: judged by its date.
        legacy = await tx.fetchall(
            "SELECT o.exchange_id FROM outbox o JOIN applied_exchanges a"
            " ON a.exchange_id = o.exchange_id WHERE o.story_id = ? AND a.applied_at >= ?"
            " AND o.exchange_id NOT IN (SELECT exchange_id FROM reflection_inputs)"
            f" AND o.exchange_id NOT IN ({_ERASED})",
            (story_id, at, erasure_id),
        )
        shown = [str(r[0]) for r in legacy]
        while True:
            shown += [x for x, summary, a, p in waiting if summary or a & gone[0] or p & gone[1]]
            taken = set(shown)
            waiting = [w for w in waiting if w[0] not in taken]
            if not shown:
                break
            said = await _messages_of(tx, shown)
            found.update({x: said.get(x, (0, "")) for x in shown})
            dropped = await _drop_notes(tx, story_id, shown, said, grounded, user_id=user_id)
            anchors += len(dropped[0])
            positions += len(dropped[1])
            others += dropped[2]
            gone = dropped[0], dropped[1]
            shown = []
            if not gone[0] and not gone[1]:
                break
    return Copied(found, anchors, positions, others)


async def _messages_of(tx: Tx, exchanges: Collection[str]) -> dict[str, tuple[int, str]]:
    """The person and the text of each exchange's message still in the history."""
    wanted = sorted(exchanges)
    found: dict[str, tuple[int, str]] = {}
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        rows = await tx.fetchall(
            "SELECT source_id, user_id, content FROM messages WHERE role = 'user'"
            f" AND source_id IN ({', '.join('?' * len(batch))})",
            batch,
        )
        found.update({str(r[0]): (int(r[1]), str(r[2])) for r in rows})
    return found


async def _drop_notes(
    tx: Tx,
    story_id: int,
    exchanges: Collection[str],
    said: Mapping[str, tuple[int, str]],
    grounded: Callable[[str, str], bool],
    *,
    user_id: int,
) -> tuple[set[int], set[int], int]:
    """Take out the anchors and positions these exchanges made whose words are not all their
    person's own; return the ids taken out and how many were made for another than `user_id`."""
    wanted = sorted(exchanges)
    copied: dict[str, set[int]] = {"anchors": set(), "positions": set()}
    others: set[tuple[str, int]] = set()
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        marks = ", ".join("?" * len(batch))
        rows = [
            ("anchors", *r)
            for r in await tx.fetchall(
                "SELECT id, exchange_id, text FROM anchors WHERE story_id = ?"
                f" AND exchange_id IN ({marks})",
                [story_id, *batch],
            )
        ] + [
            ("positions", *r)
            for r in await tx.fetchall(
                "SELECT p.id, s.exchange_id, p.topic || ' ' || p.idea || ' ' || p.justification"
                " FROM positions p JOIN position_sources s ON s.position_id = p.id"
                f" WHERE p.story_id = ? AND s.exchange_id IN ({marks})",
                [story_id, *batch],
            )
        ]
        for table, note_id, exchange_id, text in rows:
            person, message = said.get(str(exchange_id), (0, ""))
            if not grounded(str(text), message):
                copied[table].add(int(note_id))
                if person != user_id:
                    others.add((table, int(note_id)))
    for table, ids in copied.items():
        ordered = sorted(ids)
        for start in range(0, len(ordered), _BATCH):
            chunk = ordered[start : start + _BATCH]
            marks = ", ".join("?" * len(chunk))
            await tx.execute(f"DELETE FROM {table} WHERE id IN ({marks})", chunk)
    return copied["anchors"], copied["positions"], len(others)


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
