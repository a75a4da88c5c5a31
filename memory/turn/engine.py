"""Orchestration of a turn and of what follows it. No Discord types: ids and text only.

The engine composes the parts a turn goes through and does nothing else: admission (one turn per
person and place, admission.py), the message stored with the greeting due (greetings.py), the
one preparation step (the story, recall by memory.recall.recaller, the prompt's plan) and the
reply as it streams (replying.py), the exchange written (exchanges.py) and the turn's timing
(timing.py). Another answer to a stored message, and the choice among the answers, are
answers.py's. Its values (MemoryConfig, Incoming, Reply, Recall, EngineStatus) live in
memory/turn/values.py, which the turn's parts import too; the front ends take them from the
package's face (memory)."""

from __future__ import annotations

import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import tzinfo

from memory.backends.chat import ChatBackend, Embedder
from memory.cache import MIB, CacheBudget
from memory.character.cast import Characters
from memory.context.budget import ContextPlan
from memory.context.builder import ContextBuilder, ContextConfig, ServerContext
from memory.context.prompt import Character
from memory.context.strategies import Registry
from memory.errors import Overloaded, Settled, StoreError
from memory.looplag import LoopLag
from memory.model import Exchange
from memory.pictures import MAX_PICTURES, Picture, Shelf
from memory.recall.recaller import WARM_DAYS, WARM_PLACES, Recaller
from memory.recall.semantic import VectorCache
from memory.store import Store, Tx
from memory.store.tables import characters as cast_store
from memory.store.tables import history, outbox, pictures, reply_versions, turns
from memory.store.tables.history import HistoryMessage
from memory.text import clean, clean_message
from memory.turn.admission import Admission, bound_of
from memory.turn.answers import SETTLED, Answers, kept
from memory.turn.exchanges import ExchangeWriter
from memory.turn.greetings import Greetings
from memory.turn.replying import Replier, prepare
from memory.turn.timing import TurnTimings
from memory.turn.values import (
    Answer,
    AnswerSet,
    EngineStatus,
    Incoming,
    MemoryConfig,
    OnText,
    Reply,
)

log = logging.getLogger(__name__)

# Message ids remembered in memory against replays (the database remembers them all).
REMEMBERED_MESSAGE_IDS = 4096


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
        server_context: ServerContext | None = None,
        sight: Callable[[], Awaitable[bool | None]] | None = None,
        shelf: Shelf | None = None,
    ) -> None:
        self.store = store
        # Whether the chat model sees images (memory.backends.vision); None: pictures are off,
        # each is only named to the model. The shelf keeps those shown for the reflection.
        self.sight = sight
        self.shelf = shelf or Shelf()
        # Seconds a reply's versions are left to settle before its reflection is due: after the
        # reply and after each new answer or swipe; the person's next message here ends the
        # wait. 0 (a front end without versions): reflected at once; the bot waits
        # [conversation] settle_seconds.
        self.settle = settle
        # The time zone a message's times are read in ("yesterday"; None: the machine's).
        self.zone = zone
        self.embedder = embedder
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
        # The parts below read the settings, the clock and the chat backend as they are at each
        # use: a test or a front end may replace them on the engine.
        self.recaller = Recaller(
            store,
            embedder=embedder,
            caches=self.caches,
            config=lambda: self.config,
            clock=lambda: self.clock(),
            zone=zone,
        )
        # A recall alone, outside a turn (tests, benchmarks): the recaller's.
        self.recall = self.recaller.recall
        self.contexts = {
            c.key: ContextBuilder(
                store,
                character=c,
                chat_model=chat.model if chat else "none",
                config=context,
                registry=strategies,
                clock=clock,
                server_context=server_context,
            )
            for c in self.characters
        }
        self.context = self.contexts[self.character.key]
        self.admission = Admission(
            queue=self.config.turn_queue, notice_interval=self.config.slow_down_interval
        )
        self.exchanges = ExchangeWriter(
            store,
            author=self.character.name,
            clock=clock,
            backlog=lambda: self.config.reflection_backlog,
            settle=lambda: self.settle,
        )
        self.replier = Replier(
            chat=lambda: self.chat, config=lambda: self.config, sight=lambda: self.sight
        )
        self.timings = TurnTimings()
        self.answers = Answers(
            store,
            recaller=self.recaller,
            replier=self.replier,
            admission=self.admission,
            characters=self.characters,
            contexts=self.contexts,
            config=lambda: self.config,
            clock=lambda: self.clock(),
            settle=lambda: self.settle,
            shelf=lambda: self.shelf,
        )
        # Recent message ids, so a replay is ignored even when the database could not record it.
        self._answered: deque[str] = deque(maxlen=REMEMBERED_MESSAGE_IDS)
        self.all_greetings = {c.key: Greetings(store, c, clock) for c in self.characters}
        self.greetings = self.all_greetings[self.character.key]

    @property
    def vectors(self) -> VectorCache:
        """The people's vector matrices (the recaller's)."""
        return self.recaller.vectors

    @property
    def character_name(self) -> str:
        """The name the character answers as (what the front ends show before its lines)."""
        return self.character.name

    async def warm_up(self, *, places: int = WARM_PLACES, days: float = WARM_DAYS) -> int:
        """Fill the recall's caches for the most recently active people (Recaller.warm_up)."""
        return await self.recaller.warm_up(places=places, days=days)

    def status(self) -> EngineStatus:
        bounded = bound_of(self.chat)
        return EngineStatus(
            self.admission.status(),
            self.exchanges.waiting,
            self.exchanges.dropped,
            self.vectors.status().turns_before_vectors,
            self.loop_lag.longest() if self.loop_lag else None,
            self.replier.interrupted,
            chat_one_at_a_time=bounded is not None and bounded.one_at_a_time,
            chat_asked_again=bounded.asked_again if bounded is not None else 0,
        )

    async def turn(
        self,
        message: Incoming,
        *,
        admitted: bool = False,
        on_text: OnText | None = None,
        on_greeting: OnText | None = None,
        on_answer: Callable[[], None] | None = None,
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

        `on_greeting` is awaited with the character's greeting as soon as it is known (the
        person's first message here, stored), before the reply starts: a front end that prints
        the reply as it streams and cannot reorder lines says the greeting first. The reply
        carries it too (`Reply.greeting`), as always.

        `on_answer` is called (not awaited) once the model's answer is whole, before anything
        of it is stored: a front end that stops a turn to answer it with the person's next
        line stops it only before then (a cancellation after it would leave a stored reply
        that was never shown).
        """
        if self.chat is None:
            raise RuntimeError("this engine has no chat backend")
        if admitted:
            return await self._answer(message, on_text, on_greeting, on_answer)
        async with self.admit(message) as fresh:
            return await self._answer(message, on_text, on_greeting, on_answer) if fresh else None

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

    def settled(self, user_id: int, story_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        """Wait in this person's line in this place behind the turns already in it, and hold it
        for the block (following an edit: Admission.settled); never refused."""
        return self.admission.settled(user_id, story_id)

    def strategy_names(self) -> list[str]:
        """The context strategies a story may use: built in and plugged in."""
        return self.context.registry.names()

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
        pairs = (
            (played.user_id, cast_store.PERSON, real.user_id),
            (played.story_id, cast_store.STORY, real.story_id),
        )
        return [(d, kind, r, key) for d, kind, r in pairs if d != r]

    async def _answer(
        self,
        message: Incoming,
        on_text: OnText | None,
        on_greeting: OnText | None = None,
        on_answer: Callable[[], None] | None = None,
    ) -> Reply | None:
        # A display name is text from a person like any other (a lone surrogate in it would
        # fail every write and every request).
        message = replace(message, user_name=clean(message.user_name) or "someone")
        # Its text, then a line naming each picture: a message of pictures alone is answered.
        text = message.told()
        if not text:
            return None
        shown = self._pictures(message)
        real = message
        message, playing = self.as_played(message)
        derived = self._derived(real, message)
        greetings = self.all_greetings[playing.key]
        if self.exchanges.waiting:  # what a refusing database left behind, written meanwhile
            self.exchanges.flush_soon()
        started = time.monotonic()
        # The history before this message: up to its own row, or everything stored so far when
        # the database could not take it.
        before_id: int | None = None
        greeting: str | None = None
        turn_id: int | None = None
        lines = [
            (self.as_played(line)[0], line.told())
            for line in message.joined
            if line.character == real.character
        ]

        async def store_message(tx: Tx) -> tuple[int | None, str | None, int | None]:
            # The erasure lock first: what the checks of an erasure find holds until the
            # commit, and the turn's row needs it (turns.record_in).
            await tx.serialize("erasure", shared=True)
            await cast_store.record_ids(tx, derived)
            said: str | None = None
            for line, line_text in lines:  # a quick line whose own turn stopped before it
                if line_text:
                    said = said or (await self._store_message(tx, greetings, line, line_text))[1]
            before, greeting = await self._store_message(tx, greetings, message, text)
            if before is None:
                return None, said, None
            if shown:
                await pictures.record(tx, message.source_id, len(shown))
            # The turn's row, with the message: "Try again" answers a message whose turn died
            # from the two. What it selects is written with the reply.
            opened = await turns.open_in(
                tx,
                turns.TurnRecord(message.user_id, message.story_id, message.origin),
                now=self.clock(),
                exchange_id=message.source_id,
            )
            return before, greeting or said, opened

        try:
            before_id, greeting, turn_id = await self.store.transact(store_message)
        except StoreError as exc:
            # The database is busy or full: answer anyway (a turn never waits on memory).
            log.warning("message %s not stored (%s): answering anyway", message.source_id, exc)
        else:
            if before_id is None and message.joined:
                # The last quick line was forgotten (deleted) before its turn stored it: the
                # lines before it are answered still, as the last of them.
                left = await self._joined(message)
                if left:
                    last = left[-1]
                    log.info("message %s forgotten: %s answered instead", message.source_id,
                             last.source_id)  # fmt: skip
                    return await self._reply(
                        replace(message, source_id=last.source_id, text=last.content),
                        playing,
                        last.id,
                        last.source_id,
                        started,
                        on_text,
                        left[:-1],
                        on_answer,
                        # The pictures of the lines left (not the forgotten one's).
                        shown=self._pictures(replace(message, pictures=())),
                    )
            if before_id is None:
                log.info("message %s was already answered: ignored", message.source_id)
                return None
            if greeting is not None:
                greetings.due(message, greeting)
                if on_greeting is not None:
                    await on_greeting(greeting)
        stored_id = message.source_id if before_id is not None else ""
        earlier = await self._joined(message) if stored_id else ()
        return await self._reply(
            replace(message, text=text, pictures=()),
            playing,
            before_id,
            stored_id,
            started,
            on_text,
            earlier,
            on_answer,
            turn_id,
            shown=shown,
        )

    @staticmethod
    def _pictures(message: Incoming) -> tuple[Picture, ...]:
        """The pictures this turn answers: its quick lines' and its own, MAX_PICTURES at most."""
        found = [p for line in (*message.joined, message) for p in line.pictures]
        return tuple(found[:MAX_PICTURES])

    async def _joined(self, message: Incoming) -> tuple[HistoryMessage, ...]:
        """The person's earlier lines this turn answers with its message (Incoming.joined),
        as stored: a line forgotten or never stored is left out."""
        if not message.joined:
            return ()
        found = await history.among(self.store, [line.source_id for line in message.joined])
        return tuple(
            sorted(
                (
                    m
                    for m in found
                    if m.role == "user"
                    and m.user_id == message.user_id
                    and m.story_id == message.story_id
                ),
                key=lambda m: m.id,
            )
        )

    async def _reply(
        self,
        message: Incoming,
        playing: Character,
        before_id: int | None,
        exchange_id: str,
        started: float,
        on_text: OnText | None,
        joined: Sequence[HistoryMessage] = (),
        on_answer: Callable[[], None] | None = None,
        turn_id: int | None = None,
        shown: Sequence[Picture] = (),
    ) -> Reply:
        """The rest of a turn once its (played) message is stored, or could not be: recall
        and plan with the history before it, the reply, the exchange written with its
        reflection queued, the greeting it carries. `exchange_id` "": the message is not
        stored (the database refused it), nothing recorded under it. `joined`: the person's
        quick lines answered with it (in the history already): recalled for together, and
        read by the reflection with it. `turn_id`: the turn's row, stored with the message;
        None: the recall records the turn itself. `shown`: the pictures posted with them,
        shown to a model that sees images, then kept for the reflection (the shelf, in memory
        only).

        What the turn selected, the reply with its outbox row, the turn's figures and what
        the reply taught the context are written in one transaction after the reply
        (memory.turn.exchanges): with the message's, a turn writes twice."""
        context, greetings = self.contexts[playing.key], self.all_greetings[playing.key]
        said = "\n".join([*(m.content for m in joined), message.text])
        recalled, plan = await prepare(
            self.recaller,
            context,
            user_id=message.user_id,
            user_name=message.user_name,
            story_id=message.story_id,
            origin=message.origin,
            text=message.text,
            query=said,
            before_id=before_id,
            record=turn_id is None,
            exchange_id=exchange_id,
        )
        if turn_id is not None:
            recalled = replace(recalled, turn_id=turn_id)
        if exchange_id and self.sight is not None:
            # Kept before the model is asked: the reflection reads them, and so do "Another
            # answer" and "Try again" (a turn that fails keeps them for its retry), while the
            # exchange is not reflected (memory.turn.answers).
            self.shelf.keep(exchange_id, message.user_id, message.origin, tuple(shown))
        heard = await self.replier.answer(
            message.source_id, plan, message.story_id, context, on_text, shown
        )
        if on_answer is not None:
            on_answer()
        if heard.cut:
            log.info("reply to %s cut by %d characters", message.source_id, heard.cut)
        exchange = Exchange(
            message.source_id,
            message.user_id,
            message.story_id,
            message.origin,
            message.user_name,
            said,
            heard.answer,
            playing.name,
            tuple(m.source_id for m in joined),
        )
        lesson = await context.lesson(message.story_id, plan, heard.prompt_tokens)

        async def rest(tx: Tx, kept: bool) -> None:
            if turn_id is not None and not kept:
                # Its message erased while it ran: a turn under way records nothing.
                await turns.drop_in(tx, turn_id)
            elif turn_id is not None:
                await turns.select_in(
                    tx,
                    turn_id,
                    turns.TurnRecord(message.user_id, message.story_id, message.origin),
                    recalled.selected,
                    degraded=recalled.degraded,
                    opened=True,
                )
            latency_ms = (time.monotonic() - started) * 1000.0
            await self.timings.record_in(tx, recalled, plan, latency_ms, now=self.clock())
            await context.learn_in(tx, lesson)

        # Written before the turn ends, so this person's next message, waiting in their line,
        # comes after this reply in the history.
        written = await self.exchanges.write(exchange, also=rest)
        context.learned(lesson, saved=written)
        if not written:  # the database refused the exchange: the reply must not wait on it twice
            log.info("timing of the turn on %s not recorded", message.source_id)
        greeting = await greetings.deliver(message)
        return Reply(
            heard.answer, message.source_id, recalled, greeting, heard.cut, heard.interrupted
        )

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
        it and the same recall, less the memories `without` (Answers.regenerate). A message
        whose turn failed before its reply is answered for the first time (`_answer_stored`):
        retried, not typed again into the history."""
        if self.chat is None:
            raise RuntimeError("this engine has no chat backend")
        failed = await reply_versions.unanswered(self.store, exchange_id)
        if failed is not None:
            return await self._answer_stored(failed, on_text)
        return await self.answers.regenerate(exchange_id, without=without, on_text=on_text)

    async def _answer_stored(self, first: reply_versions.Asked, on_text: OnText | None) -> Reply:
        """The first answer to a stored message whose turn failed, in the person's line there,
        as its turn would have answered it; Settled when it was answered or forgotten since."""
        kept(first, now=self.clock(), hours=self.config.versions_hours)
        async with self.admission.turn(first.user_id, first.story_id):
            # Read again in the line: a turn before it may have answered or erased it.
            asked = await reply_versions.unanswered(self.store, first.exchange_id)
            if asked is None:
                raise Settled(SETTLED)
            _, key = await cast_store.owner(self.store, cast_store.STORY, asked.story_id)
            playing = self.characters.playing(key or self.characters.home)
            said = Incoming(
                asked.exchange_id,
                asked.user_id,
                asked.user_name,
                asked.story_id,
                asked.origin,
                asked.text,
                playing.key,
            )
            log.info("exchange %s: answering after its turn failed", asked.exchange_id)
            return await self._reply(
                said,
                playing,
                asked.message_row,
                asked.exchange_id,
                time.monotonic(),
                on_text,
                # The pictures its failed turn kept (none once pushed out, or after a restart).
                shown=self.shelf.get(asked.exchange_id),
            )

    async def swipe(self, exchange_id: str, index: int) -> Answer:
        """Show version `index` (0-based) of the answers to this exchange (Answers.swipe)."""
        return await self.answers.swipe(exchange_id, index)

    async def versions(self, exchange_id: str) -> AnswerSet:
        """The answers to this exchange and which is shown (Answers.versions)."""
        return await self.answers.versions(exchange_id)

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
        or a person's, everywhere or in one server), and the pictures kept for their
        reflections; return how many exchanges."""
        if exchange_id:
            self.shelf.take(exchange_id)
        else:
            self.shelf.drop(user_id=user_id, origin=origin)
        return self.exchanges.drop_waiting(user_id=user_id, origin=origin, exchange_id=exchange_id)

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
        _, plan = await prepare(
            self.recaller,
            self.contexts[playing.key],
            user_id=self.characters.person_id(playing.key, user_id),
            user_name=user_name,
            story_id=self.characters.story_id(playing.key, story_id),
            origin=origin,
            text=clean_message(text),
            before_id=None,
            record=False,
        )
        return plan
