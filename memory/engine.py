"""Orchestration of a turn and of what follows it. No Discord types: ids and text only.

The engine composes the parts a turn goes through: admission (admission.py), the person's
candidate pool and recall (here), the context (context.py), the greeting due (greetings.py),
writing the exchange (exchanges.py) and the turn's timing (timing.py). Its values
(MemoryConfig, Incoming, Reply, Recall, EngineStatus) live in memory/turn/values.py, which the
turn's parts import too; the front ends take them from the package's face (memory)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import tzinfo

from memory import lexicon
from memory.backends.chat import ChatBackend, Embedder
from memory.bulk import quiet
from memory.character.cast import Characters
from memory.context.budget import ContextPlan
from memory.context.builder import ContextBuilder, ContextConfig
from memory.context.prompt import Character
from memory.context.story import read_story
from memory.context.strategies import Registry
from memory.errors import BackendResponseError, NotFound, Overloaded, StoreError
from memory.lexicon import dates
from memory.looplag import LoopLag
from memory.model import Exchange
from memory.recall import conversation, lexical, scoring, selection
from memory.recall.cache import (
    ENTRY_BYTES,
    MIB,
    POOL_BYTES,
    POOL_BYTES_PER_MEMORY,
    CacheBudget,
    SizedCache,
)
from memory.recall.semantic import VectorCache
from memory.store import characters as cast_store
from memory.store import history, memories, outbox, privacy, turns
from memory.store.db import Store, Tx
from memory.store.story_snapshot import StorySnapshot
from memory.text import clean, clean_message, well_formed, words
from memory.turn.admission import Admission
from memory.turn.exchanges import ExchangeWriter
from memory.turn.greetings import Greetings
from memory.turn.reply_cap import cap_reply
from memory.turn.timing import record_timing
from memory.turn.values import EngineStatus, Incoming, MemoryConfig, Recall, Reply
from memory.vectors import calibrate

log = logging.getLogger(__name__)

# Warmed at start-up: the (person, story, place) of the most recent turns of the last week, at
# most this many (the caches' bound in bytes may keep fewer: the first warmed go first).
WARM_PLACES = 64
WARM_DAYS = 7.0
# Message ids remembered in memory against replays (the database remembers them all).
REMEMBERED_MESSAGE_IDS = 4096
# Seconds the embedding model's verdict per language is kept before it is read again: a
# calibration saved by another process (`echo calibrate` beside a running bot) reaches the
# turns within this, for one small read a minute.
UNFIT_TTL = 60.0


def _pool_bytes(entry: tuple[int, selection.RankedPool, bool]) -> int:
    pool = entry[1]
    return ENTRY_BYTES + POOL_BYTES + POOL_BYTES_PER_MEMORY * (len(pool.ordered) + len(pool.rules))


class Engine:
    """The memory engine of one character: recall before the reply, reflection after it."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None,
        chat: ChatBackend | None = None,
        character: Character | None = None,
        characters: Characters | None = None,
        config: MemoryConfig | None = None,
        context: ContextConfig | None = None,
        strategies: Registry | None = None,
        clock: Callable[[], float] = time.time,
        loop_lag: LoopLag | None = None,
        zone: tzinfo | None = None,
    ) -> None:
        self.store = store
        # The time zone a message's times are read in ("yesterday"; None: the machine's).
        self.zone = zone
        self.embedder = embedder
        self._warmed = False
        self.loop_lag = loop_lag
        self.chat = chat
        # Every character it plays ("character" alone: a cast of one); `character` is the
        # default one, the one a message naming none is answered as.
        self.characters = characters or Characters([character or Character("Écho", "")])
        self.character = self.characters.default
        self.config = config or MemoryConfig()
        self.clock = clock
        # Every per-person cache of this engine (and of a reflection worker given it) together
        # stays under [limits] cache_mb (memory.recall.cache).
        self.caches = CacheBudget(self.config.cache_mb * MIB)
        # What the store knows of each person's generation counts too.
        store.bound_generations(self.caches)
        self.vectors = VectorCache(store, budget=self.caches)
        self.contexts = {
            c.key: ContextBuilder(
                store,
                character=c,
                chat_model=chat.model if chat else "none",
                config=context,
                registry=strategies,
                clock=clock,
            )
            for c in self.characters
        }
        self.context = self.contexts[self.character.key]
        self._unfit: tuple[float, frozenset[str]] | None = None  # (read at, languages)
        self.admission = Admission(
            queue=self.config.turn_queue, notice_interval=self.config.slow_down_interval
        )
        self.exchanges = ExchangeWriter(
            store, author=self.character.name, clock=clock,
            backlog=lambda: self.config.reflection_backlog,
        )  # fmt: skip
        # Recent message ids, so a replay is ignored even when the database could not record it.
        self._answered: deque[str] = deque(maxlen=REMEMBERED_MESSAGE_IDS)
        # (user, story, origin) -> (generation, pool, whether the person's memories are
        # served everywhere): a change of their choice bumps the generation too.
        self._pools: SizedCache[tuple[int, int, str], tuple[int, selection.RankedPool, bool]] = (
            SizedCache(self.caches, _pool_bytes)
        )
        self.all_greetings = {c.key: Greetings(store, c, clock) for c in self.characters}
        self.greetings = self.all_greetings[self.character.key]

    async def _pool(
        self, user_id: int, story_id: int, origin: str
    ) -> tuple[selection.RankedPool, bool]:
        """The user's candidates here in rank order, and whether their memories are served
        everywhere: patched with the memories that changed since it was built (a forgotten one
        leaves it before the next turn), rebuilt only when the changes are no longer known (a
        change of the person's privacy choice names no memory: it rebuilds). The person's
        generation is read from the database first (one indexed read): another process's
        commit rebuilds it too, and the vector matrix checked after it in the turn."""
        generation = await self.store.sync_generation(user_id)
        key = (user_id, story_id, origin)
        cached = self._pools.peek(key)
        if cached is not None and cached[0] == generation:
            self._pools.get(key)  # just used
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
        newer = self._pools.peek(key)
        if newer is not None and newer[0] > generation:
            return pool, everywhere
        self._pools.put(key, (generation, pool, everywhere))
        return pool, everywhere

    @property
    def character_name(self) -> str:
        """The name the character answers as (what the front ends show before its lines)."""
        return self.character.name

    async def warm_up(self, *, places: int = WARM_PLACES, days: float = WARM_DAYS) -> int:
        """Build the pools and load the matrices of the most recently active people, one after
        another (start-up): their first turn finds them ready. Return the places warmed (0
        once done: the background started again at each login try finds the caches kept)."""
        if self._warmed:
            return 0
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
        self._warmed = True
        log.info("caches warmed for %d recent places", len(recent))
        return len(recent)

    def status(self) -> EngineStatus:
        return EngineStatus(
            self.admission.status(), self.exchanges.waiting, self.exchanges.dropped,
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

    def as_played(self, message: Incoming) -> tuple[Incoming, Character]:
        """The message as its character knows it: the person's and the story's ids that
        character keeps them under (memory.character.cast), and the character."""
        playing = self.characters.playing(message.character)
        return replace(
            message,
            user_id=self.characters.person_id(playing.key, message.user_id),
            story_id=self.characters.story_id(playing.key, message.story_id),
            character=playing.key,
        ), playing

    def _derived(self, real: Incoming, played: Incoming) -> list[tuple[int, str, int, str]]:
        key = played.character
        pairs = ((played.user_id, cast_store.PERSON, real.user_id),
                 (played.story_id, cast_store.STORY, real.story_id))  # fmt: skip
        return [(d, kind, r, key) for d, kind, r in pairs if d != r]

    async def _answer(self, message: Incoming) -> Reply | None:
        # A display name is text from a person like any other (a lone surrogate in it would
        # fail every write and every request).
        message = replace(message, user_name=clean(message.user_name) or "someone")
        text = clean_message(message.text)
        if not text:
            return None
        real = message
        message, playing = self.as_played(message)
        derived = self._derived(real, message)
        context, greetings = self.contexts[playing.key], self.all_greetings[playing.key]
        if self.exchanges.waiting:  # what a refusing database left behind, written meanwhile
            self.exchanges.flush_soon()
        started = time.monotonic()
        # The history before this message: up to its own row, or everything stored so far when
        # the database could not take it.
        before_id: int | None = None
        greeting: str | None = None

        async def store_message(tx: Tx) -> tuple[int | None, str | None]:
            await cast_store.record_ids(tx, derived)
            return await greetings.store_message(tx, message, text)

        try:
            before_id, greeting = await self.store.transact(store_message)
        except StoreError as exc:
            # The database is busy or full: answer anyway (a turn never waits on memory).
            log.warning("message %s not stored (%s): answering anyway", message.source_id, exc)
        else:
            if before_id is None:
                log.info("message %s was already answered: ignored", message.source_id)
                return None
            if greeting is not None:
                greetings.due(message, greeting)
        story = await self._story(message.story_id, before_id)
        recalled = await self.recall(
            user_id=message.user_id, story_id=message.story_id, origin=message.origin, text=text,
            earlier=self._conversation(message.user_id, story),
            exchange_id=message.source_id if before_id is not None else "",
        )  # fmt: skip
        plan = await context.plan(
            user_name=message.user_name, origin=message.origin, text=text,
            selected=recalled.selected, story=story, window=recalled.window,
        )  # fmt: skip
        assert self.chat is not None
        result = await self.chat.chat(
            plan.messages, deadline=self.config.chat_deadline,
            max_tokens=context.config.response_tokens,
        )  # fmt: skip
        await context.after_reply(message.story_id, plan, result.prompt_tokens)
        answer, cut = cap_reply(well_formed(result.content).strip(), self.config.max_reply_chars)
        if not answer:
            raise BackendResponseError("the chat backend returned an empty reply")
        if cut:
            log.info("reply to %s cut by %d characters", message.source_id, cut)
        exchange = Exchange(
            message.source_id, message.user_id, message.story_id, message.origin,
            message.user_name, text, answer, playing.name,
        )  # fmt: skip
        # Written before the turn ends, so this person's next message, waiting in their line,
        # comes after this reply in the history.
        if await self.exchanges.write(exchange):
            latency_ms = (time.monotonic() - started) * 1000.0
            await record_timing(self.store, recalled, plan, latency_ms, now=self.clock())
        else:  # the database refused the exchange: the reply must not wait on it twice
            log.info("timing of the turn on %s not recorded", message.source_id)
        greeting = await greetings.deliver(message)
        return Reply(answer, message.source_id, recalled, greeting, cut)

    @property
    def exchanges_dropped(self) -> int:
        """Exchanges lost since start-up: past the bound of those waiting, or to a bug."""
        return self.exchanges.dropped

    async def flush_pending(self) -> int:
        """Write the exchanges a busy or full database refused; see ExchangeWriter."""
        return await self.exchanges.flush_pending()

    async def regenerate(
        self,
        exchange_id: str,
        *,
        without: frozenset[int] = frozenset(),
        on_text: Callable[[str], Awaitable[None]] | None = None,
    ) -> Reply:
        """Stand-in for C2 (branch swipe builds it): answer the stored message of this exchange
        again, with the history before it; the new answer replaces the stored reply."""
        asked = await history.by_source(self.store, exchange_id)
        queued = await outbox.get(self.store, exchange_id)
        if asked is None or asked.user_id is None or queued is None or self.chat is None:
            raise NotFound("that message can no longer be answered again")
        story = await self._story(asked.story_id, asked.id)
        recalled = await self.recall(
            user_id=asked.user_id, story_id=asked.story_id, origin=queued.exchange.origin,
            text=asked.content, record=False,
        )  # fmt: skip
        # Answered again by the character whose story it is.
        key = (await cast_store.owner(self.store, cast_store.STORY, asked.story_id))[1]
        context = self.contexts[self.characters.playing(key or self.characters.home).key]
        plan = await context.plan(
            user_name=asked.author_name, origin=queued.exchange.origin, text=asked.content,
            selected=recalled.selected, story=story, window=recalled.window,
        )  # fmt: skip
        result = await self.chat.chat(
            plan.messages, deadline=self.config.chat_deadline,
            max_tokens=context.config.response_tokens,
        )  # fmt: skip
        answer, cut = cap_reply(well_formed(result.content).strip(), self.config.max_reply_chars)
        if not answer:
            raise BackendResponseError("the chat backend returned an empty reply")
        await self.store.transact(lambda tx: history.replace_reply(tx, exchange_id, answer))
        return Reply(answer, exchange_id, recalled, None, cut)

    def claimed(self, source_id: str) -> bool:
        """Whether this engine took the message for a turn lately: answered, or its turn still
        running or waiting (an edit or a deletion of it then waits for, or races, that turn)."""
        return source_id in self._answered

    def drop_waiting(
        self, *, user_id: int | None = None, origin: str | None = None, exchange_id: str = ""
    ) -> int:
        """Forget the exchanges waiting for the database that an erasure covers (one exchange,
        or a person's, everywhere or in one server); return how many."""
        return self.exchanges.drop_waiting(user_id=user_id, origin=origin, exchange_id=exchange_id)

    async def _unfit_for(self, text: str) -> bool:
        """Tell whether calibration found the embedding model unfit for the message's language."""
        if self.embedder is None:
            return False
        now = self.clock()
        if self._unfit is None or not 0 <= now - self._unfit[0] < UNFIT_TTL:
            self._unfit = (now, await calibrate.unfit_languages(self.store, self.embedder.model))
        language = lexicon.detect_language(words(text))
        return language is not None and language in self._unfit[1]

    async def _story(self, story_id: int, before_id: int | None) -> StorySnapshot:
        """The story as this turn sees it, read once for the conversation query and the prompt:
        the history before the message's own row `before_id` (None: all stored so far)."""
        return await read_story(
            self.store, story_id, before_id=before_id,
            history_messages=self.context.config.history_messages,
        )  # fmt: skip

    def _conversation(self, user_id: int, story: StorySnapshot) -> tuple[str, ...]:
        """The person's own messages just before this one (the conversation query's text);
        none when nothing would score them."""
        if self.embedder is None or self.config.conversation_slots <= 0:
            return ()
        return conversation.recent_messages(story.conversation, user_id)

    async def preview(
        self,
        *,
        user_id: int,
        user_name: str,
        story_id: int,
        origin: str,
        text: str = "",
        character: str = "",
    ) -> ContextPlan:
        """The prompt the next message would get, and why; records nothing, moves no counter."""
        playing = self.characters.playing(character)
        user_id = self.characters.person_id(playing.key, user_id)
        story_id = self.characters.story_id(playing.key, story_id)
        story = await self._story(story_id, None)
        recalled = await self.recall(
            user_id=user_id, story_id=story_id, origin=origin, text=clean_message(text),
            record=False, earlier=self._conversation(user_id, story),
        )  # fmt: skip
        return await self.contexts[playing.key].plan(
            user_name=user_name, origin=origin, text=clean_message(text),
            selected=recalled.selected, story=story, window=recalled.window,
        )  # fmt: skip

    async def recall(
        self,
        *,
        user_id: int,
        story_id: int,
        origin: str,
        text: str,
        record: bool = True,
        earlier: Sequence[str] = (),
        exchange_id: str = "",
    ) -> Recall:
        """Select this user's memories for a message, record the turn, move the counters.

        `earlier`: the person's own messages just before this one, oldest first; they recall
        by meaning too, as a second, weaker query (memory.recall.conversation). `exchange_id`: the
        message's, when it is stored; the turn is not recorded if it is erased meanwhile."""
        candidates, everywhere = await self._pool(user_id, story_id, origin)
        keywords = await lexical.keyword_recall(
            self.store, user_id=user_id, story_id=story_id, origin=origin, text=text,
            everywhere=everywhere,
        )  # fmt: skip
        scored = scoring.Scored(None, None, self.config.threshold)
        if self.embedder is not None and text.strip():
            scored = await scoring.score(
                self.vectors, self.embedder, self.config, user_id=user_id, story_id=story_id,
                candidates=candidates, text=text, earlier=earlier,
                unfit=lambda: self._unfit_for(text),
            )  # fmt: skip
        now = self.clock()
        found = dates.window(text, now, self.zone or dates.machine_zone(now))
        asked = (found.start, found.end) if found else None
        chosen = selection.select(
            candidates,
            scored.scores,
            keywords=keywords.hits,
            decisive=keywords.decisive,
            limit=self.config.limit,
            threshold=scored.threshold,
            semantic_slots=self.config.semantic_slots,
            spare=scored.spare,
            quotas=self.config.quotas,
            conversation=scored.heard,
            conversation_slots=self.config.conversation_slots,
            window=asked,
        )
        degraded, why_degraded = bool(scored.degraded), scored.degraded
        if not record:
            return Recall(0, tuple(chosen), degraded, why_degraded, asked)
        try:
            turn_id = await turns.record(
                self.store,
                turns.TurnRecord(user_id, story_id, origin),
                chosen,
                degraded=degraded,
                now=self.clock(),
                exchange_id=exchange_id,
            )
        except StoreError as exc:
            # Counters and /why miss this turn; the reply does not wait for the database.
            log.warning("turn not recorded (%s)", exc)
            turn_id = 0
        return Recall(turn_id, tuple(chosen), degraded, why_degraded, asked)
