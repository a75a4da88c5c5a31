"""Receipts: when a reflection stores something from a person's message and they asked for it
(/privacy receipts:on), a front end tells them what was stored, so that a wrong memory is caught
when it is made. The worker tells `Receipts` of each reflection it wrote; `Receipts` keeps those
of people who asked and hands each to the front end's `send`, in a task of its own (the worker
never waits for a front end)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from memory.errors import unexpected
from memory.manage import casting, privacy
from memory.model import DM_ORIGIN, Exchange, Memory
from memory.store import Store
from memory.store.tables import counters
from memory.write.apply import WriteReport
from memory.write.worker import ReflectionWorker

log = logging.getLogger(__name__)

# What a receipt says was stored: a new memory, or one rewritten with what the message said (a
# repeat absorbed into a memory already there changes nothing the person would want undone).
STORED = frozenset({"created", "merged", "superseded"})


@dataclass(frozen=True, slots=True)
class Receipt:
    """What one reflection stored from a person's message: `user_id` is the person, `person_id`
    the id the memories are kept under (theirs, or a character's for them), `place_id` where
    the message was said (a channel; None in DMs)."""

    user_id: int
    person_id: int
    place_id: int | None
    exchange_id: str
    memories: tuple[Memory, ...]


class Receipts:
    """Receipts of one worker's reflections, handed to a front end's `send`, which says whether
    the person got it (counted: `receipts_sent`, `receipts_undelivered`)."""

    def __init__(
        self,
        store: Store,
        worker: ReflectionWorker,
        send: Callable[[Receipt], Awaitable[bool]],
    ) -> None:
        self.store = store
        self.worker = worker
        self.send = send
        self._tasks: set[asyncio.Task[None]] = set()
        worker.listeners.append(self._heard)

    def _heard(self, exchange: Exchange, report: WriteReport) -> None:
        stored = {o.memory_id for o in report.outcomes if o.action in STORED}
        found = tuple(m for m in report.memories if m.id in stored)
        if not found:
            return
        task = asyncio.create_task(self._deliver(exchange, found))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, exchange: Exchange, found: tuple[Memory, ...]) -> None:
        try:
            if not await privacy.receipts(self.store, exchange.user_id):
                return
            user_id = (await casting.owner(self.store, exchange.user_id))[0]
            place = None
            if exchange.origin != DM_ORIGIN:
                place = (await casting.story_owner(self.store, exchange.story_id))[0]
            unique = tuple({m.id: m for m in found}.values())
            receipt = Receipt(user_id, exchange.user_id, place, exchange.exchange_id, unique)
            name = "receipts_sent" if await self.send(receipt) else "receipts_undelivered"
            await self.store.transact(lambda tx: counters.bump(tx, name))
        except Exception as exc:  # a receipt lost must not stop the next ones
            log.error("receipt of exchange %s failed: %s", exchange.exchange_id, unexpected(exc))

    async def drain(self) -> None:
        """Wait until every receipt handed out so far was sent (or failed)."""
        while self._tasks:
            await asyncio.gather(*self._tasks)

    async def close(self) -> None:
        """Stop hearing of reflections, and wait for the receipts under way."""
        if self._heard in self.worker.listeners:
            self.worker.listeners.remove(self._heard)
        await self.drain()
