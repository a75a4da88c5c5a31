"""The reflection worker: outbox row -> LLM reflection -> parse -> apply, with retries.

A reflection runs after the reply was delivered, so nothing here can change or delay it. A failed
attempt (whatever raised: the backend, the store, or a bug on one strange row) is retried with
exponential backoff; after MAX_ATTEMPTS the row is dropped with a logged, counted reason. The rows
behind a failing one move on. The due rows are taken one person at a time, in turn.

A server that refuses the structured-output format costs no attempt: the chat client tries the
next mode within the same call (memory.structured). What a failure said is kept with the row
and logged: the backend's own words (shortened, redacted), never a bug's message.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from memory.errors import BackendError, StoreError, unexpected
from memory.llm import ChatBackend
from memory.read.cache import CacheBudget
from memory.store import counters, history, outbox
from memory.store.db import Store, Tx
from memory.write import reflection, stances, summary
from memory.write.apply import WriteReport, apply_reflection
from memory.write.dedup_index import IndexCache

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BASE_DELAY = 30.0  # seconds before the first retry; doubles each time
MAX_DELAY = 3600.0
REFLECTION_DEADLINE = 180.0


class ReflectionWorker:
    """Drains the outbox, one reflection at a time."""

    def __init__(
        self,
        store: Store,
        chat: ChatBackend,
        *,
        character_name: str,
        deadline: float = REFLECTION_DEADLINE,
        clock: Callable[[], float] = time.time,
        caches: CacheBudget | None = None,
    ) -> None:
        self.store = store
        self.chat = chat
        self.character_name = character_name
        self.deadline = deadline
        self.clock = clock
        self._lock = asyncio.Lock()
        # Bounded with the engine's caches when given its budget (`engine.caches`).
        self.indexes = IndexCache(caches)

    async def run_due(self, *, limit: int = 10) -> int:
        """Reflect on the due exchanges; return how many were applied. One run at a time."""
        if self._lock.locked():
            return 0
        async with self._lock:
            applied = 0
            for row in await outbox.due(self.store, now=self.clock(), limit=limit):
                applied += await self._reflect(row) is not None
            return applied

    async def reflect_now(self, exchange_id: str) -> WriteReport | None:
        """Reflect on one exchange right away (terminal mode), if it is still pending."""
        async with self._lock:
            row = await outbox.get(self.store, exchange_id)
            return await self._reflect(row) if row else None

    async def _reflect(self, row: outbox.OutboxRow) -> WriteReport | None:
        exchange = row.exchange
        try:
            story = exchange.story_id
            messages = reflection.build_messages(
                user_name=exchange.user_name,
                character_name=self.character_name,
                user_message=exchange.user_message,
                reply=exchange.reply,
                previous_summary=await history.summary(self.store, story),
                anchors=[(a.id, a.text) for a in await summary.active(self.store, story)],
                positions=[(p.topic, p.idea) for p in await stances.for_story(self.store, story)],
            )
            result = await self.chat.chat(
                messages, schema=reflection.json_schema(), deadline=self.deadline
            )
            parsed = reflection.parse(result.content)
            if not parsed.candidates and any(w == "payload" for w, _ in parsed.dropped):
                raise _Unusable(parsed.dropped[0][1])
            report = await apply_reflection(
                self.store, exchange, parsed, character_name=self.character_name,
                now=self.clock(), indexes=self.indexes,
            )  # fmt: skip
        except (BackendError, StoreError, _Unusable) as exc:
            await self._failed(row, exc)
            return None
        except Exception as exc:
            # A bug met on this row: it must not stop the rows of everyone else behind it.
            log.error("reflection of exchange %s raised %s",
                      row.exchange.exchange_id, unexpected(exc))  # fmt: skip
            await self._failed(row, exc)
            return None
        try:
            await self.store.transact(lambda tx: outbox.mark_done(tx, row.id))
        except StoreError:
            # Applied but not marked: the next attempt finds the exchange already written
            # (apply_reflection is idempotent per exchange) and marks it then.
            log.warning("exchange %s reflected but not marked done", row.exchange.exchange_id)
        return report

    async def _failed(self, row: outbox.OutboxRow, exc: Exception) -> None:
        attempts = row.attempts + 1
        reason = type(exc).__name__
        error = _error_text(exc)
        retry_at: float | None = None
        if attempts < MAX_ATTEMPTS:
            retry_at = self.clock() + min(MAX_DELAY, BASE_DELAY * 2 ** (attempts - 1))
            log.warning(
                "reflection of exchange %s failed (%s), attempt %d, retrying later",
                row.exchange.exchange_id, error, attempts,
            )  # fmt: skip
        else:
            log.error(
                "reflection of exchange %s dropped after %d attempts: %s",
                row.exchange.exchange_id, attempts, error,
            )  # fmt: skip

        async def record(tx: Tx) -> None:
            await outbox.mark_failed(tx, row.id, error=error, next_attempt_at=retry_at)
            await counters.bump(tx, f"reflection_failed:{reason}")
            if retry_at is None:
                await counters.bump(tx, f"reflection_dropped_after_retries:{reason}")

        try:
            await self.store.transact(record)
        except StoreError:
            # Not log.exception: the chained exception's message may quote the exchange.
            log.error("could not record the failure of exchange %s", row.exchange.exchange_id)


class _Unusable(Exception):
    """The reflection answer held no JSON at all: worth another try."""


def _error_text(exc: Exception) -> str:
    """What a failure said, for the log and the outbox: the texts of deliberate errors (the
    backend's are shortened and redacted where they are raised), only the type of a bug (its
    message may quote what a person said)."""
    if isinstance(exc, BackendError | StoreError | _Unusable):
        return f"{type(exc).__name__}: {exc}"
    return f"{type(exc).__name__} (message withheld)"
