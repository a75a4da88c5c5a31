"""Orchestration of a turn and of what follows it. No Discord types: ids and text only.

The engine composes the parts a turn goes through: admission (admission.py), the person's
candidate pool and recall (here), the context (context/builder.py), the greeting due (greetings.py),
writing the exchange (exchanges.py) and the turn's timing (timing.py). Its values
(MemoryConfig, Incoming, Reply, Recall, EngineStatus) live in memory/turn/values.py, which the
turn's parts import too; the front ends take them from the package's face (memory)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from datetime import tzinfo

from memory import lexicon
from memory.backends.chat import ChatBackend, Embedder, stream_of
from memory.bulk import quiet
from memory.character.cast import Characters
from memory.context.budget import ContextPlan
from memory.context.builder import ContextBuilder, ContextConfig
from memory.context.prompt import Character
from memory.context.story import read_story
from memory.context.strategies import Registry
from memory.errors import (
    BackendError,
    BackendResponseError,
    InvalidInput,
    NotFound,
    Overloaded,
    Regenerating,
    Settled,
    StoreError,
    unexpected,
)
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
from memory.store import memories, outbox, privacy, replies, turns
from memory.store.db import Store, Tx
from memory.store.story_snapshot import StorySnapshot
from memory.text import clean, clean_message, well_formed, words
from memory.turn.admission import Admission, bound_of
from memory.turn.exchanges import ExchangeWriter
from memory.turn.greetings import Greetings
from memory.turn.reply_cap import cap_reply, sure_prefix
from memory.turn.timing import record_timing
from memory.turn.values import (
    EngineStatus,
    Incoming,
    MemoryConfig,
    OnText,
    Recall,
    Reply,
    Version,
    Versions,
)
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


def _whole_pairs(text: str) -> str:
    """`text` without a last high surrogate, whose low half may come in the next piece."""
    return text[:-1] if text and "\ud800" <= text[-1] <= "\udbff" else text


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
        settle: float = 0.0,
    ) -> None:
        self.store = store
        # Seconds a reply's versions are left to settle before its reflection is due: after the
        # reply and after each new answer or swipe; the person's next message here ends the
        # wait. 0 (a front end without versions): reflected at once; the bot waits
        # [conversation] settle_seconds.
        self.settle = settle
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
            backlog=lambda: self.config.reflection_backlog, settle=lambda: self.settle,
        )  # fmt: skip
        # The exchanges another answer is being written for (in this process): one at a time.
        self._regenerating: set[str] = set()
        # Recent message ids, so a replay is ignored even when the database could not record it.
        self._answered: deque[str] = deque(maxlen=REMEMBERED_MESSAGE_IDS)
        # (user, story, origin) -> (generation, pool, whether the person's memories are
        # served everywhere): a change of their choice bumps the generation too.
        self._pools: SizedCache[tuple[int, int, str], tuple[int, selection.RankedPool, bool]] = (
            SizedCache(self.caches, _pool_bytes)
        )
        self.all_greetings = {c.key: Greetings(store, c, clock) for c in self.characters}
        self.greetings = self.all_greetings[self.character.key]
        # Replies whose stream broke midway since start-up (kept as far as they had come).
        self.replies_interrupted = 0

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
        bounded = bound_of(self.chat)
        return EngineStatus(
            self.admission.status(), self.exchanges.waiting, self.exchanges.dropped,
            self.vectors.status().turns_before_vectors,
            self.loop_lag.longest() if self.loop_lag else None, self.replies_interrupted,
            chat_one_at_a_time=bounded is not None and bounded.one_at_a_time,
            chat_asked_again=bounded.asked_again if bounded is not None else 0,
        )  # fmt: skip

    async def turn(
        self, message: Incoming, *, admitted: bool = False, on_text: OnText | None = None
    ) -> Reply | None:
        """Answer a message: store it, recall, ask the chat backend, store the reply, queue the
        reflection. Return None for an empty message or one already answered (same source id).

        Turns of one person in one place run one after another: Overloaded when too many wait
        (unless the caller `admitted` the turn itself, inside `self.admit`); all other turns
        run concurrently. A chat failure raises BackendError after the message was stored: it
        stays in history.

        The reply streams when the chat server can: `on_text` is awaited with the reply's
        text so far each time more arrives (never twice at once; each text a prefix of the
        next, cleaned as the reply is, short of where the length cut could fall), and must
        return quickly; a server that answers in one block never calls it. A stream that
        breaks after some text keeps it: `Reply.interrupted`.
        """
        if self.chat is None:
            raise RuntimeError("this engine has no chat backend")
        if admitted:
            return await self._answer(message, on_text)
        async with self.admit(message) as fresh:
            return await self._answer(message, on_text) if fresh else None

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

    async def _answer(self, message: Incoming, on_text: OnText | None) -> Reply | None:
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
            return await self._store_message(tx, greetings, message, text)

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
        answer, cut, interrupted = await self._reply(
            message.source_id, plan, message.story_id, context, on_text
        )
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
        return Reply(answer, message.source_id, recalled, greeting, cut, interrupted)

    async def _store_message(
        self, tx: Tx, greetings: Greetings, message: Incoming, text: str
    ) -> tuple[int | None, str | None]:
        """Store the message (greetings.store_message); the person speaking again here settles
        the versions of their replies before it (their reflections are due now)."""
        stored = await greetings.store_message(tx, message, text)
        if stored[0] is not None and self.settle > 0:
            await outbox.settle_place(tx, message.user_id, message.story_id, now=self.clock())
        return stored

    async def regenerate(
        self,
        exchange_id: str,
        *,
        without: frozenset[int] = frozenset(),
        on_text: OnText | None = None,
    ) -> Reply:
        """Answer the stored message of this exchange again, with the history as it was before
        it and the same recall (less the memories `without`, for this answer only), and show
        the new version. In the person's line in that place, like their turns: it never races
        their next message. Regenerating when another answer to it is being written here;
        Settled when the answers can no longer change (reflected, erased, not stored, or older
        than the versions are kept); Overloaded as a turn."""
        if self.chat is None:
            raise RuntimeError("this engine has no chat backend")
        if exchange_id in self._regenerating:
            raise Regenerating()
        self._regenerating.add(exchange_id)
        try:
            asked = await self._open(exchange_id)
            async with self.admission.turn(asked.user_id, asked.story_id):
                return await self._again(await self._open(exchange_id), without, on_text)
        finally:
            self._regenerating.discard(exchange_id)

    async def _open(self, exchange_id: str) -> replies.Asked:
        """The stored message of an exchange whose answers may still change, or Settled."""
        asked = await replies.asked(self.store, exchange_id)
        if asked is None or not asked.pending:
            raise Settled("the answers to this message can no longer change")
        if self.clock() - asked.said_at > self.config.versions_hours * 3600:
            raise Settled("this message is older than its answers are kept")
        return asked

    async def _again(
        self,
        asked: replies.Asked,
        without: frozenset[int],
        on_text: OnText | None,
    ) -> Reply:
        # The character that answered: the one whose (maybe derived) story id it is stored under.
        _, key = await cast_store.owner(self.store, cast_store.STORY, asked.story_id)
        context = self.contexts[self.characters.playing(key or self.characters.home).key]
        story = await self._story(asked.story_id, asked.message_row)
        recalled = await self.recall(
            user_id=asked.user_id, story_id=asked.story_id, origin=asked.origin,
            text=asked.text, earlier=self._conversation(asked.user_id, story),
            exchange_id=asked.exchange_id, without=without,
        )  # fmt: skip
        plan = await context.plan(
            user_name=asked.user_name, origin=asked.origin, text=asked.text,
            selected=recalled.selected, story=story, window=recalled.window,
        )  # fmt: skip
        answer, cut, interrupted = await self._reply(
            asked.exchange_id, plan, asked.story_id, context, on_text
        )
        now = self.clock()
        stored = await self.store.transact(
            lambda tx: replies.add(
                tx, asked.exchange_id, text=answer, turn_id=recalled.turn_id, cut=cut, now=now,
                keep=self.config.versions, due=now + self.settle,
            )
        )  # fmt: skip
        if stored is None:  # reflected or erased while it was being written
            raise Settled("the answers to this message can no longer change")
        log.info("exchange %s answered again (%d versions)", asked.exchange_id, len(stored))
        return Reply(answer, asked.exchange_id, recalled, None, cut, interrupted)

    async def _reply(
        self,
        source_id: str,
        plan: ContextPlan,
        story_id: int,
        context: ContextBuilder,
        on_text: OnText | None,
    ) -> tuple[str, int, bool]:
        """Ask the chat backend for the reply to a planned prompt (the character's `context`),
        its pieces shown through `on_text` as they stream; return it cleaned and cut, how many
        characters were cut, and whether the stream broke midway (then what had arrived)."""
        content, prompt_tokens, interrupted = await self._streamed(
            source_id, plan, context, on_text
        )
        await context.after_reply(story_id, plan, prompt_tokens)
        answer, cut = cap_reply(well_formed(content).strip(), self.config.max_reply_chars)
        if not answer:
            raise BackendResponseError("the chat backend returned an empty reply")
        return answer, cut, interrupted

    async def _streamed(
        self, source_id: str, plan: ContextPlan, context: ContextBuilder, on_text: OnText | None
    ) -> tuple[str, int | None, bool]:
        """The model's answer (its pieces as they stream, shown through `on_text`), the prompt
        tokens it reported, and whether the stream broke midway (then what had arrived)."""
        assert self.chat is not None
        limit = self.config.max_reply_chars
        pieces: list[str] = []
        received = shown = ""
        stream = stream_of(
            self.chat, plan.messages, deadline=self.config.chat_deadline,
            max_tokens=context.config.response_tokens,
        )  # fmt: skip
        async with stream:
            try:
                async for piece in stream:
                    pieces.append(piece)
                    # Past the cut nothing more is shown: the text is no longer joined. A
                    # reply answered in one block is not shown before it is returned.
                    if on_text is None or not stream.streamed or len(received) > limit:
                        continue
                    received += piece
                    text = sure_prefix(well_formed(_whole_pairs(received)), limit)
                    if text and text != shown:
                        shown = text
                        on_text = await self._shown(source_id, on_text, text)
            except BackendError as exc:
                content = "".join(pieces)
                if not well_formed(content).strip():
                    raise
                self.replies_interrupted += 1
                log.warning("reply to %s interrupted after %d characters: %s",
                            source_id, len(content), exc)  # fmt: skip
                return content, None, True
        return "".join(pieces), stream.prompt_tokens, False

    async def _shown(self, source_id: str, on_text: OnText, text: str) -> OnText | None:
        """Give the front end the text so far; a bug there stops the showing, not the turn."""
        try:
            await on_text(text)
        except Exception as exc:
            log.error("reply to %s no longer shown as it streams: %s",
                      source_id, unexpected(exc))  # fmt: skip
            return None
        return on_text

    async def swipe(self, exchange_id: str, index: int) -> Version:
        """Show version `index` (0-based) of the answers to this exchange; Settled when they
        can no longer change, InvalidInput when there is no such version."""
        await self._open(exchange_id)
        try:
            chosen = await self.store.transact(
                lambda tx: replies.choose(tx, exchange_id, index, due=self.clock() + self.settle)
            )
        except IndexError:
            count = (await self.versions(exchange_id)).count
            raise InvalidInput(f"there is no answer {index + 1} (1 to {count})") from None
        if chosen is None:
            raise Settled("the answers to this message can no longer change")
        if not chosen[0]:  # never answered again: the first answer is the only one
            return (await self.versions(exchange_id)).current
        return _versions(exchange_id, *chosen).current

    async def versions(self, exchange_id: str) -> Versions:
        """The answers to this exchange, oldest first, and which is shown (the first answer
        alone when it was never answered again); NotFound when the message is not stored."""
        asked = await replies.asked(self.store, exchange_id)
        if asked is None:
            raise NotFound("this message is no longer stored")
        settled = not asked.pending or (
            self.clock() - asked.said_at > self.config.versions_hours * 3600
        )
        stored = await replies.listed(self.store, exchange_id)
        # Whose message it was: the person, not the id a character keeps them under.
        person, _ = await cast_store.owner(self.store, cast_store.PERSON, asked.user_id)
        if not stored:
            return Versions(exchange_id, (Version(0, asked.reply),), 0, person, settled)
        shown = next((i for i, v in enumerate(stored) if v.shown), len(stored) - 1)
        return replace(_versions(exchange_id, stored, shown), user_id=person, settled=settled)

    @property
    def exchanges_dropped(self) -> int:
        """Exchanges lost since start-up: past the bound of those waiting, or to a bug."""
        return self.exchanges.dropped

    async def flush_pending(self) -> int:
        """Write the exchanges a busy or full database refused; see ExchangeWriter."""
        return await self.exchanges.flush_pending()

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
        without: frozenset[int] = frozenset(),
    ) -> Recall:
        """Select this user's memories for a message, record the turn, move the counters.

        `earlier`: the person's own messages just before this one, oldest first; they recall
        by meaning too, as a second, weaker query (memory.recall.conversation). `exchange_id`: the
        message's, when it is stored; the turn is not recorded if it is erased meanwhile.
        `without`: memory ids this recall leaves out (rules too), as if they did not exist."""
        candidates, everywhere = await self._pool(user_id, story_id, origin)
        if without:
            candidates = candidates.patched(without, ())
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


def _versions(exchange_id: str, stored: Sequence[replies.Stored], shown: int) -> Versions:
    texts = tuple(Version(i, v.text, v.turn_id, v.created_at, v.cut) for i, v in enumerate(stored))
    return Versions(exchange_id, texts, shown)
