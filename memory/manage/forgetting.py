"""Forgetting, as people ask for it: one memory, one message and the reply to it, everything
about oneself, or what one server holds about a member who left; and as a front end reports it:
a message deleted or edited where it was said (`forget_deleted`, `forget_exchange`,
`follow_edit`). The bot and the terminal call these, and the background jobs (memory.jobs)
call `settle_pending` and `tidy`; no SQL above this line.

Each erasure is one transaction (memory/store/queries/erasure.py). Then the WAL is checkpointed so
the database files hold nothing of it; when a reader on an older snapshot keeps the checkpoint from
finishing, the erasure is pending (counted in /stats) until `settle_pending` finishes it.

The erasures a person asks for take the running engine, never by default: its turns waiting on
the erased exchanges are dropped, so a reply in flight cannot write back what was forgotten.
`engine=None` is said where no turn can be in flight (a command on the database alone).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.character.cast import derived_id
from memory.errors import Forbidden, NotFound, StoreError
from memory.manage import casting, context
from memory.model import MANUAL_EXCHANGE, Memory
from memory.store import Store, Tx
from memory.store.queries import erasure, provenance, retention
from memory.store.queries.erasure import Erased, Target
from memory.store.queries.provenance import Derived, Leftovers
from memory.store.tables import (
    applied_exchanges,
    counters,
    followups,
    history,
    joined_lines,
    memories,
    off_record,
    outbox,
    reply_versions,
    sent_messages,
)
from memory.store.tables import characters as cast_store
from memory.store.tables.history import HistoryMessage
from memory.text import clean_message
from memory.turn.engine import Engine
from memory.turn.values import VERSIONS_HOURS
from memory.write import filters, state

log = logging.getLogger(__name__)

_BOUNDS = {name: (low, high) for name, (low, high, _, _) in state.DEFAULT_FIELDS.items()}


@dataclass(frozen=True, slots=True)
class Forgotten:
    """One memory erased, and what still holds the words it was learned from."""

    memory: Memory
    still: Leftovers = field(default_factory=Leftovers)
    learned: bool = True  # False: the person wrote it themself (/remember, an import)
    complete: bool = True


async def forget_memory(store: Store, user_id: int, memory_id: int) -> Forgotten:
    """Erase one of the caller's memories for real (row, vector, counters, traces) and say what
    still holds the words it was learned from; NotFound for a missing or another's id."""
    memory = await memories.get(store, user_id, memory_id)
    if memory is None:
        raise NotFound(f"no memory #{memory_id}")
    sources = await provenance.memory_sources(store, user_id, memory_id)
    learned = [s for s in sources if not s.startswith(MANUAL_EXCHANGE)]
    still = await provenance.leftovers(store, learned)
    now = time.time()

    async def run(tx: Tx) -> int | None:
        # As erasure.erase: a reflection shown the memory (another process, PostgreSQL) either
        # commits before this reads, or starts after this commits and finds it gone.
        await tx.serialize("erasure")
        if not (await erasure.delete_memories(tx, user_id, [memory_id])).memories:
            return None
        await erasure.purge_keyword_segments(tx)
        return await erasure.record(tx, "memory", now=now)

    erasure_id = await store.transact(run)
    if erasure_id is None:
        raise NotFound(f"no memory #{memory_id}")
    complete = await _settle(store, [erasure_id])
    return Forgotten(memory, still, learned=bool(learned) or not sources, complete=complete)


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """What one erasure removed, for the person who asked."""

    erased: Erased
    complete: bool
    whose: str = "your"  # "your", "their": whose messages went


async def forget_message(
    store: Store,
    message: HistoryMessage | None,
    *,
    actor_id: int,
    moderator: bool = False,
    engine: Engine | None,
) -> ErasureReport:
    """Forget a stored message (or the reply to one): the message, the reply and greeting that
    answered it, and everything derived from that exchange. Allowed to its author (the person a
    reply answered) and to moderators."""
    if message is None:
        raise NotFound("that message is not in my conversation history")
    if message.role == "user":
        exchange_id, author = message.source_id, message.user_id
    else:
        exchange_id = message.source_id.rpartition(":")[0]
        author = await context.reply_owner(store, message)
    person = author
    if author is not None:  # the id a character knows them by: theirs all the same
        author = (await casting.owner(store, author))[0]
    if not moderator and author != actor_id:
        raise Forbidden(
            "you can forget only your own messages and my replies to you "
            "(moderators: Manage Messages)"
        )
    target = Target.message(exchange_id, user_id=person or 0, story_id=message.story_id)
    if engine is not None:
        engine.drop_waiting(exchange_id=exchange_id)
    answers = await _answers_to(store, exchange_id)
    report = await _erase(store, target)
    # A quick line answered with a later message: that turn read it. Looked up after the line's
    # erasure, so a reply written meanwhile either saw it erased or is found here.
    reader = await joined_lines.reader_of(store, exchange_id)
    if reader is not None:
        await _settle(
            store,
            await _erased(
                store, reader, user_id=person or 0, story_id=message.story_id, engine=engine
            ),
        )
    for m in answers:  # another character's answers to the reply (a scene's chain)
        await _settle(
            store,
            await _erased(
                store, m.source_id, user_id=m.user_id or 0, story_id=m.story_id, engine=engine
            ),
        )
    return ErasureReport(report.erased, report.complete, "your" if author == actor_id else "their")


async def forget_person(
    store: Store,
    user_id: int,
    *,
    origin: str | None = None,
    engine: Engine | None,
    character: str | None = None,
) -> ErasureReport:
    """Erase everything stored about a person, in every server and DM (`origin` None), or what
    one server (`origin`) holds about them: memories, their messages and my replies, reflection
    records, turns, counters, and what was derived from their exchanges. Every character's
    (`character` None), or what one character (its key; `engine` required) holds of them."""
    reports = []
    if character is None:
        cast = engine.characters if engine is not None else None
        ids = [person for person, _ in await casting.person_ids(store, user_id, cast)]
    elif engine is None:
        raise ValueError("forgetting what one character holds needs the engine's cast")
    else:
        # Under the id it keeps them by now, and any it kept them by while memories were
        # shared or not: the setting may have changed since.
        key = engine.characters.need(character).key
        home = key == engine.characters.home
        ids = [user_id if home else derived_id("person", key, user_id)]
        ids += [d for d, k in await casting.person_ids(store, user_id) if k == key and d not in ids]
        if not home:  # what they said to it while memories were shared: under their own id
            for exchange_id, story_id in await cast_store.exchanges_in_stories(store, key, user_id):
                engine.drop_waiting(exchange_id=exchange_id)
                target = Target.message(exchange_id, user_id=user_id, story_id=story_id)
                reports.append(await _erase(store, target))
    for person in ids:
        if engine is not None:
            engine.drop_waiting(user_id=person, origin=origin)
        answers = await _answers_to_person(store, person) if origin is None else []
        target = Target.person(person) if origin is None else Target.member(person, origin)
        reports.append(await _erase(store, target))
        for m in answers:  # another character's answers to their replies (a scene's chain)
            await _settle(
                store,
                await _erased(
                    store, m.source_id, user_id=m.user_id or 0, story_id=m.story_id, engine=engine
                ),
            )
    if character is None and origin is None:

        async def choices(tx: Tx) -> None:
            await cast_store.forget_person(tx, user_id)
            await off_record.forget_person(tx, user_id)
            await followups.forget_person(tx, user_id)

        await store.transact(choices)
    return _together(reports)


def _together(reports: Sequence[ErasureReport]) -> ErasureReport:
    """One report for the erasures of a person's ids (one per character that knew them)."""
    first = reports[0]
    if len(reports) == 1:
        return first
    e = [r.erased for r in reports]
    d = [x.derived for x in e]
    derived = Derived(
        sum(x.anchors for x in d),
        sum(x.positions for x in d),
        sum(x.state_changes for x in d),
        sum(x.summaries for x in d),
        sum(x.condensed for x in d),
    )
    erased = Erased(
        first.erased.erasure_id,
        sum(x.messages for x in e),
        sum(x.memories for x in e),
        tuple(i for x in e for i in x.memories_kept),
        sum(x.outbox for x in e),
        sum(x.turns for x in e),
        derived,
        sum(x.others for x in e),
    )
    return ErasureReport(erased, all(r.complete for r in reports), first.whose)


@dataclass(frozen=True, slots=True)
class Deleted:
    """What following deletions did: people's messages forgotten (with their replies and what
    was made from them), and the character's replies that left the history."""

    forgotten: int = 0
    replies: int = 0
    complete: bool = True


async def forget_deleted(
    store: Store,
    source_ids: Sequence[str],
    posted: Sequence[int] = (),
    *,
    engine: Engine | None,
) -> Deleted:
    """Follow messages deleted where they were said: each stored message of a person (by its
    source id) is forgotten as "Forget this message" forgets it; a reply of the character (by
    the id a front end recorded its post with, `manage.record_sent`) leaves the history. What
    was never stored costs two reads for the whole batch."""
    stored = await history.among(store, [*source_ids, *(f"{s}:reply" for s in source_ids)])
    exchanges = {m.source_id.removesuffix(":reply"): m for m in stored if m.role == "user"}
    for m in stored:  # a message past the history's days: its reply still answers for it
        exchanges.setdefault(m.source_id.removesuffix(":reply"), m)
    answered = set((await sent_messages.exchanges_of(store, posted)).values()) - set(exchanges)
    erasures = []
    for exchange_id, message in sorted(exchanges.items()):
        author = message.user_id or await context.reply_owner(store, message) or 0
        erasures += await _erased(
            store, exchange_id, user_id=author, story_id=message.story_id, engine=engine
        )
    dropped = 0
    for exchange_id in sorted(answered):
        found = await store.transact(
            functools.partial(erasure.drop_reply, exchange_id=exchange_id, now=time.time())
        )
        if found is not None:
            erasures.append(found)
            dropped += 1
    if not erasures:
        return Deleted()
    counts = {"deletions_followed": len(exchanges), "deleted_replies_followed": dropped}
    await store.transact(lambda tx: counters.bump_many(tx, counts))
    log.info(
        "deletions followed: %d messages forgotten, %d replies dropped", len(exchanges), dropped
    )
    return Deleted(len(exchanges), dropped, await _settle(store, erasures))


async def forget_exchange(
    store: Store, exchange_id: str, *, user_id: int, story_id: int, engine: Engine | None
) -> bool:
    """Forget a message deleted while its turn may still run (stored or not yet): its exchange
    is erased and remembered as erased, so the turn stores nothing of it, nor its reply; return
    whether the files are clean (else the erasure is pending). `user_id`, `story_id`: its
    author and where it was said, as the front end knows them; a stored message names its own
    (a character other than the home one keeps both under derived ids)."""
    stored = await resolve(store, exchange_id)
    if stored is not None:
        user_id = stored.user_id or await context.reply_owner(store, stored) or user_id
        story_id = stored.story_id
    erasure_ids = await _erased(
        store, exchange_id, user_id=user_id, story_id=story_id, engine=engine
    )
    await store.transact(lambda tx: counters.bump(tx, "deletions_followed"))
    return await _settle(store, erasure_ids)


async def _erased(
    store: Store, exchange_id: str, *, user_id: int, story_id: int, engine: Engine | None
) -> list[int]:
    """Erase one exchange, and those that answered its reply's posts in turn (another
    character, in a scene's chain: it was shown the reply, which may quote the message); not
    settled. Return the erasures' ids."""
    if engine is not None:
        engine.drop_waiting(exchange_id=exchange_id)
    answers = await _answers_to(store, exchange_id)
    target = Target.message(exchange_id, user_id=user_id, story_id=story_id)
    erased = await store.transact(
        lambda tx: erasure.erase(
            tx,
            target,
            now=time.time(),
            bounds=_BOUNDS,
            words=filters.content_words,
            carries=filters.carries,
        )
    )
    log.info(
        "erasure %d (deleted message): %d memories, %d messages, %d derived",
        erased.erasure_id,
        erased.memories,
        erased.messages,
        erased.derived.total,
    )
    ids = [erased.erasure_id]
    for m in answers:
        ids += await _erased(
            store, m.source_id, user_id=m.user_id or 0, story_id=m.story_id, engine=engine
        )
    return ids


async def _answers_to_person(store: Store, user_id: int) -> list[HistoryMessage]:
    """`_answers_to` for every exchange of a person."""
    posts = [f"{e.partition(':')[0]}:{p}" for e, p in await sent_messages.of_person(store, user_id)]
    return [m for m in await history.among(store, posts) if m.role == "user"]


async def _answers_to(store: Store, exchange_id: str) -> list[HistoryMessage]:
    """The posts of an exchange's reply stored as messages another character answered: a
    post's source id is the exchange's own front end's ("discord:<id>")."""
    front = exchange_id.partition(":")[0]
    posts = await sent_messages.of_exchange(store, exchange_id)
    if not posts:
        return []
    said = await history.among(store, [f"{front}:{p}" for p in posts])
    return [m for m in said if m.role == "user"]


# Seconds an edited message's reflection waits after the edit: edits come in bursts (a typo,
# then another), and the reflection of the last wording is the only one worth a model call.
EDIT_QUIET = 30.0


async def _forget_reader(store: Store, source_id: str, held: HistoryMessage) -> None:
    """Forget the exchange that read this quick line with its own message, if one did."""
    reader = await joined_lines.reader_of(store, source_id)
    if reader is not None:
        erasure_ids = await _erased(
            store, reader, user_id=held.user_id or 0, story_id=held.story_id, engine=None
        )
        await _settle(store, erasure_ids)


async def follow_edit(
    store: Store,
    source_id: str,
    text: str,
    *,
    quiet: float | None = None,
    now: float | None = None,
) -> erasure.Edit | None:
    """Follow an edit of a stored message: the history holds the new wording, what was learned
    from the old one is taken out as "Forget this message" takes it (its reply too, when it
    carries words the new wording does not say), and the exchange is reflected again on the
    new wording, `quiet` seconds after the last edit (None: EDIT_QUIET), by the engine's clock
    (`now`; None: the machine's). Its relative dates still mean what they meant when the
    message was said. An edit that leaves no text forgets the message as a deletion does.
    None: not stored, unchanged, or emptied."""
    text = clean_message(text)
    held = await history.by_source(store, source_id)
    if held is None or held.role != "user" or held.content == text:
        return None  # one read, no write: most edits are of messages never stored
    if not text:  # emptied (an attachment left alone): every word taken back, as deleted
        erasure_ids = await _erased(
            store, source_id, user_id=held.user_id or 0, story_id=held.story_id, engine=None
        )
        await _settle(store, erasure_ids)
        await _forget_reader(store, source_id, held)
        return None
    # A quick line another turn answered with its message: that turn read the old wording,
    # and is forgotten as its message would be (its reply and what was learned from them).
    await _forget_reader(store, source_id, held)
    when = time.time() if now is None else now
    wait = EDIT_QUIET if quiet is None else quiet

    async def run(tx: Tx) -> erasure.Edit | None:
        done = await erasure.edit(
            tx,
            source_id,
            text,
            now=when,
            due=when + wait,
            bounds=_BOUNDS,
            words=filters.content_words,
            carries=filters.carries,
        )
        if done is not None:
            await counters.bump(tx, "edits_followed")
        return done

    done = await store.transact(run)
    if done is None:
        return None
    e = done.erased
    log.info(
        "edit %d followed: %d memories, %d derived taken back, reflected again: %s",
        e.erasure_id,
        e.memories,
        e.derived.total,
        done.requeued,
    )
    erasure_ids = [e.erasure_id]
    if done.reply_dropped:  # it quoted the old wording: so did what answered it in turn
        for m in await _answers_to(store, source_id):
            erasure_ids += await _erased(
                store, m.source_id, user_id=m.user_id or 0, story_id=m.story_id, engine=None
            )
    await _settle(store, erasure_ids)
    return done


@dataclass(frozen=True, slots=True)
class OffRecord:
    """What keeping a message off the record did."""

    new: bool  # False: it was already
    # What had been learned from it and was taken back (None: nothing had been learned yet).
    taken_back: erasure.Erased | None = None
    complete: bool = True


async def keep_off_record(store: Store, source_id: str, *, user_id: int) -> OffRecord:
    """Keep a person's message out of memory, before or after it is answered: it stays in the
    history for the conversation and is never reflected; what was already learned from it is
    taken back as an edit takes back an old wording. `user_id`: its author, as the front end
    knows them (who may ask is the front end's to check)."""
    now = time.time()

    async def run(tx: Tx) -> OffRecord:
        # First: a reflection of it commits before this reads whether it was reflected (then
        # taken back here), or after this commits (then finds the mark and writes nothing).
        await tx.serialize("erasure")
        new = await off_record.mark(tx, source_id, user_id, now=now)
        await outbox.set_aside(tx, source_id)
        if not await applied_exchanges.was_applied(tx, source_id):
            return OffRecord(new)
        erased = await erasure.take_back(
            tx,
            source_id,
            now=now,
            bounds=_BOUNDS,
            words=filters.content_words,
            carries=filters.carries,
        )
        await counters.bump(tx, "kept_off_record")
        return OffRecord(new, erased)

    done = await store.transact(run)
    if done.new and done.taken_back is None:
        await store.transact(lambda tx: counters.bump(tx, "kept_off_record"))
    if done.taken_back is None:
        log.info("exchange %s kept off the record before its reflection", source_id)
        return done
    e = done.taken_back
    log.info(
        "exchange %s kept off the record: erasure %d took back %d memories, %d derived",
        source_id,
        e.erasure_id,
        e.memories,
        e.derived.total,
    )
    return OffRecord(done.new, e, await _settle(store, [e.erasure_id]))


async def _erase(store: Store, target: Target) -> ErasureReport:
    erased = await store.transact(
        lambda tx: erasure.erase(
            tx,
            target,
            now=time.time(),
            bounds=_BOUNDS,
            words=filters.content_words,
            carries=filters.carries,
        )
    )
    log.info(
        "erasure %d (%s): %d memories, %d messages, %d derived, %d of other people",
        erased.erasure_id,
        target.kind,
        erased.memories,
        erased.messages,
        erased.derived.total,
        erased.others,
    )
    return ErasureReport(erased, await _settle(store, [erased.erasure_id]))


async def _settle(store: Store, erasure_ids: Sequence[int], *, scheduled: bool = False) -> bool:
    """Checkpoint the WAL (an SQLite file rewritten first, memory.store.db.Rewrite) so the
    files hold nothing erased; record the erasures complete. False when a reader kept the
    checkpoint from finishing, or a large file waits for its rewrite: they stay pending."""
    if not await store.checkpoint(erasure_ids, scheduled=scheduled):
        # Said once, as the erasure is answered; the job's retries every 30 s (for hours when
        # a large file waits for its rewrite) say it at DEBUG: /stats counts them.
        log.log(
            logging.DEBUG if scheduled else logging.INFO,
            "erasures %s pending: a reader holds an older snapshot, or the file waits for"
            " its rewrite",
            list(erasure_ids),
        )
        return False
    try:
        await store.transact(lambda tx: erasure.complete(tx, erasure_ids, now=time.time()))
    except StoreError as exc:  # the files are clean; the record says so at the next settle
        log.warning("erasures %s not recorded complete (%s)", list(erasure_ids), exc)
    return True


async def settle_pending(store: Store) -> int:
    """Finish the erasures a reader kept pending (the erasures job); return how many remain."""
    waiting = await erasure.pending(store)
    if waiting and not await _settle(store, waiting, scheduled=True):
        return len(waiting)
    return 0


@dataclass(frozen=True, slots=True)
class Tidied:
    """What one pass of the retention rules removed."""

    outbox_texts: int = 0
    messages: int = 0
    tombstones: int = 0
    versions: int = 0  # versions of replies past their time


async def tidy(
    store: Store,
    *,
    history_days: float,
    now: float | None = None,
    versions_hours: float = VERSIONS_HOURS,
) -> Tidied:
    """Apply the retention rules: texts of dropped reflections past their week, messages past
    `history_days` (0: kept), the versions of replies past `versions_hours` (the history keeps
    the one shown), records of erasures completed long ago. Then checkpoint, so
    what went leaves the files."""
    when = time.time() if now is None else now
    texts = await store.transact(lambda tx: retention.purge_dropped(tx, now=when))
    pruned = 0
    if history_days > 0:
        before = when - history_days * 86_400
        while True:
            batch = await store.transact(lambda tx: retention.prune_history(tx, before=before))
            pruned += batch
            if batch < retention.PRUNE_BATCH:
                break
    tombstones = await store.transact(lambda tx: erasure.forget_tombstones(tx, now=when))
    versions = await store.transact(
        lambda tx: reply_versions.prune(tx, before=when - versions_hours * 3600)
    )
    if texts or pruned or versions:
        log.info(
            "retention: %d reflection texts blanked, %d old messages pruned,"
            " %d old versions of replies",
            texts,
            pruned,
            versions,
        )
        await store.checkpoint()
    return Tidied(texts, pruned, tombstones, versions)


async def resolve(store: Store, source_id: str) -> HistoryMessage | None:
    """The stored message an exchange is about: the person's message, or failing that (it was
    pruned) the reply to it."""
    return await history.by_source(store, source_id) or await history.by_source(
        store, f"{source_id}:reply"
    )
