"""Orchestration of a turn and of what follows it. No Discord types: ids and text only."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace

from memory import lexicon
from memory.admission import NOTICE_INTERVAL, TURN_QUEUE, Admission, AdmissionStatus
from memory.bulk import quiet
from memory.context import ContextBuilder, ContextConfig
from memory.errors import BackendResponseError, Overloaded, StoreError, unexpected
from memory.llm import ChatBackend, Embedder
from memory.looplag import LoopLag
from memory.model import Exchange, Kind, Origin, Selected
from memory.read import calibrate, recall, selection
from memory.read.budget import ContextPlan
from memory.read.prompt import Character, StoryContext, fill_user
from memory.read.semantic import (
    COSINE_FLOOR,
    MATRIX_CACHE_SIZE,
    RELATIVE_SD,
    TURN_EMBEDDING_TIMEOUT,
    VectorCache,
    embed_query,
)
from memory.read.strategies import Registry
from memory.store import counters, erasure, history, memories, outbox, privacy, timings, turns
from memory.store import story as shared
from memory.store.db import Store, Tx
from memory.store.outbox import BACKLOG_PER_PERSON as BACKLOG_PER_PERSON
from memory.text import clean, clean_message, well_formed, words
from memory.write import stances, state

log = logging.getLogger(__name__)

# (user, story) candidate pools kept in memory; the least recently used goes first.
POOL_CACHE_SIZE = 1024
# Warmed at start-up: the (person, story, place) of the most recent turns of the last week, as
# many as the matrix cache holds.
WARM_PLACES = MATRIX_CACHE_SIZE
WARM_DAYS = 7.0
# Message ids remembered in memory against replays (the database remembers them all).
REMEMBERED_MESSAGE_IDS = 4096
# Characters of a reply: two Discord messages. A small model that loops can otherwise fill a
# channel with one answer (seen: a 135M model repeating a line until max_tokens).
MAX_REPLY_CHARS = 4_000
# Exchanges kept in memory while the database refuses them (busy, full); past it the oldest is
# dropped and counted. About an hour of a busy server's turns, a few MB at most.
MAX_WAITING_EXCHANGES = 1_000
# Greetings stored before a turn that failed, kept until a reply to that person goes out. One
# per person who met the character during an outage; past it the oldest is no longer sent.
MAX_GREETINGS_DUE = 4_096


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The read path's numbers (defaults: what was measured, see selection.py)."""

    limit: int = selection.DEFAULT_LIMIT
    semantic_slots: int = selection.SEMANTIC_SLOTS
    threshold: float = selection.COSINE_THRESHOLD
    quotas: Mapping[Kind, int] = field(default_factory=lambda: dict(selection.DEFAULT_QUOTAS))
    # Eligibility for recall by meaning: relative to this query's score distribution (a
    # threshold read from the scores, valid for any model), never below the absolute floor.
    relative_sd: float | None = RELATIVE_SD
    cosine_floor: float = COSINE_FLOOR
    turn_embedding_timeout: float = TURN_EMBEDDING_TIMEOUT
    chat_deadline: float = 120.0
    # Turns of one person in one place waiting behind the one answered (see admission.py).
    turn_queue: int = TURN_QUEUE
    slow_down_interval: float = NOTICE_INTERVAL
    max_reply_chars: int = MAX_REPLY_CHARS
    # Reflections one person may have waiting; past it their oldest are dropped, counted.
    reflection_backlog: int = BACKLOG_PER_PERSON
    # Where memories are served unless a person chose otherwise (`[privacy]`, /privacy).
    memories_served: str = privacy.WHERE_LEARNED


@dataclass(frozen=True, slots=True)
class Recall:
    """The memories one turn uses, why, and whether the turn ran without semantic scores."""

    turn_id: int
    selected: tuple[Selected, ...]
    degraded: bool
    # Why it was degraded (timings.EMBEDDING or timings.VECTORS), "" when it was not.
    why_degraded: str = ""


@dataclass(frozen=True, slots=True)
class Incoming:
    """A message to answer. `source_id` is unique per message (e.g. "discord:<message id>")."""

    source_id: str
    user_id: int
    user_name: str
    story_id: int
    origin: Origin
    text: str


@dataclass(frozen=True, slots=True)
class Reply:
    """The character's answer to one message, and the memories it used."""

    text: str
    exchange_id: str
    recall: Recall
    # The character's greeting, sent before the reply: the first reply to go out to this person
    # here (after a failed first turn, the next one that succeeds).
    greeting: str | None = None
    # Characters cut off the end of the model's answer (over max_reply_chars); `text` is what
    # was kept, stored and reflected.
    cut: int = 0


@dataclass(frozen=True, slots=True)
class EngineStatus:
    """What the engine holds in memory and what it turned away since start-up (for /stats)."""

    admission: AdmissionStatus
    exchanges_waiting: int
    exchanges_dropped: int
    # Turns served by keywords and the deterministic passes while their matrix loaded.
    turns_before_vectors: int = 0
    # The event loop's longest stall in the last minute, seconds (None: not measured).
    longest_stall: float | None = None


class Engine:
    """The memory engine of one character: recall before the reply, reflection after it."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None,
        chat: ChatBackend | None = None,
        character: Character | None = None,
        config: MemoryConfig | None = None,
        context: ContextConfig | None = None,
        strategies: Registry | None = None,
        clock: Callable[[], float] = time.time,
        loop_lag: LoopLag | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.loop_lag = loop_lag
        self.chat = chat
        self.character = character or Character(name="Écho", persona="")
        self.config = config or MemoryConfig()
        self.clock = clock
        self.vectors = VectorCache(store)
        self.context = ContextBuilder(
            store, character=self.character, chat_model=chat.model if chat else "none",
            config=context, registry=strategies, clock=clock,
        )  # fmt: skip
        self._unfit: frozenset[str] | None = None
        self.admission = Admission(
            queue=self.config.turn_queue, notice_interval=self.config.slow_down_interval
        )
        # Exchanges the database refused (busy, full), written by the next flush. Only the
        # flush that holds `_flushing` takes from it.
        self._pending: deque[Exchange] = deque()
        self._flushing = asyncio.Lock()
        self._flush_task: asyncio.Task[int] | None = None
        self.exchanges_dropped = 0
        # Recent message ids, so a replay is ignored even when the database could not record it.
        self._answered: deque[str] = deque(maxlen=REMEMBERED_MESSAGE_IDS)
        # (user, story, origin) -> (generation, pool, whether the person's memories are
        # served everywhere): a change of their choice bumps the generation too.
        self._pools: OrderedDict[tuple[int, int, str], tuple[int, selection.RankedPool, bool]] = (
            OrderedDict()
        )
        # (story, user) -> the greeting stored with their first message here and its source id,
        # until a reply carries it. Only that person's turns touch their key, one at a time.
        self._greetings_due: OrderedDict[tuple[int, int], tuple[str, str]] = OrderedDict()

    async def _pool(
        self, user_id: int, story_id: int, origin: str
    ) -> tuple[selection.RankedPool, bool]:
        """The user's candidates here in rank order, and whether their memories are served
        everywhere: patched with the memories that changed since it was built (a forgotten one
        leaves it before the next turn), rebuilt only when the changes are no longer known (a
        change of the person's privacy choice names no memory: it rebuilds)."""
        generation = self.store.generation(user_id)
        key = (user_id, story_id, origin)
        cached = self._pools.get(key)
        if cached is not None and cached[0] == generation:
            self._pools.move_to_end(key)
            return cached[1], cached[2]
        changed = None if cached is None else self.store.changed_since(user_id, cached[0])
        if cached is not None and changed is not None:
            everywhere = cached[2]
            current = await memories.visible_among(
                self.store, user_id, story_id, origin, changed, everywhere=everywhere
            )
            # O(N) copies: 30+ ms at 100k memories, off the loop like the build below.
            pool = (
                await asyncio.to_thread(quiet(cached[1].patched), changed, current)
                if changed
                else cached[1]
            )
        else:
            choice = await privacy.memories_served(self.store, user_id)
            everywhere = (choice or self.config.memories_served) == privacy.EVERYWHERE
            visible = await memories.visible(
                self.store, user_id, story_id, origin, counters=False, everywhere=everywhere
            )
            # A sort of every candidate (seconds at 100k memories): in a worker thread, so the
            # event loop serves everyone else meanwhile.
            pool = await asyncio.to_thread(quiet(selection.RankedPool.build), visible)
        # Another turn may have stored a newer pool while this one awaited the database.
        newer = self._pools.get(key)
        if newer is not None and newer[0] > generation:
            return pool, everywhere
        self._pools[key] = (generation, pool, everywhere)
        if len(self._pools) > POOL_CACHE_SIZE:
            self._pools.popitem(last=False)
        return pool, everywhere

    @property
    def character_name(self) -> str:
        """The name the character answers as (what the front ends show before its lines)."""
        return self.character.name

    async def warm_up(self, *, places: int = WARM_PLACES, days: float = WARM_DAYS) -> int:
        """Build the pools and load the matrices of the most recently active people, one after
        another (start-up): their first turn finds them ready. Return the places warmed."""
        try:
            recent = await turns.recent_places(
                self.store, since=self.clock() - days * 86_400, limit=places
            )
            for user_id, story_id, origin in recent:
                await self._pool(user_id, story_id, origin)
                if self.embedder is not None:
                    await self.vectors.matrix(user_id, self.embedder.model)
        except StoreError as exc:
            log.warning("caches not warmed at start-up: %s", exc)
            return 0
        log.info("caches warmed for %d recent places", len(recent))
        return len(recent)

    def status(self) -> EngineStatus:
        return EngineStatus(
            self.admission.status(), len(self._pending), self.exchanges_dropped,
            self.vectors.status().turns_before_vectors,
            self.loop_lag.longest() if self.loop_lag else None,
        )  # fmt: skip

    async def turn(self, message: Incoming, *, admitted: bool = False) -> Reply | None:
        """Answer a message: store it, recall, ask the chat backend, store the reply, queue the
        reflection. Return None for an empty message or one already answered (same source id).

        Turns of one person in one place run one after another: Overloaded when too many wait
        (unless the caller `admitted` the turn itself, inside `self.admit`); all other turns
        run concurrently. A chat failure raises BackendError after the message was stored: it
        stays in history.
        """
        if self.chat is None:
            raise RuntimeError("this engine has no chat backend")
        if admitted:
            return await self._answer(message)
        async with self.admit(message) as fresh:
            return await self._answer(message) if fresh else None

    @contextlib.asynccontextmanager
    async def admit(self, message: Incoming) -> AsyncIterator[bool]:
        """Claim the message and hold this person's turn in this place for the block; yield
        False for a replay (already answered, or waiting in line: it never takes a place).
        Overloaded, decided before any await, gives the claim back: a redelivery may be
        answered. A front end that wraps more than the turn in the line (typing, sending)
        uses this, then `turn(admitted=True)`."""
        if message.source_id in self._answered:
            yield False
            return
        self._answered.append(message.source_id)
        try:
            async with self.admission.turn(message.user_id, message.story_id):
                yield True
        except Overloaded:  # only entering the line raises it
            self._answered.remove(message.source_id)
            raise

    async def _answer(self, message: Incoming) -> Reply | None:
        # A display name is text from a person like any other (a lone surrogate in it would
        # fail every write and every request).
        message = replace(message, user_name=clean(message.user_name) or "someone")
        text = clean_message(message.text)
        if not text:
            return None
        if self._pending:  # what a refusing database left behind, written in the background
            self._flush_soon()
        started = time.monotonic()
        # The history before this message: up to its own row, or everything stored so far when
        # the database could not take it.
        before_id: int | None = None
        greeting: str | None = None
        try:
            before_id, greeting = await self.store.transact(
                lambda tx: self._store_message(tx, message, text)
            )
        except StoreError as exc:
            # The database is busy or full: answer anyway (a turn never waits on memory).
            log.warning("message %s not stored (%s): answering anyway", message.source_id, exc)
        else:
            if before_id is None:
                log.info("message %s was already answered: ignored", message.source_id)
                return None
            if greeting is not None:
                self._greeting_due(message, greeting)
        recalled = await self.recall(
            user_id=message.user_id, story_id=message.story_id, origin=message.origin, text=text
        )
        plan = await self.context.plan(
            user_name=message.user_name, story_id=message.story_id, origin=message.origin,
            text=text, selected=recalled.selected,
            story=await story_context(self.store, message.story_id), before_id=before_id,
        )  # fmt: skip
        assert self.chat is not None
        result = await self.chat.chat(
            plan.messages, deadline=self.config.chat_deadline,
            max_tokens=self.context.config.response_tokens,
        )  # fmt: skip
        await self.context.after_reply(message.story_id, plan, result.prompt_tokens)
        answer, cut = cap_reply(well_formed(result.content).strip(), self.config.max_reply_chars)
        if not answer:
            raise BackendResponseError("the chat backend returned an empty reply")
        if cut:
            log.info("reply to %s cut by %d characters", message.source_id, cut)
        exchange = Exchange(
            message.source_id, message.user_id, message.story_id, message.origin,
            message.user_name, text, answer,
        )  # fmt: skip
        # Written before the turn ends, so this person's next message, waiting in their line,
        # comes after this reply in the history.
        if await self._write_exchange(exchange):
            await self._record_timing(recalled, plan, (time.monotonic() - started) * 1000.0)
        else:  # the database refused the exchange: the reply must not wait on it twice
            log.info("timing of the turn on %s not recorded", message.source_id)
        greeting = await self._deliver_greeting(message)
        return Reply(answer, message.source_id, recalled, greeting, cut)

    async def _record_timing(self, recalled: Recall, plan: ContextPlan, latency_ms: float) -> None:
        """Record the turn's latency and context plan for the operator's page; never raises."""
        planned = timings.TurnPlan(
            recalled.turn_id, latency_ms, plan.strategy, plan.tokens, plan.budget.prompt,
            tuple(
                timings.PlannedBlock(d.block.kind.value, d.block.key, d.status.value, d.reason,
                                     d.tokens)
                for d in plan.decisions
            ),
        )  # fmt: skip
        try:
            await timings.record(
                self.store, turn_id=recalled.turn_id, latency_ms=latency_ms,
                degraded=recalled.why_degraded, plan=planned, now=self.clock(),
            )  # fmt: skip
        except StoreError as exc:
            log.warning("turn timing not recorded (%s)", exc)
        except Exception as exc:
            log.error("turn timing not recorded: %s", unexpected(exc))

    def _greeting_due(self, message: Incoming, greeting: str) -> None:
        """Keep a stored greeting until a reply to this person here goes out with it."""
        key = (message.story_id, message.user_id)
        self._greetings_due[key] = (greeting, _greeting_source(message))
        if len(self._greetings_due) > MAX_GREETINGS_DUE:
            story_id, user_id = self._greetings_due.popitem(last=False)[0]
            log.warning("greeting to user %d in story %d dropped: %d others wait for a reply",
                        user_id, story_id, MAX_GREETINGS_DUE)  # fmt: skip

    async def _deliver_greeting(self, message: Incoming) -> str | None:
        """The greeting this reply carries, if one waits for this person here. One stored with
        an earlier message (whose turn failed) takes this message's greeting source id: it is
        sent as an answer to this one, and a front end finds it from there."""
        due = self._greetings_due.pop((message.story_id, message.user_id), None)
        if due is None:
            return None
        greeting, stored_as = due
        sent_with = _greeting_source(message)
        if stored_as != sent_with:
            try:
                await self.store.transact(lambda tx: history.move_source(tx, stored_as, sent_with))
            except StoreError as exc:
                log.warning("greeting %s not moved to %s (%s)", stored_as, sent_with, exc)
        return greeting

    async def _store_message(
        self, tx: Tx, message: Incoming, text: str
    ) -> tuple[int | None, str | None]:
        """Store the message, after the character's greeting when it meets this person here for
        the first time (the greeting is then the history the reply continues)."""
        greeting = None
        greetings = self.character.greetings
        if greetings and not await history.has_spoken(tx, message.story_id, message.user_id):
            seed = hashlib.sha256(f"{message.user_id}:{message.story_id}".encode()).digest()
            chosen = greetings[int.from_bytes(seed[:4], "big") % len(greetings)]
            greeting = fill_user(chosen, message.user_name)
            await history.add_reply(
                tx, source_id=_greeting_source(message), story_id=message.story_id,
                author_name=self.character.name, content=greeting, now=self.clock(),
            )  # fmt: skip
        row = await history.add_user_message(
            tx, source_id=message.source_id, story_id=message.story_id, user_id=message.user_id,
            author_name=message.user_name, content=text, now=self.clock(),
        )  # fmt: skip
        return row, greeting

    async def _write_exchange(self, exchange: Exchange) -> bool:
        """Store the reply and queue the reflection; keep the exchange for a later flush if
        the database refuses it (then False). Never raises: the reply goes out whatever
        happens here."""
        stored = await self._stored(exchange)
        if stored is None:
            self._wait_for_database(exchange)
        return bool(stored)

    async def _stored(self, exchange: Exchange) -> bool | None:
        """Write one exchange: True when written, None when the database refused it (busy,
        full: worth another try), False when a bug dropped it (counted, logged)."""
        try:
            await self.store.transact(functools.partial(self._record, exchange=exchange))
        except StoreError as exc:
            log.warning("exchange %s waits for the database (%s)", exchange.exchange_id, exc)
            return None
        except Exception as exc:
            # A bug on one exchange must not fail whoever writes it, nor stop the others.
            self.exchanges_dropped += 1
            log.error("exchange %s dropped: %s", exchange.exchange_id, unexpected(exc))
            return False
        return True

    def _flush_soon(self) -> None:
        if self._flush_task is None or self._flush_task.done():
            self._flush_task = asyncio.create_task(self.flush_pending())

    def _wait_for_database(self, exchange: Exchange, *, first: bool = False) -> None:
        """Keep an exchange until the database takes it; the oldest goes past the bound."""
        if len(self._pending) >= MAX_WAITING_EXCHANGES:
            lost = exchange if first else self._pending.popleft()
            self.exchanges_dropped += 1
            log.error("exchange %s dropped: %d already wait for the database",
                      lost.exchange_id, len(self._pending))  # fmt: skip
            if first:
                return
        if first:
            self._pending.appendleft(exchange)
        else:
            self._pending.append(exchange)

    async def flush_pending(self) -> int:
        """Store the replies and queue the reflections that are waiting (some refused by a busy
        or full database); return how many were written.

        One flush at a time: a call while another runs returns 0 at once, the running one takes
        what was added meanwhile. Each exchange is popped before it is written and put back
        first in line if the database refuses it, so nothing is written twice or lost.
        """
        if self._flushing.locked():
            return 0
        written = 0
        async with self._flushing:
            while self._pending:
                exchange = self._pending.popleft()
                stored = await self._stored(exchange)
                if stored is None:
                    self._wait_for_database(exchange, first=True)
                    break
                written += stored
        return written

    def drop_waiting(
        self, *, user_id: int | None = None, origin: str | None = None, exchange_id: str = ""
    ) -> int:
        """Forget the exchanges waiting for the database that an erasure covers (one exchange,
        or a person's, everywhere or in one server); return how many."""

        def covered(e: Exchange) -> bool:
            if exchange_id:
                return e.exchange_id == exchange_id
            return e.user_id == user_id and origin in (None, e.origin)

        kept = [e for e in self._pending if not covered(e)]
        dropped = len(self._pending) - len(kept)
        self._pending.clear()
        self._pending.extend(kept)
        return dropped

    async def _record(self, tx: Tx, *, exchange: Exchange) -> None:
        e = exchange
        if await erasure.was_erased(tx, e.exchange_id):
            return  # forgotten while the reply was being written: nothing of it is stored
        await history.add_reply(
            tx, source_id=f"{e.exchange_id}:reply", story_id=e.story_id,
            author_name=self.character.name, content=e.reply, now=self.clock(),
        )  # fmt: skip
        dropped = await outbox.enqueue(
            tx, e, now=self.clock(), backlog=self.config.reflection_backlog
        )
        if dropped:
            await counters.bump(tx, "reflection_dropped_backlog", dropped)
            log.warning("user %d: %d oldest reflections dropped (backlog of %d)",
                        e.user_id, dropped, self.config.reflection_backlog)  # fmt: skip

    async def _unfit_for(self, text: str) -> bool:
        """Tell whether calibration found the embedding model unfit for the message's language."""
        if self.embedder is None:
            return False
        if self._unfit is None:
            self._unfit = await calibrate.unfit_languages(self.store, self.embedder.model)
        language = lexicon.detect_language(words(text))
        return language is not None and language in self._unfit

    async def preview(
        self, *, user_id: int, user_name: str, story_id: int, origin: str, text: str = ""
    ) -> ContextPlan:
        """The prompt the next message would get, and why; records nothing, moves no counter."""
        recalled = await self.recall(
            user_id=user_id, story_id=story_id, origin=origin, text=clean_message(text),
            record=False,
        )  # fmt: skip
        return await self.context.plan(
            user_name=user_name, story_id=story_id, origin=origin, text=clean_message(text),
            selected=recalled.selected, story=await story_context(self.store, story_id),
        )  # fmt: skip

    async def recall(
        self, *, user_id: int, story_id: int, origin: str, text: str, record: bool = True
    ) -> Recall:
        """Select this user's memories for a message, record the turn, move the counters."""
        candidates, everywhere = await self._pool(user_id, story_id, origin)
        keywords = await recall.keyword_hits(
            self.store, user_id=user_id, story_id=story_id, origin=origin, text=text,
            everywhere=everywhere,
        )  # fmt: skip
        scores: dict[int, float] | None = None
        threshold = self.config.threshold
        degraded = False
        why_degraded = ""
        if self.embedder is not None and text.strip():
            query = await embed_query(
                self.embedder, text, timeout=self.config.turn_embedding_timeout
            )
            if query is None:
                degraded, why_degraded = True, timings.EMBEDDING
                log.warning("degraded turn: user %d, story %d", user_id, story_id)
            elif await self._unfit_for(text):
                pass  # the model cannot rank this language: keyword recall carries the turn
            else:
                relative = self.config.relative_sd
                floor = self.config.threshold if relative is None else self.config.cosine_floor
                try:
                    places = selection.recall_places(self.config.limit, self.config.semantic_slots)
                    scores, threshold = await self.vectors.scores(
                        user_id, self.embedder.model, query, floor=floor, relative_sd=relative,
                        places=places,
                    )  # fmt: skip
                except BackendResponseError as exc:
                    # The query cannot be scored against the stored vectors (another dimension).
                    degraded, why_degraded = True, timings.VECTORS
                    log.warning(
                        "degraded turn: user %d, story %d (%s)", user_id, story_id,
                        type(exc).__name__,
                    )  # fmt: skip
        chosen = selection.select(
            candidates,
            scores,
            keywords=keywords,
            limit=self.config.limit,
            threshold=threshold,
            semantic_slots=self.config.semantic_slots,
            quotas=self.config.quotas,
        )
        if not record:
            return Recall(0, tuple(chosen), degraded, why_degraded)
        try:
            turn_id = await turns.record(
                self.store,
                turns.TurnRecord(user_id, story_id, origin),
                chosen,
                degraded=degraded,
                now=self.clock(),
            )
        except StoreError as exc:
            # Counters and /why miss this turn; the reply does not wait for the database.
            log.warning("turn not recorded (%s)", exc)
            turn_id = 0
        return Recall(turn_id, tuple(chosen), degraded, why_degraded)


async def story_context(store: Store, story_id: int) -> StoryContext:
    """Gather what the loops keep about a story, for the prompt and for /summary."""
    positions = await stances.for_story(store, story_id)
    speakers = await shared.position_speakers(store, story_id)
    return StoryContext(
        summary=await history.summary(store, story_id),
        anchors=tuple(
            (a.text, "a moderator" if a.added_by is not None else a.speaker or "")
            for a in await shared.anchors(store, story_id)
            if a.dropped_at is None
        ),
        positions=tuple(
            (p.topic, p.idea, ", ".join(speakers.get(p.id, ())))
            for p in positions[: stances.PROMPT_POSITIONS]
        ),
        state=tuple((await state.for_story(store, story_id)).items()),
    )


def _greeting_source(message: Incoming) -> str:
    # The greeting sent as an answer to this message (front ends look it up by this id).
    return f"{message.source_id}:greeting"


def cap_reply(text: str, limit: int) -> tuple[str, int]:
    """Cut a reply to at most `limit` characters, at a space when one is near the end; return
    the kept text and how many characters were cut."""
    if len(text) <= limit:
        return text, 0
    kept = text[:limit]
    space = kept.rfind(" ", int(limit * 0.9))
    if space > 0:
        kept = kept[:space]
    kept = kept.rstrip()
    return kept, len(text) - len(kept)
