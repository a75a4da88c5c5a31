"""Writing an exchange once the reply is known: the reply into the history and the reflection
into the outbox, in one transaction. What a busy or full database refuses waits in memory
(bounded, the oldest dropped and counted) for the single flush that writes it later."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Callable

from memory.errors import StoreError, unexpected
from memory.model import Exchange
from memory.store import Store, Tx
from memory.store.queries import erasure
from memory.store.tables import counters, history, joined_lines, outbox

log = logging.getLogger(__name__)

# Exchanges kept in memory while the database refuses them (busy, full); past it the oldest is
# dropped and counted. About an hour of a busy server's turns, a few MB at most.
MAX_WAITING_EXCHANGES = 1_000


class ExchangeWriter:
    """Writes exchanges as the character `author`; keeps those the database refused."""

    def __init__(
        self,
        store: Store,
        *,
        author: str,
        clock: Callable[[], float],
        backlog: Callable[[], int],
        settle: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.store = store
        self.author = author
        self.clock = clock
        # The reflections one person may have waiting (read at each write: the engine's
        # configuration may be replaced while it runs).
        self.backlog = backlog
        # Seconds the reply's versions are left to settle before its reflection is due.
        self.settle = settle
        # Exchanges the database refused (busy, full), written by the next flush. Only the
        # flush that holds `_flushing` takes from it.
        self._pending: deque[Exchange] = deque()
        self._flushing = asyncio.Lock()
        self._flush_task: asyncio.Task[int] | None = None
        self.dropped = 0

    @property
    def waiting(self) -> int:
        """Exchanges refused by the database and not written yet."""
        return len(self._pending)

    async def write(self, exchange: Exchange) -> bool:
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
            self.dropped += 1
            log.error("exchange %s dropped: %s", exchange.exchange_id, unexpected(exc))
            return False
        return True

    def flush_soon(self) -> None:
        """Start a flush in the background unless one runs."""
        if self._flush_task is None or self._flush_task.done():
            self._flush_task = asyncio.create_task(self.flush_pending())

    def _wait_for_database(self, exchange: Exchange, *, first: bool = False) -> None:
        """Keep an exchange until the database takes it; the oldest goes past the bound."""
        if len(self._pending) >= MAX_WAITING_EXCHANGES:
            lost = exchange if first else self._pending.popleft()
            self.dropped += 1
            log.error(
                "exchange %s dropped: %d already wait for the database",
                lost.exchange_id,
                len(self._pending),
            )
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
        for line in e.joined:
            # A quick line forgotten while this reply was written: the reply read it, so
            # nothing of the exchange is stored (the message itself stays, unanswered).
            if await erasure.was_erased(tx, line):
                return
        if e.joined:
            await joined_lines.record(tx, e.exchange_id, e.joined)
        await history.add_reply(
            tx,
            source_id=f"{e.exchange_id}:reply",
            story_id=e.story_id,
            author_name=e.author or self.author,
            content=e.reply,
            now=self.clock(),
        )
        backlog = self.backlog()
        now = self.clock()
        dropped = await outbox.enqueue(
            tx, e, now=now, backlog=backlog, due=now + max(0.0, self.settle())
        )
        if dropped:
            await counters.bump(tx, "reflection_dropped_backlog", dropped)
            log.warning(
                "user %d: %d oldest reflections dropped (backlog of %d)",
                e.user_id,
                dropped,
                backlog,
            )
