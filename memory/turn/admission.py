"""Who may use the language model, and when: fairness between people, a bound on the whole.

Per person and place (a user in a story): one turn in flight, a short queue behind it, and past
the queue a refusal (`Overloaded`) whose notice is rate-limited per person, so a flood costs one
polite line now and then, never a reply each. Per person across places: at most PERSON_TURNS
turns in flight (someone mentioning the bot in forty threads at once waits for their own turns,
not everyone else). Across everyone: at most `max_chats` chat calls at once, turns and
reflections together, waiting in arrival order (asyncio's semaphore is first come, first
served). One person holds at most PERSON_TURNS chat slots for turns, so the others keep theirs.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from memory.backends.chat import ChatBackend, ChatResult, Message, stream_of
from memory.backends.streaming import ChatStream
from memory.errors import BackendUnavailable, Overloaded

log = logging.getLogger(__name__)

# Turns of one person in one place that may wait behind the one being answered. Three covers a
# person who sends a thought in a few quick lines; beyond that they are flooding.
TURN_QUEUE = 3
# Seconds between two "slow down" notices to the same person.
NOTICE_INTERVAL = 30.0
# Turns of one person in flight at once, all places together; each place keeps its own queue, up
# to PERSON_TURNS * (queue + 1) turns of that person in all (a reviewer took all 4 chat slots
# from everyone with one account mentioning the bot in 40 channels).
PERSON_TURNS = 2
# Chat calls at once, turns and reflections together. Ollama answers up to 4 requests of a
# loaded model in parallel by default (OLLAMA_NUM_PARALLEL) and queues the rest itself; more
# calls in flight only move the queue from here, where it is fair, to there, where it is not.
MAX_CHATS = 4
# People whose last notice is remembered (least recently noticed forgotten first).
NOTICES_REMEMBERED = 4096

Key = tuple[int, int]  # (user id, story id)


@dataclass
class _Person:
    """One person's turns in all places: those in flight are bounded by `slots`."""

    slots: asyncio.Semaphore
    holders: int = 0


@dataclass
class _Line:
    """The turns of one person in one place: the one answered and those waiting."""

    lock: asyncio.Lock
    holders: int = 0  # in flight + waiting
    following: int = 0  # edits of this person's messages waiting for their turns (`settled`)


@dataclass(frozen=True, slots=True)
class AdmissionStatus:
    """What the admission did since start-up (shown by /stats)."""

    refused: int
    notices: int
    waiting: int
    following: int = 0  # edits and deletions waiting for their author's turns to end


class Admission:
    """Per person and place: one turn at a time, `queue` waiting, the rest refused."""

    def __init__(
        self,
        *,
        queue: int = TURN_QUEUE,
        notice_interval: float = NOTICE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if queue < 0:
            raise ValueError("the turn queue cannot be negative")
        self.queue = queue
        self.notice_interval = notice_interval
        self.clock = clock
        self._lines: dict[Key, _Line] = {}
        self._people: dict[int, _Person] = {}
        self._noticed: OrderedDict[int, float] = OrderedDict()
        self.refused = 0
        self.notices = 0

    def status(self) -> AdmissionStatus:
        waiting = sum(max(0, line.holders - 1) for line in self._lines.values())
        following = sum(line.following for line in self._lines.values())
        return AdmissionStatus(self.refused, self.notices, waiting, following)

    def busy(self) -> bool:
        """Whether a turn is in flight or waiting, or an edit follows one: someone waits on
        the event loop."""
        return bool(self._lines)

    @asynccontextmanager
    async def turn(self, user_id: int, story_id: int) -> AsyncIterator[None]:
        """Hold this person's turn here; raise Overloaded when their queue is full."""
        key = (user_id, story_id)
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = _Line(asyncio.Lock())
        person = self._people.get(user_id)
        if person is None:
            person = self._people[user_id] = _Person(asyncio.Semaphore(PERSON_TURNS))
        # One in flight + `queue` waiting here; PERSON_TURNS places' worth in all.
        if line.holders > self.queue or person.holders >= PERSON_TURNS * (self.queue + 1):
            # Decided before any await: the caller can rely on it to do nothing else first.
            self.refused += 1
            self._leave(key, line)
            if person.holders == 0:
                del self._people[user_id]
            raise Overloaded(notify=self._notice_due(user_id))
        line.holders += 1
        person.holders += 1
        try:
            # The place's line first, then one of the person's slots: a turn never holds a
            # slot while it waits behind the same person's turn in the same place.
            async with line.lock, person.slots:
                yield
        finally:
            line.holders -= 1
            self._leave(key, line)
            person.holders -= 1
            if person.holders == 0:
                del self._people[user_id]

    @asynccontextmanager
    async def settled(self, user_id: int, story_id: int) -> AsyncIterator[None]:
        """Hold this person's line here once the turns already in it are done, for work that
        must follow them (an edit of a message whose turn may still run). Never refused and
        takes no turn's place: following an edit is erasure, it is not let pass; its caller
        bounds it (one at a time per person). Counted in `status().following` while it waits
        and runs."""
        key = (user_id, story_id)
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = _Line(asyncio.Lock())
        line.following += 1
        try:
            async with line.lock:
                yield
        finally:
            line.following -= 1
            self._leave(key, line)

    def _leave(self, key: Key, line: _Line) -> None:
        if line.holders == 0 and line.following == 0 and self._lines.get(key) is line:
            del self._lines[key]

    def _notice_due(self, user_id: int) -> bool:
        now = self.clock()
        last = self._noticed.get(user_id, -math.inf)
        if now - last < self.notice_interval:
            return False
        self._noticed[user_id] = now
        self._noticed.move_to_end(user_id)
        if len(self._noticed) > NOTICES_REMEMBERED:
            self._noticed.popitem(last=False)
        self.notices += 1
        return True


class _OneAtATime:
    """One chat call at a time, replies to people first: a waiting reflection goes only when no
    reply waits."""

    def __init__(self) -> None:
        self._busy = False
        self._replies: deque[asyncio.Future[None]] = deque()
        self._background: deque[asyncio.Future[None]] = deque()

    async def acquire(self, *, reply: bool) -> None:
        if not self._busy and not self._replies and (reply or not self._background):
            self._busy = True
            return
        waiting = asyncio.get_running_loop().create_future()
        (self._replies if reply else self._background).append(waiting)
        try:
            await waiting
        except asyncio.CancelledError:
            if waiting.done() and not waiting.cancelled():
                self.release()  # handed over just as it was cancelled: pass it on
            else:
                (self._replies if reply else self._background).remove(waiting)
            raise

    def release(self) -> None:
        for line in (self._replies, self._background):
            while line:
                waiting = line.popleft()
                if not waiting.done():
                    waiting.set_result(None)  # handed over: still busy
                    return
        self._busy = False


class BoundedChat:
    """A chat backend that lets at most `limit` calls run at once; the wait for a slot counts
    in the call's deadline.

    A server that takes one request at a time and stops the one it is answering when another
    comes (llama-cpp-python's server, by default) empties or cuts a reply short. Seen once — a
    reply empty or cut short while another call to the server started — it is learned
    (`one_at_a_time`, and `on_learned` to keep it): from then on calls go one at a time, the
    replies to people before the reflections (`background()`), and the call it emptied is asked
    again, alone."""

    def __init__(
        self,
        inner: ChatBackend,
        *,
        limit: int = MAX_CHATS,
        one_at_a_time: bool = False,
        on_learned: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        if limit < 1:
            raise ValueError("at least one chat call must be allowed")
        self.inner = inner
        self.model = inner.model
        self.limit = limit
        self.one_at_a_time = one_at_a_time
        self.on_learned = on_learned
        # Calls asked again alone after the server emptied them (since start-up).
        self.asked_again = 0
        self._slots = asyncio.Semaphore(limit)
        self._gate = _OneAtATime()
        # Calls sent without the gate and not yet answered, and whether there are none.
        self._loose = 0
        self._settled = asyncio.Event()
        self._settled.set()
        self._started = 0  # calls sent to the server since start-up

    def background(self) -> ChatBackend:
        """This backend for calls no one waits on (reflections): with one call at a time,
        they go after the replies waiting."""
        return _Background(self)

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:
        return await self._chat(messages, schema, deadline, max_tokens, reply=True)

    async def _chat(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None,
        deadline: float,
        max_tokens: int | None,
        *,
        reply: bool,
    ) -> ChatResult:
        loop = asyncio.get_running_loop()
        end = loop.time() + deadline
        while True:
            alone = await self._acquire(end - loop.time(), reply=reply)
            self._started += 1
            mark = self._started
            try:
                result = await self.inner.chat(
                    messages,
                    schema=schema,
                    deadline=max(0.001, end - loop.time()),
                    max_tokens=max_tokens,
                )
            finally:
                self._release(alone)
            if alone or result.content.strip() or self._started == mark:
                return result
            await self._learn()

    def stream(
        self, messages: Sequence[Message], *, deadline: float, max_tokens: int | None = None
    ) -> ChatStream:
        return self._stream(messages, deadline, max_tokens, reply=True)

    def _stream(
        self, messages: Sequence[Message], deadline: float, max_tokens: int | None, *, reply: bool
    ) -> ChatStream:
        """The inner stream, holding a slot from the first piece asked for until the stream
        ends or is closed."""

        async def pieces(out: ChatStream) -> AsyncGenerator[str, None]:
            loop = asyncio.get_running_loop()
            end = loop.time() + deadline
            while True:
                alone = await self._acquire(end - loop.time(), reply=reply)
                self._started += 1
                mark = self._started
                said = False
                try:
                    inner = stream_of(
                        self.inner,
                        messages,
                        deadline=max(0.001, end - loop.time()),
                        max_tokens=max_tokens,
                    )
                    async with inner:
                        async for piece in inner:
                            out.counts_of(inner)
                            said = said or bool(piece.strip())
                            yield piece
                    out.counts_of(inner)
                finally:
                    self._release(alone)
                if alone or self._started == mark or (said and not inner.cut_short):
                    return
                await self._learn()
                if said:  # what came was shown: kept as far as it came
                    return

        return ChatStream(pieces)

    async def _learn(self) -> None:
        """The server stopped a call when another started: one call at a time from now on."""
        self.asked_again += 1
        if self.one_at_a_time:
            return
        self.one_at_a_time = True
        log.warning(
            "the chat server stopped a reply when another request started: it takes one request"
            " at a time, and gets one at a time from now on (replies first). llama-cpp-python's"
            " server queues them instead with --interrupt_requests false"
        )
        if self.on_learned is not None:
            try:
                await self.on_learned()
            except Exception as exc:  # kept for this run anyway
                log.warning(
                    "could not record that the chat server takes one request at a time (%s)",
                    type(exc).__name__,
                )

    async def _acquire(self, deadline: float, *, reply: bool) -> bool:
        """Take a slot; when the server takes one call at a time, first the whole server (in
        the gate's order, replies first), once the calls sent before it was learned are done:
        one of those still at the server would stop this one again. Say whether it was."""
        try:
            async with asyncio.timeout(max(0.001, deadline)):
                if not self.one_at_a_time:
                    await self._slots.acquire()
                    self._loose += 1
                    self._settled.clear()
                    return False
                await self._gate.acquire(reply=reply)
                try:
                    await self._settled.wait()
                    await self._slots.acquire()
                except BaseException:
                    self._gate.release()
                    raise
                return True
        except TimeoutError:
            raise BackendUnavailable(
                f"no chat slot free within {deadline:g} s ({self.limit} in use)"
            ) from None

    def _release(self, alone: bool) -> None:
        self._slots.release()
        if alone:
            self._gate.release()
            return
        self._loose -= 1
        if self._loose == 0:
            self._settled.set()


class _Background:
    """A BoundedChat for the calls no one waits on: behind the replies when one at a time."""

    def __init__(self, outer: BoundedChat) -> None:
        self.outer = outer
        self.model = outer.model

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:
        return await self.outer._chat(messages, schema, deadline, max_tokens, reply=False)

    def stream(
        self, messages: Sequence[Message], *, deadline: float, max_tokens: int | None = None
    ) -> ChatStream:
        return self.outer._stream(messages, deadline, max_tokens, reply=False)


def bound_of(chat: object) -> BoundedChat | None:
    """The BoundedChat under a chat backend's wrappers (Deadlined, background()), if any."""
    for _ in range(8):
        if isinstance(chat, BoundedChat):
            return chat
        chat = getattr(chat, "inner", None) or getattr(chat, "outer", None)
    return None
