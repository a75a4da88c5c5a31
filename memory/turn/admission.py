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
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
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


class BoundedChat:
    """A chat backend that lets at most `limit` calls run at once; the wait for a slot counts
    in the call's deadline."""

    def __init__(self, inner: ChatBackend, *, limit: int = MAX_CHATS) -> None:
        if limit < 1:
            raise ValueError("at least one chat call must be allowed")
        self.inner = inner
        self.model = inner.model
        self.limit = limit
        self._slots = asyncio.Semaphore(limit)

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:
        loop = asyncio.get_running_loop()
        end = loop.time() + deadline
        await self._acquire(deadline)
        try:
            return await self.inner.chat(
                messages, schema=schema, deadline=max(0.001, end - loop.time()),
                max_tokens=max_tokens,
            )  # fmt: skip
        finally:
            self._slots.release()

    def stream(
        self, messages: Sequence[Message], *, deadline: float, max_tokens: int | None = None
    ) -> ChatStream:
        """The inner stream, holding a slot from the first piece asked for until the stream
        ends or is closed."""

        async def pieces(out: ChatStream) -> AsyncGenerator[str, None]:
            loop = asyncio.get_running_loop()
            end = loop.time() + deadline
            await self._acquire(deadline)
            try:
                inner = stream_of(
                    self.inner, messages, deadline=max(0.001, end - loop.time()),
                    max_tokens=max_tokens,
                )  # fmt: skip
                async with inner:
                    async for piece in inner:
                        out.counts_of(inner)
                        yield piece
                out.counts_of(inner)
            finally:
                self._slots.release()

        return ChatStream(pieces)

    async def _acquire(self, deadline: float) -> None:
        try:
            async with asyncio.timeout(deadline):
                await self._slots.acquire()
        except TimeoutError:
            raise BackendUnavailable(
                f"no chat slot free within {deadline:g} s ({self.limit} in use)"
            ) from None
