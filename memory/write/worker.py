"""The reflection worker: outbox row -> LLM reflection -> parse -> apply, with retries.

A reflection runs after the reply was delivered, so nothing here can change or delay it. A failed
attempt (whatever raised: the backend, the store, or a bug on one strange row) is retried with
exponential backoff; after MAX_ATTEMPTS the row is dropped with a logged, counted reason. The rows
behind a failing one move on. The due rows are taken one person at a time, in turn.

Every process on the database may run a worker: each claims one row at a time under a lease
(memory.store.tables.outbox) and applies the reflection in the transaction that checks the lease
still holds the row. A worker killed mid-reflection leaves its row to the others once the lease
ends; one that outlived its lease finds the row taken and discards its result (counted, logged), so
every exchange is reflected once. A claim or a reflection cancelled (the bot stopping) gives its
row back at once, whenever the cancellation lands, and `close` stops the reflections under way
and waits for those give-backs: a row a stopped process held is never left waiting its lease.

A server that refuses the structured-output format costs no attempt: the chat client tries the
next mode within the same call (memory.backends.structured). What a failure said is kept with the
row
and logged: the backend's own words (shortened, redacted), never a bug's message.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import tzinfo
from secrets import token_hex

from memory.backends.chat import ChatBackend
from memory.backends.redact import NO_SECRETS, Secrets
from memory.cache import CacheBudget
from memory.character.cast import Characters
from memory.context.when import Language
from memory.errors import BackendError, StoreError, unexpected
from memory.lexicon.dates import machine_zone
from memory.model import Exchange
from memory.store import Store, Tx
from memory.store.queries import provenance
from memory.store.tables import characters as cast_store
from memory.store.tables import counters, history, memory_versions, off_record, outbox
from memory.write import reflection, stances, summary
from memory.write.apply import ShownErased, WriteReport, apply_reflection
from memory.write.dedup_index import IndexCache
from memory.write.dedup_pool import IndexBuilder

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
# Times in a row a reflection is asked again at once because what it was shown was erased while
# the model answered; past them each such time is a failed attempt (MAX_ATTEMPTS, back-off).
REASKS = 3
REASKS_REMEMBERED = 4096
BASE_DELAY = 30.0  # seconds before the first retry; doubles each time
MAX_DELAY = 3600.0
REFLECTION_DEADLINE = 180.0
# A claimed row is held this long past the reflection's deadline: applying it (a dedup index
# built at 100k memories: seconds) and a loaded machine fit in it; only a dead or hung worker
# lets it expire.
LEASE_MARGIN = 120.0


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
        lease: float | None = None,
        name: str | None = None,
        caches: CacheBudget | None = None,
        secrets: Secrets = NO_SECRETS,
        zone: tzinfo | None = None,
        characters: Characters | None = None,
    ) -> None:
        self.store = store
        # The cast, when there are several: an exchange is reflected on as its character's.
        self.characters = characters
        # The character's time zone (None: the machine's): relative dates are read in it (see
        # apply.dated), and the reflection is told its exchange's date and time in it.
        self.zone = zone
        self.chat = chat
        self.character_name = character_name
        self.deadline = deadline
        self.clock = clock
        self.lease = deadline + LEASE_MARGIN if lease is None else lease
        # Names this worker in the outbox's leases and the logs: host, process, a random tag.
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{token_hex(3)}"
        # Out of what a failure's text logs and stores (the outbox's last error).
        self.secrets = secrets
        self._claims = itertools.count(1)
        self._lock = asyncio.Lock()
        # Exchanges given back because what their reflection was shown was erased meanwhile,
        # and how many times in a row (REASKS).
        self._asked_again: OrderedDict[str, int] = OrderedDict()
        # The reflections under way and the rows being given back: `close` waits for both.
        self._reflecting: set[asyncio.Task[WriteReport | None]] = set()
        self._giving_back: set[asyncio.Task[None]] = set()
        self._closing = False
        # Bounded with the engine's caches when given its budget (`engine.caches`).
        self.indexes = IndexCache(caches)
        self.builder = IndexBuilder()
        # Told of each reflection that wrote something (a front end's receipts); called
        # after the commit, never awaited: each returns at once.
        self.listeners: list[Callable[[Exchange, WriteReport], None]] = []

    async def _character_in(self, story_id: int) -> tuple[str, Language]:
        """The name of the character whose story this is, and the language of its dates."""
        if self.characters is None:
            return self.character_name, "en"
        if len(self.characters) == 1:
            return self.character_name, self.characters.default.language
        _, key = await cast_store.owner(self.store, cast_store.STORY, story_id)
        playing = self.characters.playing(key or self.characters.home)
        return playing.name, playing.language

    async def close(self) -> None:
        """Stop the reflections under way, wait until their rows are given back, and stop the
        process that builds large dedup indexes (the bot stopping, before its store closes)."""
        self._closing = True
        for task in list(self._reflecting):
            task.cancel()
        while pending := self._reflecting | self._giving_back:
            await asyncio.wait(pending)
        await self.builder.close()

    async def run_due(self, *, limit: int = 10) -> int:
        """Reflect on the due exchanges, claiming them one at a time (other processes claim
        the others); return how many were applied. One run at a time."""
        if self._lock.locked():
            return 0
        async with self._lock:
            applied = 0
            for _ in range(limit):
                if self._closing or not await outbox.claimable(self.store, now=self.clock()):
                    break
                lease = await self._claim(
                    lambda tx: outbox.claim(
                        tx,
                        holder=self._holder(),
                        now=self.clock(),
                        lease=self.lease,
                        max_attempts=MAX_ATTEMPTS,
                    )
                )
                if lease is None:
                    break
                applied += await self._reflect_owned(lease) is not None
            return applied

    async def reflect_now(self, exchange_id: str) -> WriteReport | None:
        """Reflect on one exchange right away (terminal mode), if it is still pending and no
        other worker holds it."""
        async with self._lock:
            if self._closing:
                return None
            lease = await self._claim(
                lambda tx: outbox.claim_exchange(
                    tx, exchange_id, holder=self._holder(), now=self.clock(), lease=self.lease
                )
            )
            return await self._reflect_owned(lease) if lease else None

    def _holder(self) -> str:
        """A token for one claim: a late result of an earlier claim never passes for it."""
        return f"{self.name}/{next(self._claims)}"

    async def _claim(
        self, claim: Callable[[Tx], Awaitable[outbox.Lease | None]]
    ) -> outbox.Lease | None:
        """Run a claim's transaction. Cancelled while it runs, the claim still commits (the
        store does not cut a transaction half way): the row it took is given back then. A claim
        that lands once `close` began is given back at once."""
        claiming = asyncio.ensure_future(self.store.transact(claim))
        try:
            lease = await asyncio.shield(claiming)
        except asyncio.CancelledError:
            await self._give_back(claiming)
            raise
        if lease is not None and self._closing:
            await self._give_back(lease)
            return None
        return lease

    async def _reflect_owned(self, lease: outbox.Lease) -> WriteReport | None:
        """Reflect in a task of this worker's own, which `close` may cancel."""
        task = asyncio.ensure_future(self._reflect(lease))
        self._reflecting.add(task)
        task.add_done_callback(self._reflecting.discard)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and self._closing and not (current and current.cancelling()):
                return None  # stopped by `close`, not this caller's own cancellation
            raise

    async def _reflect(self, lease: outbox.Lease) -> WriteReport | None:
        row = lease.row
        exchange = row.exchange
        try:
            if await off_record.marked(self.store, exchange.exchange_id):
                return await self._set_aside(lease)
            story = exchange.story_id
            character_name, language = await self._character_in(story)
            said, said_at = await history.summary_dated(self.store, story)
            held = await summary.active(self.store, story)
            positions = await stances.for_story(self.store, story)
            used = await memory_versions.shown_for(
                self.store, exchange.user_id, exchange.exchange_id
            )
            shown = provenance.Shown(
                said_at, tuple(a.id for a in held), tuple(p.id for p in positions)
            )
            written = await history.by_source(self.store, exchange.exchange_id)
            at = written.created_at if written is not None else self.clock()
            messages = reflection.build_messages(
                user_name=exchange.user_name,
                character_name=character_name,
                user_message=exchange.user_message,
                reply=exchange.reply,
                previous_summary=said,
                anchors=[(a.id, a.text) for a in held],
                positions=[(p.topic, p.idea) for p in positions],
                memories=[(m.id, m.text) for m in used],
                said_at=at,
                zone=self.zone or machine_zone(at),
                language=language,
            )
            result = await self.chat.chat(
                messages, schema=reflection.json_schema(), deadline=self.deadline
            )
            parsed = reflection.parse(result.content)
            if not parsed.candidates and any(w == "payload" for w, _ in parsed.dropped):
                raise _Unusable(parsed.dropped[0][1])
            report = await apply_reflection(
                self.store,
                exchange,
                parsed,
                character_name=character_name,
                now=self.clock(),
                indexes=self.indexes,
                lease=lease,
                builder=self.builder,
                shown=shown,
                zone=self.zone,
                shown_memories={m.id: m.text for m in used},
            )
        except ShownErased as exc:
            # What it was shown changed under it: the row goes back, to be asked again from
            # the notes as they are now (the attempt is not counted), REASKS times in a row;
            # past them, as a failed attempt (its back-off, then dropped): forgetting what it
            # is shown again and again must not hold a worker asking the model forever.
            asked = self._asked_again.pop(exchange.exchange_id, 0) + 1
            if asked > REASKS:
                await self._failed(lease, exc)
                return None
            self._asked_again[exchange.exchange_id] = asked
            while len(self._asked_again) > REASKS_REMEMBERED:
                self._asked_again.popitem(last=False)
            log.info(
                "exchange %s: an erasure took out part of what its reflection was shown;"
                " asking again",
                exchange.exchange_id,
            )
            await self._release(lease)
            return None
        except (BackendError, StoreError, _Unusable) as exc:
            await self._failed(lease, exc)
            return None
        except Exception as exc:
            # A bug met on this row: it must not stop the rows of everyone else behind it.
            log.error(
                "reflection of exchange %s raised %s", row.exchange.exchange_id, unexpected(exc)
            )
            await self._failed(lease, exc)
            return None
        except asyncio.CancelledError:
            # Stopped (shutdown): the row goes back at once rather than when the lease ends.
            # Cancelled in the apply, the apply's transaction still ends first (the store
            # runs it to its end): a row it completed is no longer this lease's to give back.
            await self._give_back(lease)
            raise
        self._asked_again.pop(exchange.exchange_id, None)
        if report.stale:
            return None
        if report.outcomes and not (report.erased or report.off_record):
            self._tell(exchange, report)
        return report

    def _tell(self, exchange: Exchange, report: WriteReport) -> None:
        for listener in self.listeners:
            try:
                listener(exchange, report)
            except Exception as exc:  # a front end's bug must not fail the reflection
                log.error("a reflection listener raised %s", unexpected(exc))

    async def _set_aside(self, lease: outbox.Lease) -> WriteReport:
        """Mark the row of an exchange kept off the record done without asking the model:
        its texts leave the outbox, nothing is learned."""
        exchange_id = lease.row.exchange.exchange_id

        async def run(tx: Tx) -> None:
            if await outbox.holds(tx, lease):
                await outbox.mark_done(tx, lease.row.id)
                await counters.bump(tx, "reflection_skipped_off_record")

        await self.store.transact(run)
        log.info("exchange %s is off the record: not reflected", exchange_id)
        return WriteReport(exchange_id, off_record=True)

    async def _give_back(self, lease: outbox.Lease | asyncio.Future[outbox.Lease | None]) -> None:
        """Give a row back in a task of its own, which `close` waits for: a second
        cancellation of the caller does not stop it. `lease` may be a claim still running."""
        task = asyncio.ensure_future(self._release(lease))
        self._giving_back.add(task)
        task.add_done_callback(self._giving_back.discard)
        await asyncio.shield(task)

    async def _release(self, lease: outbox.Lease | asyncio.Future[outbox.Lease | None]) -> None:
        if isinstance(lease, asyncio.Future):
            try:
                claimed = await lease
            except Exception:
                return  # the claim failed: it holds nothing
            if claimed is None:
                return
            lease = claimed
        try:
            await self.store.transact(functools.partial(outbox.release, lease=lease))
        except Exception as exc:
            log.warning(
                "exchange %s not given back (%s): it returns when its lease ends",
                lease.row.exchange.exchange_id,
                type(exc).__name__,
            )

    async def _failed(self, lease: outbox.Lease, exc: Exception) -> None:
        row = lease.row
        attempts = row.attempts + 1
        reason = type(exc).__name__
        error = self.secrets.redact(_error_text(exc))
        retry_at: float | None = None
        if attempts < MAX_ATTEMPTS:
            retry_at = self.clock() + min(MAX_DELAY, BASE_DELAY * 2 ** (attempts - 1))
            log.warning(
                "reflection of exchange %s failed (%s), attempt %d, retrying later",
                row.exchange.exchange_id,
                error,
                attempts,
            )
        else:
            log.error(
                "reflection of exchange %s dropped after %d attempts: %s",
                row.exchange.exchange_id,
                attempts,
                error,
            )

        async def record(tx: Tx) -> None:
            if not await outbox.holds(tx, lease):
                if await outbox.queued_at(tx, row.exchange.exchange_id) is None:
                    return  # the exchange was forgotten meanwhile: its row with it
                # Another worker took the row after this one's lease expired: its attempt
                # counts, not this one.
                await counters.bump(tx, "reflection_stale_discarded")
                log.warning(
                    "failure of exchange %s not recorded: its lease was taken over",
                    row.exchange.exchange_id,
                )
                return
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
