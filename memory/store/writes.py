"""What every backend's store keeps, whatever its connections: the lock that runs this process's
writes one at a time, the tasks they run in, and the generations they raise.

Each store (memory.store.sqlite.store, memory.store.postgres.store) holds one `Writes` and hands
it its transactions; a field added here reaches both, and the generations are raised around every
commit of either in one place (memory.store.generations).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

from memory.store.db import Tx
from memory.store.generations import Generations

log = logging.getLogger(__name__)

T = TypeVar("T")
TxT = TypeVar("TxT", bound=Tx)


class Writes:
    """One store's writes: one transaction at a time, each in its own task, each raising the
    generations of the people it touched."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.generations = Generations()
        # The writes running, kept until they end: a cancelled caller's too (see transact).
        self._running: set[asyncio.Task[Any]] = set()

    async def transact(
        self,
        begin: Callable[[], AbstractAsyncContextManager[TxT]],
        fn: Callable[[TxT], Awaitable[T]],
    ) -> T:
        """Run `fn` in the write transaction `begin` opens (which commits when its block ends
        and rolls back on any error), alone in this process; raise the generations of the
        people it touched inside it, and learn them once it committed.

        The transaction runs in its own task: cancelling the caller does not cut it half way.
        """
        task = asyncio.ensure_future(self._run(begin, fn))
        self._running.add(task)
        task.add_done_callback(self._forget)
        return await asyncio.shield(task)

    async def finish(self) -> None:
        """Wait for the writes still running (those of cancelled callers too)."""
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    async def _run(
        self,
        begin: Callable[[], AbstractAsyncContextManager[TxT]],
        fn: Callable[[TxT], Awaitable[T]],
    ) -> T:
        async with self.lock:
            async with begin() as tx:
                result = await fn(tx)
                bumped = await self.generations.bump(tx)
            self.generations.committed(tx.touched, bumped)
            return result

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Retrieved here so a caller that was cancelled still leaves a trace.
            log.debug("write transaction failed: %s", type(task.exception()).__name__)
