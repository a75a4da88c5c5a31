"""Apply one exchange's reflection to the store: screen, dedup/merge, insert — in one transaction.

Idempotent per exchange id: the exchange is recorded in the same transaction as its effects, so a
retried outbox row (or a crash between commit and acknowledgement) writes nothing twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import TypeVar

from memory.lexicon.dates import Span, annotate, machine_zone
from memory.model import DM_ORIGIN, Candidate, Exchange, Memory, Scope, Source
from memory.store import Store, Tx
from memory.store.generations import GenerationMoved
from memory.store.queries import erasure, provenance
from memory.store.tables import (
    applied_exchanges,
    counters,
    memories,
    memory_dates,
    memory_versions,
    off_record,
    outbox,
    timings,
)
from memory.write import supersede
from memory.write.dedup import Action, Decision
from memory.write.dedup_index import DedupIndex, IndexCache, IndexKey, release
from memory.write.dedup_pool import IndexBuilder, build_in_thread
from memory.write.filters import screen
from memory.write.reflection import Reflection
from memory.write.stances import apply_positions
from memory.write.state import apply_deltas
from memory.write.summary import apply_summary

log = logging.getLogger(__name__)

T = TypeVar("T")

# Builds of a dedup index outside the write transaction before the last one, under it: a
# person's memories change between two builds only if they keep forgetting or changing their
# privacy choice faster than a build (seconds at 100k memories).
BUILD_ATTEMPTS = 3
# Commits that another process's commit to the same person failed (GenerationMoved, PostgreSQL)
# are tried again after a random pause, up to this many times in all: three processes writing
# for the same people without pauses failed all three tries about once in ten runs of
# tests/memory/test_processes_stress.py, and the reflection was asked of the model again.
COMMIT_ATTEMPTS = 6
MOVED_PAUSE = 0.05


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one candidate: created / merged / absorbed into a memory, or rejected."""

    action: str
    reason: str = ""
    memory_id: int | None = None
    score: float | None = None
    # The memory's wording after it (/remember says what it stored); "" when not told.
    text: str = ""


@dataclass(frozen=True, slots=True)
class WriteReport:
    """Everything one exchange's reflection did, for counting and for display."""

    exchange_id: str
    outcomes: tuple[Outcome, ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    already_applied: bool = False
    # The exchange was forgotten before its reflection could be written: nothing was.
    erased: bool = False
    # Its author keeps it off the record ("Don't remember this"): nothing was written.
    off_record: bool = False
    # Its outbox row was claimed by another worker after this one's lease expired: nothing
    # was written (that worker applies it).
    stale: bool = False
    memories: tuple[Memory, ...] = field(default=(), repr=False)

    def counts(self) -> Counter[str]:
        """Return how many candidates ended in each action."""
        return Counter(o.action for o in self.outcomes)


async def apply_reflection(
    store: Store,
    exchange: Exchange,
    reflection: Reflection,
    *,
    character_name: str,
    now: float,
    indexes: IndexCache | None = None,
    lease: outbox.Lease | None = None,
    builder: IndexBuilder | None = None,
    shown: provenance.Shown | None = None,
    zone: tzinfo | None = None,
    shown_memories: Mapping[int, str] | None = None,
) -> WriteReport:
    """Apply a parsed reflection for one exchange in one transaction; idempotent per exchange.

    `indexes` keeps dedup indexes between calls, `builder` builds them in another process
    (the worker passes its own). With the `lease` of the exchange's outbox row, the same
    transaction first checks that the lease still holds the row (else writes nothing but a
    counter: a stale result) and then marks it done. `shown`: the story's notes its prompt held,
    recorded with it (so that forgetting them reaches what it made); ShownErased, with nothing
    written, when an erasure took part of them out since. `zone`: the time zone the exchange's
    relative dates are read in (None: the machine's). `shown_memories`: the person's memories
    the reflection was shown, by id, with the wording it was shown: the only ones a candidate
    may replace (memory.write.supersede), and only while that wording is still the current one
    (else the proposal is refused as stale: the person's edit, or another change, wins). One of
    them erased since: ShownErased, nothing written (the model may have copied its words).
    """
    shown_wording: Mapping[int, str] = shown_memories or {}

    screening = screen(
        reflection.candidates,
        user_message=exchange.user_message,
        character_name=character_name,
        user_name=exchange.user_name,
    )

    async def run(tx: Tx, index: DedupIndex) -> WriteReport:
        if lease is not None and not await outbox.holds(tx, lease):
            if not await erasure.was_erased(tx, exchange.exchange_id):  # else: row erased
                await counters.bump(tx, "reflection_stale_discarded")
                return WriteReport(exchange.exchange_id, stale=True)
        elif lease is not None:
            await outbox.mark_done(tx, lease.row.id)
        if await applied_exchanges.was_applied(tx, exchange.exchange_id):
            return WriteReport(exchange.exchange_id, already_applied=True)
        if await erasure.was_erased(tx, exchange.exchange_id):
            # Forgotten while the model was reflecting on it: nothing of it is written back.
            return WriteReport(exchange.exchange_id, erased=True)
        if await off_record.marked(tx, exchange.exchange_id):
            # Checked here, under the erasure lock the mark takes: a mark made while the model
            # was reflecting is seen, or its taking back erases what this commits.
            await counters.bump(tx, "reflection_skipped_off_record")
            return WriteReport(exchange.exchange_id, off_record=True)
        if shown is not None:
            if await provenance.shown_erased(tx, exchange.story_id, shown):
                raise ShownErased(exchange.exchange_id)
            await provenance.record_shown(
                tx, exchange.exchange_id, exchange.story_id, shown, now=now
            )
        # The person's memories it was shown, as they are now: one forgotten since, and the
        # model may have copied its words (ask again); one changed since (an edit, a restore,
        # another replacement), and it is not this reflection's to change again.
        current = await memories.texts_of(tx, exchange.user_id, list(shown_wording))
        if len(current) < len(shown_wording):
            raise ShownErased(exchange.exchange_id)
        changed = frozenset(i for i, text in shown_wording.items() if current[i] != text)
        # The memories this reflection replaced: the wording it was shown is no longer the
        # current one, and a second proposal naming one is stale too.
        replaced: set[int] = set()
        outcomes = [Outcome("rejected", reason) for _, reason in screening.rejected]
        touched: list[Memory] = []
        said_at = await outbox.queued_at(tx, exchange.exchange_id) or now
        amounts: Counter[str] = Counter()
        for kept in screening.kept:
            candidate, spans = dated(kept, said_at, zone)
            outcome, memory = await _replace_or_merge(
                tx,
                index,
                candidate,
                exchange,
                shown_wording,
                changed,
                replaced,
                amounts,
                now=now,
            )
            await record_dates(tx, outcome, memory, spans)
            outcomes.append(outcome)
            touched.append(memory)
        if await _story_notes_current(tx, exchange):
            amounts.update(await _apply_story_notes(tx, exchange, reflection, now=now))
        else:
            amounts["story_notes_skipped_after_erasure"] += 1
        for outcome in outcomes:
            name = f"rejected:{outcome.reason}" if outcome.action == "rejected" else outcome.action
            amounts[f"memories_{name}"] += 1
        for _, reason in reflection.dropped:
            amounts[f"reflection_dropped:{reason}"] += 1
        await counters.bump_many(tx, amounts)
        report = WriteReport(
            exchange.exchange_id, tuple(outcomes), reflection.dropped, memories=tuple(touched)
        )
        await applied_exchanges.record_applied(
            tx, exchange.exchange_id, _report_json(report), now=now
        )
        await timings.count_reflection(tx, [_daily(o) for o in outcomes], now=now)
        return report

    report = await with_index(
        store,
        exchange.user_id,
        exchange.story_id,
        exchange.origin,
        run,
        indexes=indexes,
        builder=builder,
        needed=bool(screening.kept),
    )
    if report.stale:
        log.warning(
            "reflection of exchange %s discarded: its lease no longer holds the row"
            " (expired and taken over, or the message was edited meanwhile)",
            exchange.exchange_id,
        )
    elif report.erased:
        log.info(
            "exchange %s was forgotten before its reflection: nothing written", exchange.exchange_id
        )
    elif report.off_record:
        log.info("exchange %s is off the record: nothing written", exchange.exchange_id)
    elif not report.already_applied:
        log.info(
            "exchange %s applied: %s, %d dropped",
            exchange.exchange_id,
            dict(sorted(report.counts().items())),
            len(report.dropped),
        )
    return report


async def _replace_or_merge(
    tx: Tx,
    index: DedupIndex,
    candidate: Candidate,
    exchange: Exchange,
    shown: Collection[int],
    changed: Collection[int],
    stale: set[int],
    amounts: Counter[str],
    *,
    now: float,
) -> tuple[Outcome, Memory]:
    """A candidate that says it replaces a memory replaces it if the code agrees (its refusals
    counted in `amounts`; a replacement made joins `stale`); otherwise, and for every other
    candidate, `merge_candidate`, which never rewrites the refused target nor a memory shown in
    a wording no longer current (`changed`)."""
    keep = set(changed)
    if candidate.replaces is not None:
        target: Memory | None
        refusal: supersede.Refusal | None
        if candidate.replaces in changed or candidate.replaces in stale:
            target, refusal = None, supersede.Refusal.STALE
        else:
            target, refusal = await supersede.check(
                tx,
                index,
                candidate,
                user_id=exchange.user_id,
                story_id=exchange.story_id,
                origin=exchange.origin,
                shown=shown,
            )
        if target is not None:
            memory = await supersede.replace(
                tx,
                index,
                target,
                candidate,
                exchange_id=exchange.exchange_id,
                ended_by="reflection",
                now=now,
            )
            stale.add(memory.id)
            return Outcome("superseded", memory_id=memory.id), memory
        amounts[f"supersession_refused:{refusal}"] += 1
        keep.add(candidate.replaces)
    return await merge_candidate(
        tx,
        index,
        candidate,
        exchange_id=exchange.exchange_id,
        user_id=exchange.user_id,
        story_id=exchange.story_id,
        origin=exchange.origin,
        now=now,
        keep=keep,
        amounts=amounts,
    )


def _daily(outcome: Outcome) -> tuple[str, str]:
    """An outcome as the daily figures count it: a replacement rewrote a memory's wording."""
    if outcome.action == "superseded":
        return "merged", "superseded"
    return outcome.action, outcome.reason or ""


class ShownErased(Exception):
    """An erasure took out part of what the reflection was shown (its words may be in what
    the model proposed) while the model was answering: nothing was written; ask again."""


class _Moved(Exception):
    """The user's memories changed in a way the prepared index cannot be patched for."""


async def with_index(
    store: Store,
    user_id: int,
    story_id: int,
    origin: str,
    fn: Callable[[Tx, DedupIndex], Awaitable[T]],
    *,
    indexes: IndexCache | None = None,
    builder: IndexBuilder | None = None,
    needed: bool = True,
) -> T:
    """Run `fn` in one write transaction with the user's dedup index for this story and place,
    current inside it (an empty one when not `needed`: nothing to merge).

    The index (seconds at 100k memories) is taken from `indexes` or built before the
    transaction, by `builder` (another process when large) or in a worker thread: the write
    lock and the event loop never wait on it.
    Inside, the store's generation says whether it is still current; if not, it is patched
    with the memories changed since, or (changes no longer known) built again outside. A commit
    of another process between that read and this commit (PostgreSQL) fails this one
    (GenerationMoved): it is tried again the same way after a random pause, up to
    COMMIT_ATTEMPTS times in all.
    """
    if not needed:

        async def unindexed(tx: Tx) -> T:
            await tx.serialize("erasure", shared=True)  # see _attempt
            return await fn(tx, DedupIndex())

        return await store.transact(unindexed)
    key = (user_id, story_id, origin == DM_ORIGIN)
    builds = moved = 0
    while True:
        try:
            last = builds >= BUILD_ATTEMPTS - 1
            return await _attempt(store, key, origin, fn, indexes, builder, last=last)
        except _Moved:
            builds += 1
            log.info(
                "user %d: memories changed while their dedup index was built (%d)", user_id, builds
            )
        except GenerationMoved:
            moved += 1
            if moved >= COMMIT_ATTEMPTS:
                raise
            log.info(
                "user %d: memories changed in another process before this commit (%d)",
                user_id,
                moved,
            )
            # Out of step with the other writer, which may be retrying too.
            await asyncio.sleep(random.uniform(0, MOVED_PAUSE * moved))


async def _attempt(
    store: Store,
    key: IndexKey,
    origin: str,
    fn: Callable[[Tx, DedupIndex], Awaitable[T]],
    indexes: IndexCache | None,
    builder: IndexBuilder | None,
    *,
    last: bool,
) -> T:
    user_id, story_id, _ = key
    built_at = await store.sync_generation(user_id)
    index = indexes.get(key, built_at) if indexes else None
    if index is None:
        index = await _build(store, key, origin, builder)
    # (generation inside the transaction, whether the commit touched the user, the index used)
    used: list[tuple[int, bool, DedupIndex]] = []

    async def run(tx: Tx) -> T:
        # First, before any row lock: an erasure running in another process commits before
        # this reads what it checks (was the exchange, or its story, erased?), or waits for
        # this commit and erases what it wrote (erasure.erase).
        await tx.serialize("erasure", shared=True)
        current = index
        # Read inside the write transaction: no commit of this process can slip in before ours,
        # and the commit fails if another process's did (the store verifies it).
        generation = await store.generation_in(tx, user_id)
        if generation != built_at:
            changed = store.changed_since(user_id, built_at)
            if changed is None and not last:
                raise _Moved
            if changed is None:  # a last resort: built under the lock, still off the loop
                current = await _build(tx, key, origin, builder)
            else:
                now = await memories.merge_pool_among(tx, user_id, story_id, origin, changed)
                await asyncio.to_thread(_patch_index, current, changed, now)
        result = await fn(tx, current)
        used.append((generation, user_id in tx.touched.users, current))
        return result

    try:
        result = await store.transact(run)
    except _Moved:
        raise
    except BaseException:
        if indexes is not None:
            # It may hold memories of a rolled-back transaction.
            await release(indexes.discard(key))
        raise
    if indexes is not None and used:
        generation, touched, current = used[0]
        # Our commit bumped the generation exactly once if it touched the user's memories.
        await release(indexes.put(key, generation + touched, current))
    return result


async def _build(
    db: Store | Tx, key: IndexKey, origin: str, builder: IndexBuilder | None
) -> DedupIndex:
    rows = await memories.merge_rows(db, key[0], key[1], origin)
    if builder is None:
        return await asyncio.to_thread(build_in_thread, rows)
    return await builder.build(rows)


def _patch_index(index: DedupIndex, changed: Collection[int], now: Iterable[Memory]) -> None:
    """`index` with the memories of `changed` as they are `now` (gone when absent)."""
    for memory_id in changed:
        index.remove(memory_id)
    for memory in now:
        index.add(memory)


async def _story_notes_current(tx: Tx, exchange: Exchange) -> bool:
    """Whether the summary, anchors and positions this reflection read are still current:
    not when something of its story was forgotten since the exchange was queued (they may have
    carried the forgotten words, and the reflection copied them)."""
    queued = await outbox.queued_at(tx, exchange.exchange_id)
    return queued is None or not await erasure.story_erased_since(tx, exchange.story_id, queued)


async def _apply_story_notes(
    tx: Tx, exchange: Exchange, reflection: Reflection, *, now: float
) -> Counter[str]:
    """The story's summary, anchors, positions and state, each recording this exchange."""
    source = Source(exchange.exchange_id, exchange.user_id)
    story = exchange.story_id
    amounts: Counter[str] = Counter()
    amounts.update(
        await apply_summary(
            tx,
            story,
            summary=reflection.summary,
            new_anchors=list(reflection.new_anchors),
            drops=list(reflection.drop_anchors),
            now=now,
            source=source,
        )
    )
    amounts.update(
        await apply_positions(tx, story, list(reflection.positions), now=now, source=source)
    )
    amounts.update(await apply_deltas(tx, story, reflection.state, now=now, source=source))
    return amounts


def dated(
    candidate: Candidate, said_at: float, zone: tzinfo | None
) -> tuple[Candidate, tuple[Span, ...]]:
    """The candidate with the date of each relative date it names written after it, said at
    `said_at` (the exchange was queued then) in `zone` (None: the machine's), and those dates.

    The date goes into the text, in parentheses, rather than replacing the words: the person's
    own words stay readable, the date is shown wherever the text is (the prompt, /memories, an
    export), and the dedup compares it (memory.write.dedup.carriers)."""
    text, spans = annotate(candidate.text, said_at, zone or machine_zone(said_at))
    return (replace(candidate, text=text) if spans else candidate), spans


async def record_dates(tx: Tx, outcome: Outcome, memory: Memory, spans: tuple[Span, ...]) -> None:
    """Record the days a created or rewritten memory means (an absorbed one keeps its own)."""
    if outcome.action != Action.ABSORB.value:
        await memory_dates.record(tx, memory.id, [(s.first, s.last) for s in spans])


async def merge_candidate(
    tx: Tx,
    index: DedupIndex,
    candidate: Candidate,
    *,
    exchange_id: str,
    user_id: int,
    story_id: int,
    origin: str,
    now: float,
    keep: Collection[int] = (),
    amounts: Counter[str] | None = None,
) -> tuple[Outcome, Memory]:
    """Create the candidate or merge it into its closest variant in `index` (kept up to date).

    A merge that says more rewrites the variant through `memory_versions.supersede` (its wording
    before kept as a version ended by "merge"), unless the variant is in `keep` (a replacement
    the code refused, or a wording the reflection was shown that changed since): then the
    candidate is created beside it (a repeat, the cheap error), counted as
    `merge_refused:kept`."""
    # A word most of the person's memories contain makes a decision walk all of them in Python
    # (make bench-loop, 100k memories with one word in all: 0.8 s of the loop's thread when it
    # ran there): in a worker thread, like the updates below (the index is used by one
    # transaction at a time, under the write lock).
    decision = await asyncio.to_thread(index.decide, candidate.text)
    target = decision.target
    if decision.action is Action.REPLACE and target is not None and target.id in keep:
        if amounts is not None:
            amounts["merge_refused:kept"] += 1
        decision = Decision(Action.CREATE)
        target = None
    if decision.action is Action.CREATE or target is None:
        memory = await memories.insert(
            tx,
            user_id=user_id,
            text=candidate.text,
            kind=candidate.kind,
            scope=candidate.scope,
            story_id=story_id,
            origin=origin,
            confidence=candidate.confidence,
            now=now,
        )
        await asyncio.to_thread(index.add, memory)
    elif decision.action is Action.REPLACE:
        # A global wording widens a story memory: the person said it holds everywhere.
        scope = Scope.GLOBAL if Scope.GLOBAL in (candidate.scope, target.scope) else Scope.STORY
        memory = await memory_versions.supersede(
            tx,
            target,
            text=candidate.text,
            scope=scope,
            confidence=max(candidate.confidence, target.confidence),
            ended_by="merge",
            exchange_id=exchange_id,
            now=now,
            score=decision.score,
        )
        await asyncio.to_thread(index.replace, target, memory)
        return Outcome(decision.action.value, memory_id=memory.id, score=decision.score), memory
    else:
        # Absorbed: nothing is rewritten and the date does not move, or a fact the person keeps
        # repeating would climb the recency ranking over fresher memories.
        memory = target
    await applied_exchanges.record_event(
        tx, memory.id, exchange_id, decision.action.value, decision.score, now=now
    )
    return Outcome(decision.action.value, memory_id=memory.id, score=decision.score), memory


def _report_json(report: WriteReport) -> str:
    # Ids, actions and reasons only: no memory text leaves the memories table.
    return json.dumps(
        {
            "outcomes": [
                {"action": o.action, "reason": o.reason, "memory_id": o.memory_id}
                for o in report.outcomes
            ],
            "dropped": [list(d) for d in report.dropped],
        }
    )
