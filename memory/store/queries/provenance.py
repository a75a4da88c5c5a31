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
`copied_from` then finds the reflections that were shown what an erasure takes out. Being shown
is not copying: every revision is written from the one before, so every reflection after the
erased exchange was shown it. What such a reflection made goes only if it carries a word of the
erasure's taint (`taint`, read before anything is taken out: the erased messages and replies,
the words the erased exchanges' reflections added to the summary, the anchors and positions
the erasure takes out) that is not in its own person's message; the words of what goes that
way join the taint for the reflections shown it, until none. The memories they made are
judged the same way (memory/store/queries/erasure.py). Reflections applied before this was recorded
are judged by date, on the same rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from memory.store.db import Store, Tx
from memory.store.tables import story_context

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
        (
            exchange_id,
            story_id,
            shown.summary_at,
            json.dumps(list(shown.anchors)),
            json.dumps(list(shown.positions)),
            now,
        ),
    )


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


# The words of a text, as the erasure compares them (memory/write/filters.py: content_words).
Words = Callable[[str], frozenset[str]]
# Whether a text carries a word of the taint that is not its person's own message's
# (memory/write/filters.py: carries).
Carries = Callable[[str, str, frozenset[str]], bool]

_NOTES = (
    ("anchors", "SELECT id, text FROM anchors WHERE story_id = ?"),
    (
        "positions",
        "SELECT id, topic || ' ' || idea || ' ' || justification FROM positions WHERE story_id = ?",
    ),
)


@dataclass(frozen=True, slots=True)
class Notes:
    """A story's anchors and positions, by id, with their text."""

    anchors: Mapping[int, str]
    positions: Mapping[int, str]


async def notes(tx: Tx, stories: Collection[int]) -> dict[int, Notes]:
    """Per story, its anchors and its positions with their text (read before an erasure takes
    some out: what it takes out joins its taint)."""
    found: dict[int, Notes] = {}
    for story_id in stories:
        held = [
            {int(r[0]): str(r[1]) for r in await tx.fetchall(sql, (story_id,))} for _, sql in _NOTES
        ]
        found[story_id] = Notes(held[0], held[1])
    return found


async def taint(
    tx: Tx,
    erasure_id: int,
    *,
    since: Mapping[int, float],
    rows: Mapping[int, Collection[int]],
    words: Words,
) -> dict[int, set[str]]:
    """Per story, the words of what this erasure takes out, read before it does: its messages
    and the replies to them (`rows`: per story, the history rows it removes), and the words
    each erased exchange's reflection added to the rolling summary (not in the revision
    before). A revision from before provenance was recorded counts as the erased exchange's
    when it is the first written since (`since`: when the first of them was reflected)."""
    found: dict[int, set[str]] = {story_id: set() for story_id in since}
    for story_id, ids in rows.items():
        wanted = sorted(ids)
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            said = await tx.fetchall(
                f"SELECT content FROM messages WHERE id IN ({', '.join('?' * len(batch))})",
                batch,
            )
            found.setdefault(story_id, set()).update(*(words(str(r[0])) for r in said))
    outbox = await tx.fetchall(
        f"SELECT story_id, user_message, reply FROM outbox WHERE exchange_id IN ({_ERASED})",
        (erasure_id,),
    )
    for story_id, message, reply in outbox:
        found.setdefault(int(story_id), set()).update(words(str(message)), words(str(reply or "")))
    erased = {str(r[0]) for r in await tx.fetchall(_ERASED, (erasure_id,))}
    for story_id, at in since.items():
        revisions = await tx.fetchall(
            "SELECT summary, exchange_id, at FROM summary_revisions WHERE story_id = ?"
            " ORDER BY at, id",
            (story_id,),
        )
        previous: frozenset[str] = frozenset()
        legacy = True  # the first revision since, when it names no exchange
        for summary, exchange_id, written in revisions:
            these = words(str(summary))
            if float(written) >= at:
                if str(exchange_id) in erased or (legacy and not exchange_id):
                    found[story_id] |= these - previous
                legacy = False
            previous = these
    return found


@dataclass(frozen=True, slots=True)
class Copied:
    """The reflections shown what an erasure took out (their exchange and person), and the
    notes of other exchanges it took out with them."""

    exchanges: Mapping[str, tuple[int, str]]  # each one's person and message ('' when gone)
    anchors: int = 0
    positions: int = 0
    # Of those notes, how many came from other people's exchanges than the erased person's.
    others: int = 0
    # Per exchange found, the taint it was judged by (its memories are judged by it too).
    taint: Mapping[str, frozenset[str]] = field(default_factory=dict)


async def copied_from(
    tx: Tx,
    erasure_id: int,
    *,
    since: Mapping[int, float],
    before: Mapping[int, Notes],
    taint: Mapping[int, set[str]],
    user_id: int,
    words: Words,
    carries: Carries,
) -> Copied:
    """Find the reflections that were shown what this erasure took out (`before`: per story,
    the anchors and positions held before it), and take out the anchors and positions they
    made that `carries(text, their message, taint)`; `taint`: per story, the words of what the
    erasure took out (`taint()`), which the notes it took out join, and then those taken out
    here, for the reflections shown them, until none. Return the exchanges found, with their
    person and message, and the taint each is judged by."""
    found: dict[str, tuple[int, str]] = {}
    tainted: dict[str, frozenset[str]] = {}
    anchors = positions = others = 0
    for story_id, at in since.items():
        held = await _note_ids(tx, story_id)
        was = before[story_id]
        gone = (set(was.anchors) - held[0], set(was.positions) - held[1])
        words_of = set(taint.get(story_id, ()))
        for note in gone[0]:
            words_of |= words(was.anchors[note])
        for note in gone[1]:
            words_of |= words(was.positions[note])
        rows = await tx.fetchall(
            "SELECT r.exchange_id, r.summary_at, r.anchors, r.positions FROM reflection_inputs r"
            f" WHERE r.story_id = ? AND r.at >= ? AND r.exchange_id NOT IN ({_ERASED})"
            " ORDER BY r.at",
            (story_id, at, erasure_id),
        )
        waiting = [
            (
                str(r[0]),
                r[1] is not None and float(r[1]) >= at,
                set(json.loads(r[2])),
                set(json.loads(r[3])),
            )
            for r in rows
        ]
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
            tainted.update(dict.fromkeys(shown, frozenset(words_of)))
            dropped = await _drop_notes(
                tx, story_id, shown, said, frozenset(words_of), carries, user_id=user_id
            )
            anchors += len(dropped.anchors)
            positions += len(dropped.positions)
            others += dropped.others
            words_of |= dropped.words(words)
            gone = set(dropped.anchors), set(dropped.positions)
            shown = []
            if not gone[0] and not gone[1]:
                break
    return Copied(found, anchors, positions, others, tainted)


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


@dataclass(frozen=True, slots=True)
class _Dropped:
    """The notes taken out as copies: by id, their text and their person's message."""

    anchors: Mapping[int, tuple[str, str]]
    positions: Mapping[int, tuple[str, str]]
    others: int

    def words(self, words: Words) -> set[str]:
        """Their words that are not their person's own: the next round's taint."""
        found: set[str] = set()
        for text, message in (*self.anchors.values(), *self.positions.values()):
            found |= words(text) - words(message)
        return found


async def _drop_notes(
    tx: Tx,
    story_id: int,
    exchanges: Collection[str],
    said: Mapping[str, tuple[int, str]],
    taint: frozenset[str],
    carries: Carries,
    *,
    user_id: int,
) -> _Dropped:
    """Take out the anchors and positions these exchanges made that carry a word of the taint
    not their person's own; return them and how many were made for another than `user_id`."""
    wanted = sorted(exchanges)
    copied: dict[str, dict[int, tuple[str, str]]] = {"anchors": {}, "positions": {}}
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
            if carries(str(text), message, taint):
                copied[table][int(note_id)] = (str(text), message)
                if person != user_id:
                    others.add((table, int(note_id)))
    for table, held in copied.items():
        ordered = sorted(held)
        for start in range(0, len(ordered), _BATCH):
            chunk = ordered[start : start + _BATCH]
            marks = ", ".join("?" * len(chunk))
            await tx.execute(f"DELETE FROM {table} WHERE id IN ({marks})", chunk)
    return _Dropped(copied["anchors"], copied["positions"], len(others))


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
            condensed += await story_context.drop_sentences(tx, story_id, set(ids), before=min(ids))
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
        held = await story_context.condensed(store, story_id)
        condensed += sum(1 for i in range(len(held.sentences)) if held.source_of(i) in ids)
    return Leftovers(
        tuple(Leftover(int(r[0]), int(r[1]), str(r[2])) for r in messages),
        int(anchors[0]) if anchors else 0,
        int(positions[0]) if positions else 0,
        int(summaries[0]) if summaries else 0,
        condensed,
    )


async def learned_from(
    store: Store, user_id: int, memory_ids: Collection[int]
) -> dict[int, tuple[str, int, float]]:
    """For each of this person's memories, the first of their stored messages that created or
    confirmed it: (its source id, its story, when it was written). A memory none of whose
    messages is stored any more (forgotten, past the history's days) is left out."""
    wanted = sorted(set(memory_ids))
    found: dict[int, tuple[str, int, float]] = {}
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        rows = await store.fetchall(
            "SELECT e.memory_id, g.source_id, g.story_id, g.created_at FROM memory_events e"
            " JOIN memories m ON m.id = e.memory_id JOIN messages g ON g.source_id = e.exchange_id"
            " WHERE m.user_id = ? AND g.user_id = m.user_id AND e.memory_id IN"
            f" ({', '.join('?' * len(batch))}) ORDER BY e.memory_id, e.id",
            (user_id, *batch),
        )
        for memory_id, source_id, story_id, at in rows:
            found.setdefault(int(memory_id), (str(source_id), int(story_id), float(at)))
    return found
