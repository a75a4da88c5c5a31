"""Erasure in the store: one message, one person everywhere, or one person in one server.

`erase` runs in one transaction: it records the erasure and the exchanges it removes (ids only,
kept a while so that a reply or a reflection already under way does not write them back), takes
out what was derived from those exchanges (memory/store/queries/provenance.py), then the
memories, the messages and the replies to them, the outbox rows, the records of the messages
posted for the replies, the turns and the person's counters.

The rows are gone at commit and secure_delete zeroed their bytes in the pages it wrote; the old
pages still sit in the WAL until a checkpoint folds and truncates it, which a reader holding an
older snapshot prevents. The erasure stays pending until then (`pending`, `complete`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from memory.model import Exchange
from memory.store.db import Store, Tx
from memory.store.queries import provenance
from memory.store.queries.provenance import Copied, Derived
from memory.store.tables import (
    applied_exchanges,
    counters,
    memories,
    memory_versions,
    outbox,
    reply_versions,
    story_context,
)

# The exchanges an erasure removed are remembered this long (ids only): far longer than a
# reflection takes, retries included (5 attempts, an hour apart at most).
TOMBSTONE_SECONDS = 2 * 86_400

_ERASED = "SELECT exchange_id FROM erased_exchanges WHERE erasure_id = ?1"


@dataclass(frozen=True, slots=True)
class Target:
    """What to erase: one exchange (a message and the reply to it), or a person's data, in
    every server and DM (`origin` None) or in one server (`origin`, its guild id)."""

    kind: str
    user_id: int
    exchange_id: str | None = None
    story_id: int | None = None
    origin: str | None = None
    # An edit's new wording: the message is rewritten, not erased (None: erased).
    text: str | None = None

    @classmethod
    def message(cls, exchange_id: str, *, user_id: int, story_id: int) -> Target:
        return cls("message", user_id, exchange_id=exchange_id, story_id=story_id)

    @classmethod
    def edited(cls, exchange_id: str, *, user_id: int, story_id: int, text: str) -> Target:
        """The old wording of an edited message: what was made from it goes, and the message
        stays in the history with `text` (see `edit`)."""
        return cls("message", user_id, exchange_id=exchange_id, story_id=story_id, text=text)

    @classmethod
    def person(cls, user_id: int) -> Target:
        return cls("person", user_id)

    @classmethod
    def member(cls, user_id: int, origin: str) -> Target:
        return cls("member", user_id, origin=origin)


@dataclass(frozen=True, slots=True)
class Erased:
    """What one erasure removed."""

    erasure_id: int
    messages: int = 0  # history rows: the person's messages and the replies to them
    memories: int = 0
    # Memories another exchange also created or confirmed: only this one's link to them went.
    memories_kept: tuple[int, ...] = ()
    outbox: int = 0
    turns: int = 0
    derived: Derived = field(default_factory=Derived)
    # Memories, anchors and positions of other people, made by reflections shown what this
    # erasure took out, that carry its words (provenance.copied_from).
    others: int = 0


def _all_words(text: str) -> frozenset[str]:
    return frozenset(text.casefold().split())


def _always(text: str, message: str, taint: frozenset[str]) -> bool:
    return True


async def erase(
    tx: Tx,
    target: Target,
    *,
    now: float,
    bounds: Mapping[str, tuple[float, float]],
    words: provenance.Words = _all_words,
    carries: provenance.Carries = _always,
) -> Erased:
    """Erase the target's data and what was derived from it, recording a pending erasure.
    `words(text)`: a text's words as compared; `carries(text, message, taint)`: whether a text
    a reflection shown the erased words wrote holds one of them (`taint`) that is not its
    person's own `message`'s (then it goes)."""
    # Alone against the transactions that write what may copy the erased words (a reflection,
    # the condensed history), which take this lock shared before anything else: each either
    # commits before this one reads (then is erased with the rest) or starts after this one
    # commits (then sees the erasure). PostgreSQL, several processes: without it, a reflection
    # that checked before this commit and committed after it kept the words in its memory,
    # anchor, position and summary (tests/bot/test_erasure_processes.py). SQLite: one writer.
    await tx.serialize("erasure")
    erasure_id = await tx.execute(
        "INSERT INTO erasures (kind, requested_at) VALUES (?, ?)", (target.kind, now)
    )
    stories = None if target.origin is None else await _stories_of(tx, target.origin)
    await _collect(tx, erasure_id, target, stories)
    removed = await _messages(tx, erasure_id)
    since = await provenance.reflected_since(tx, erasure_id)
    before = await provenance.notes(tx, since)
    taint = await provenance.taint(tx, erasure_id, since=since, rows=removed, words=words)
    derived = await provenance.erase_derived(
        tx, erasure_id, since=since, messages=removed, bounds=bounds
    )
    # Earlier versions made of the erased words; a memory's current words go below.
    earlier = await memory_versions.erase_from(tx, erasure_id)
    erased, kept = await _memories(tx, erasure_id, target)
    copied = await provenance.copied_from(
        tx,
        erasure_id,
        since=since,
        before=before,
        taint=taint,
        user_id=target.user_id,
        words=words,
        carries=carries,
    )
    own, others = await _copied_memories(tx, copied, target.user_id, carries)
    erased += own
    earlier += await memory_versions.erase_copied(tx, copied, carries)
    await tx.execute(
        f"DELETE FROM reflection_inputs WHERE exchange_id IN ({_ERASED})", (erasure_id,)
    )
    await reply_versions.erase(
        tx, erasure_id, user_id=target.user_id if target.kind == "person" else None
    )
    ids = [i for story in removed.values() for i in story]
    if target.text is not None:
        ids = await _rewrite(tx, target, target.text, words=words, carries=carries)
    for start in range(0, len(ids), memories.ID_BATCH):
        batch = ids[start : start + memories.ID_BATCH]
        await tx.execute(f"DELETE FROM messages WHERE id IN ({', '.join('?' * len(batch))})", batch)
    await tx.execute(f"DELETE FROM outbox WHERE exchange_id IN ({_ERASED})", (erasure_id,))
    outbox_rows = await tx.changes()
    await tx.execute(
        f"DELETE FROM applied_exchanges WHERE exchange_id IN ({_ERASED})", (erasure_id,)
    )
    if target.text is None:  # an edited message's reply is still where it was posted
        await tx.execute(
            f"DELETE FROM sent_messages WHERE exchange_id IN ({_ERASED})", (erasure_id,)
        )
    # By the reading exchange only: a line's row outlives the line's own erasure, so that the
    # forgetting finds, after it, the turn that read it (memory.manage.forgetting).
    await tx.execute(f"DELETE FROM joined_lines WHERE exchange_id IN ({_ERASED})", (erasure_id,))
    turns = await _turns(tx, target, stories)
    if erased or others or earlier:  # a replaced wording may linger in old segments
        await purge_keyword_segments(tx)
    return Erased(
        erasure_id, len(ids), erased, kept, outbox_rows, turns, derived, others + copied.others
    )


@dataclass(frozen=True, slots=True)
class Edit:
    """What following one edit of a stored message did."""

    erased: Erased  # what was made from the old wording, taken out
    reflected: bool  # the old wording had been reflected (else its reflection was waiting)
    requeued: bool  # the exchange waits for the reflection of its new wording
    reply_dropped: bool  # the reply left the history: it carried the old wording


async def edit(
    tx: Tx,
    exchange_id: str,
    text: str,
    *,
    now: float,
    due: float,
    bounds: Mapping[str, tuple[float, float]],
    words: provenance.Words = _all_words,
    carries: provenance.Carries = _always,
) -> Edit | None:
    """Follow an edit of a stored message: take out what was made from its old wording, as an
    erasure of that exchange does (the reflection under way, if any, finds its row gone and
    writes nothing), keep the message with its new `text`, and queue its reflection again,
    due at `due`. None when the message is not stored, or already says `text`."""
    row = await tx.fetchone(
        "SELECT user_id, story_id, author_name, content FROM messages WHERE source_id = ?"
        " AND role = 'user'",
        (exchange_id,),
    )
    if row is None or str(row[3]) == text:
        return None
    user_id, story_id, author = int(row[0]), int(row[1]), str(row[2])
    queued = await tx.fetchone(
        "SELECT status, origin FROM outbox WHERE exchange_id = ?", (exchange_id,)
    )
    reflected = await applied_exchanges.was_applied(tx, exchange_id)
    target = Target.edited(exchange_id, user_id=user_id, story_id=story_id, text=text)
    erased = await erase(tx, target, now=now, bounds=bounds, words=words, carries=carries)
    # Not a tombstone: the exchange lives on, with its new wording.
    await tx.execute("DELETE FROM erased_exchanges WHERE erasure_id = ?", (erased.erasure_id,))
    requeued = queued is not None and str(queued[0]) in ("pending", "done")
    if requeued:
        assert queued is not None
        reply = await tx.fetchone(
            "SELECT content FROM messages WHERE source_id = ?", (f"{exchange_id}:reply",)
        )
        exchange = Exchange(
            exchange_id,
            user_id,
            story_id,
            str(queued[1]),
            author,
            text,
            str(reply[0]) if reply else "",
        )
        dropped = await outbox.enqueue(tx, exchange, now=now, due=due)
        await counters.bump(tx, "reflection_dropped_backlog", dropped)
    return Edit(erased, reflected, requeued, erased.messages > 0)


async def take_back(
    tx: Tx,
    exchange_id: str,
    *,
    now: float,
    bounds: Mapping[str, tuple[float, float]],
    words: provenance.Words = _all_words,
    carries: provenance.Carries = _always,
) -> Erased | None:
    """Take out what was learned from a stored message as `edit` takes out an old wording,
    the message and its reply kept in the history as they are (its author keeps it off the
    record), and its reflection not queued again. None when the message is not stored."""
    row = await tx.fetchone(
        "SELECT user_id, story_id, content FROM messages WHERE source_id = ? AND role = 'user'",
        (exchange_id,),
    )
    if row is None:
        return None
    target = Target.edited(exchange_id, user_id=int(row[0]), story_id=int(row[1]), text=str(row[2]))
    erased = await erase(tx, target, now=now, bounds=bounds, words=words, carries=carries)
    # Not a tombstone: the exchange lives on in the history; the mark keeps it unreflected.
    await tx.execute("DELETE FROM erased_exchanges WHERE erasure_id = ?", (erased.erasure_id,))
    return erased


async def drop_reply(tx: Tx, *, exchange_id: str, now: float) -> int | None:
    """Take the character's reply to an exchange out of the history (a post of it was deleted
    where it was said): the row, the condensed sentences taken from it, its text in a
    reflection still waiting, the records of its posts. Return the erasure recorded, or None
    when no reply was stored."""
    await tx.serialize("erasure")  # as `erase`: a condensing turn sees it gone, or is erased
    await tx.execute("DELETE FROM sent_messages WHERE exchange_id = ?", (exchange_id,))
    row = await tx.fetchone(
        "SELECT id, story_id FROM messages WHERE source_id = ?", (f"{exchange_id}:reply",)
    )
    if row is None:
        return None
    await story_context.drop_sentences(tx, int(row[1]), {int(row[0])}, before=int(row[0]))
    await tx.execute("DELETE FROM messages WHERE id = ?", (int(row[0]),))
    await tx.execute(
        "UPDATE outbox SET reply = '' WHERE exchange_id = ? AND status = 'pending'",
        (exchange_id,),
    )
    return await record(tx, "message", now=now)


async def _rewrite(
    tx: Tx, target: Target, text: str, *, words: provenance.Words, carries: provenance.Carries
) -> list[int]:
    """Give an edited message its new wording; return the history rows that go instead: the
    reply, when it carries a word of the old wording the new one does not say (it answered
    words the person took back), else none (the greeting never does)."""
    exchange_id = target.exchange_id or ""
    row = await tx.fetchone("SELECT content FROM messages WHERE source_id = ?", (exchange_id,))
    await tx.execute("UPDATE messages SET content = ? WHERE source_id = ?", (text, exchange_id))
    reply = await tx.fetchone(
        "SELECT id, content FROM messages WHERE source_id = ?", (f"{exchange_id}:reply",)
    )
    if row is None or reply is None:
        return []
    taken_back = words(str(row[0])) - words(text)
    return [int(reply[0])] if carries(str(reply[1]), text, taken_back) else []


async def _stories_of(tx: Tx, origin: str) -> list[int]:
    """The stories (channels) of one server, or of the DMs."""
    rows = await tx.fetchall(
        "SELECT story_id FROM outbox WHERE origin = ?1 UNION SELECT story_id FROM turns"
        " WHERE origin = ?1 UNION SELECT story_id FROM memories WHERE origin = ?1"
        " AND story_id IS NOT NULL",
        (origin,),
    )
    return [int(r[0]) for r in rows]


async def _collect(tx: Tx, erasure_id: int, target: Target, stories: list[int] | None) -> None:
    """List the exchanges this erasure removes: one, or every one the person's data names."""
    insert = (
        "INSERT INTO erased_exchanges (exchange_id, erasure_id, story_id) {select}"
        " ON CONFLICT (exchange_id) DO UPDATE SET erasure_id = excluded.erasure_id"
    )
    if target.exchange_id is not None:
        await tx.execute(
            insert.format(select="VALUES (?, ?, ?)"),
            (target.exchange_id, erasure_id, target.story_id or 0),
        )
        return
    where = "" if stories is None else f" AND story_id IN ({_each(tx, '?3')})"
    params: tuple[object, ...] = (erasure_id, target.user_id)
    if stories is not None:
        params += (json.dumps(stories),)
    for select in (
        "SELECT source_id, ?1, story_id FROM messages WHERE user_id = ?2 AND role = 'user'",
        "SELECT exchange_id, ?1, story_id FROM outbox WHERE user_id = ?2",
        "SELECT exchange_id, ?1, story_id FROM anchors WHERE user_id = ?2"
        " AND length(exchange_id) > 0",
        "SELECT exchange_id, ?1, story_id FROM state_changes WHERE user_id = ?2",
        "SELECT exchange_id, ?1, story_id FROM summary_revisions WHERE user_id = ?2"
        " AND length(exchange_id) > 0",
        "SELECT s.exchange_id, ?1, p.story_id FROM position_sources s JOIN positions p"
        " ON p.id = s.position_id WHERE s.user_id = ?2 AND length(s.exchange_id) > 0",
    ):
        # Every SELECT has a WHERE: an upsert after a bare FROM would parse as a join.
        await tx.execute(insert.format(select=f"{select}{where}"), params)


async def _messages(tx: Tx, erasure_id: int) -> dict[int, list[int]]:
    """Per story, the history rows to remove: the messages and the replies and greetings that
    answered them."""
    rows = await tx.fetchall(
        "SELECT id, story_id FROM messages WHERE source_id IN"
        f" ({_ERASED} UNION SELECT exchange_id || ':reply' FROM erased_exchanges"
        " WHERE erasure_id = ?1 UNION SELECT exchange_id || ':greeting' FROM erased_exchanges"
        " WHERE erasure_id = ?1)",
        (erasure_id,),
    )
    found: dict[int, list[int]] = {}
    for r in rows:
        found.setdefault(int(r[1]), []).append(int(r[0]))
    return found


async def _memories(tx: Tx, erasure_id: int, target: Target) -> tuple[int, tuple[int, ...]]:
    """Erase the target's memories; for one message, those it made, unless another exchange
    since confirmed them: then only this exchange's link goes. Return how many were erased and
    which were kept."""
    if target.kind != "message":
        place = "" if target.origin is None else " AND origin = ?"
        params: tuple[object, ...] = (target.user_id,)
        if target.origin is not None:
            params += (target.origin,)
        rows = await tx.fetchall(f"SELECT id FROM memories WHERE user_id = ?{place}", params)
        return await _delete_memories(tx, target.user_id, [int(r[0]) for r in rows]), ()
    rows = await tx.fetchall(
        "SELECT e.memory_id, e.action, e.exchange_id IN (SELECT exchange_id FROM"
        " erased_exchanges WHERE erasure_id = ?1) FROM memory_events e WHERE e.memory_id IN"
        " (SELECT memory_id FROM memory_events WHERE exchange_id IN (SELECT exchange_id FROM"
        " erased_exchanges WHERE erasure_id = ?1)) AND e.memory_id IN (SELECT id FROM memories"
        " WHERE user_id = ?2) ORDER BY e.memory_id, e.id",
        (erasure_id, target.user_id),
    )
    events: dict[int, list[tuple[str, bool]]] = {}
    for memory_id, action, erased in rows:
        events.setdefault(int(memory_id), []).append((str(action), bool(erased)))
    doomed = [m for m, history in events.items() if not _confirmed(history)]
    kept = tuple(m for m in events if m not in doomed)
    await tx.execute(
        "DELETE FROM memory_events WHERE exchange_id IN (SELECT exchange_id FROM"
        " erased_exchanges WHERE erasure_id = ?)",
        (erasure_id,),
    )
    return await _delete_memories(tx, target.user_id, doomed), kept


async def _copied_memories(
    tx: Tx, copied: Copied, user_id: int, carries: provenance.Carries
) -> tuple[int, int]:
    """Erase the memories whose wording a reflection shown the erased words wrote with one of
    them not its person's own (`carries`, by the taint of its story; as `_confirmed` judges
    erased exchanges).
    Return how many were `user_id`'s and how many other people's."""
    wanted = sorted(copied.exchanges)
    events: dict[int, list[tuple[str, bool]]] = {}
    owners: dict[int, int] = {}
    for start in range(0, len(wanted), memories.ID_BATCH):
        batch = wanted[start : start + memories.ID_BATCH]
        rows = await tx.fetchall(
            "SELECT e.memory_id, e.action, e.exchange_id, m.user_id, m.text FROM memory_events e"
            " JOIN memories m ON m.id = e.memory_id WHERE e.memory_id IN (SELECT memory_id FROM"
            f" memory_events WHERE exchange_id IN ({', '.join('?' * len(batch))}))"
            " ORDER BY e.memory_id, e.id",
            batch,
        )
        earlier = set(owners)
        for memory_id, action, exchange_id, owner, text in rows:
            if int(memory_id) in earlier:
                continue  # seen whole in an earlier batch
            said = copied.exchanges.get(str(exchange_id))
            shown = said is not None and carries(
                str(text), said[1], copied.taint.get(str(exchange_id), frozenset())
            )
            events.setdefault(int(memory_id), []).append((str(action), shown))
            owners[int(memory_id)] = int(owner)
    doomed: dict[int, list[int]] = {}
    for memory_id, history in events.items():
        if not _confirmed(history):
            doomed.setdefault(owners[memory_id], []).append(memory_id)
    own = others = 0
    for owner, ids in doomed.items():
        gone = await _delete_memories(tx, owner, ids)
        own, others = (own + gone, others) if owner == user_id else (own, others + gone)
    return own, others


def _confirmed(history: list[tuple[str, bool]]) -> bool:
    """Whether a memory stands without the erased exchanges, from its events in order
    ((action, erased)): its wording was written by another exchange, or the erased one created
    it and another said the same again later (absorbed). A wording an erased exchange rewrote
    (merged: a richer variant) is that exchange's words."""
    wrote = max((i for i, (action, _) in enumerate(history) if action != "absorbed"), default=-1)
    if wrote < 0:  # made before its events were recorded
        return any(not erased for _, erased in history)
    if not history[wrote][1]:
        return True
    action = history[wrote][0]
    return action == "created" and any(not erased for _, erased in history[wrote + 1 :])


async def _delete_memories(tx: Tx, user_id: int, ids: list[int]) -> int:
    erased = 0
    for start in range(0, len(ids), memories.ID_BATCH):
        erased += await memories.delete(tx, user_id, ids[start : start + memories.ID_BATCH])
    return erased


async def _turns(tx: Tx, target: Target, stories: list[int] | None) -> int:
    """Remove the person's turns (what each selected) and read counters; for one message, the
    words that recalled their memories by keyword in that conversation (they may be its)."""
    if target.kind == "message":
        await tx.execute(
            "UPDATE turn_selections SET matched = '' WHERE matched <> '' AND turn_id IN"
            " (SELECT id FROM turns WHERE user_id = ? AND story_id = ?)",
            (target.user_id, target.story_id),
        )
        return 0
    if stories is None:
        await tx.execute("DELETE FROM turns WHERE user_id = ?", (target.user_id,))
        removed = await tx.changes()
        await tx.execute("DELETE FROM turn_buckets WHERE user_id = ?", (target.user_id,))
        return removed
    await tx.execute(
        "DELETE FROM turns WHERE user_id = ? AND origin = ?", (target.user_id, target.origin)
    )
    removed = await tx.changes()
    await tx.execute(
        "DELETE FROM turn_buckets WHERE user_id = ? AND bucket IN"
        f" (SELECT 'story:' || value FROM ({_each(tx, '?')}) AS stories)",
        (target.user_id, json.dumps(stories)),
    )
    return removed


async def was_erased(tx: Tx, exchange_id: str) -> bool:
    """Tell whether an erasure removed this exchange (lately: see TOMBSTONE_SECONDS)."""
    row = await tx.fetchone("SELECT 1 FROM erased_exchanges WHERE exchange_id = ?", (exchange_id,))
    return row is not None


async def story_erased_since(tx: Tx, story_id: int, since: float) -> bool:
    """Tell whether an erasure removed an exchange of this story at or after `since`."""
    row = await tx.fetchone(
        "SELECT 1 FROM erased_exchanges x JOIN erasures e ON e.id = x.erasure_id"
        " WHERE x.story_id = ? AND e.requested_at >= ? LIMIT 1",
        (story_id, since),
    )
    return row is not None


async def purge_keyword_segments(tx: Tx) -> None:
    """Merge the keyword index's segments: old ones keep a deleted text's terms until then.

    PostgreSQL keeps a memory's words in its own row, gone with it; the vacuum after an erasure
    (Store.checkpoint) clears the dead entries of the index."""
    if tx.dialect == "sqlite":
        await tx.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")


def _each(tx: Tx, param: str) -> str:
    """A query of the integers of a JSON array parameter, in a column named value."""
    if tx.dialect == "postgres":
        return (
            f"SELECT CAST(v AS BIGINT) AS value FROM jsonb_array_elements_text(CAST({param} AS"
            " jsonb)) AS v"
        )
    return f"SELECT value FROM json_each({param})"


async def record(tx: Tx, kind: str, *, now: float) -> int:
    """Record a pending erasure that names no exchange (one memory); return its id."""
    return await tx.execute("INSERT INTO erasures (kind, requested_at) VALUES (?, ?)", (kind, now))


async def pending(store: Store) -> list[int]:
    """The erasures whose files were not cleaned yet."""
    rows = await store.fetchall("SELECT id FROM erasures WHERE completed_at IS NULL ORDER BY id")
    return [int(r[0]) for r in rows]


async def complete(tx: Tx, erasure_ids: Iterable[int], *, now: float) -> None:
    """Record that the files no longer hold what these erasures removed."""
    await tx.executemany(
        "UPDATE erasures SET completed_at = max(?, requested_at) WHERE id = ?",
        [(now, i) for i in erasure_ids],
    )


async def forget_tombstones(tx: Tx, *, now: float) -> int:
    """Drop the records of erasures completed more than TOMBSTONE_SECONDS ago (their exchange
    ids go with them); return how many."""
    await tx.execute(
        "DELETE FROM erasures WHERE completed_at IS NOT NULL AND requested_at < ?",
        (now - TOMBSTONE_SECONDS,),
    )
    return await tx.changes()
