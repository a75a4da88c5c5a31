"""The memory's background work, listed once: each job, how often it runs, and one way to start
the set and to stop it. Both front ends (the Discord bot and the interactive terminal chat) call
`start` and get the same set; nothing else schedules memory work.

    job        runs                                          its effect
    reflect    at start, then every REFLECT_EVERY (5 s)      the exchanges a busy database refused
                                                             are written; the due reflections run,
                                                             retries included
    reindex    at start, then every [memory]                 memories without a current vector
               reindex_interval (REINDEX_INTERVAL, 45 s)     get one
    erasures   at start, then every ERASURE_EVERY (30 s)     the erasures a reader kept pending
                                                             are finished (the files checkpointed)
    retention  at start, then every RETENTION_EVERY (1 h)    the [privacy] retention rules and
                                                             the time replies' versions are kept
                                                             (memory.manage.forgetting.tidy)
    warm-up    once, at start                                the caches of the places active
                                                             lately, built before they speak
    casting    every CASTING_EVERY (30 s)                    the characters chosen per channel
                                                             and DM, and the channel modes set,
                                                             in another process are read
    followups  every FOLLOWUPS_EVERY (60 s), when a front    the follow-ups the dated memories
               end gives a way to post them and [followups]  allow are planned; those due are
               enabled is true                               written and posted, under a lease
                                                             (memory.followups.sender)
    thaw       at start, then every THAW_EVERY (5 min)       when the objects frozen after large
                                                             builds grew by 50,000 or more since
                                                             the fewest counted and no turn is
                                                             in flight (200,000 if turns always
                                                             are), what they hold that is
                                                             garbage is freed (memory.bulk.Thaw)

Not here, because they are not periodic memory work: the reflection a front end starts as soon
as it has replied (it calls `reflect`, or the worker's `reflect_now`, at once); the heartbeat file
and the event loop's lag monitor, which `bot.runtime.open_runtime` runs for either front end.
Condensing a story's history is part of its reflection (memory/write/summary.py), and the /stats
figures are counted when asked.

One difference, by mode rather than by front end: the terminal reading a script (stdin is not a
terminal) starts none of these. Each of its turns reflects and indexes before the next line is
read, so what a script leaves behind does not depend on timing. The one-shot commands (`echo-bot
sync`, export, import, reindex, doctor) start none either: they end as soon as they are done.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import gc
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from memory import bulk
from memory.errors import unexpected
from memory.followups.sender import Deliverer, FollowUps
from memory.manage import casting, forgetting
from memory.turn.admission import Admission
from memory.turn.engine import Engine
from memory.vectors.indexer import Indexer
from memory.write.worker import ReflectionWorker

log = logging.getLogger(__name__)

# How often the outbox is looked at (a turn also wakes the worker at once).
REFLECT_EVERY = 5.0
# How often an erasure a reader kept pending is tried again, and the retention rules applied.
ERASURE_EVERY = 30.0
RETENTION_EVERY = 3600.0
# How often the choices of /character and /channel mode made in other processes (shards) are
# read again.
CASTING_EVERY = 30.0
# How often the follow-ups due are looked for: a follow-up goes out within a minute of its time.
FOLLOWUPS_EVERY = 60.0
# How often the objects frozen after large builds are counted (memory.bulk.Thaw): at most one
# full collection per period, which the event loop waits for.
THAW_EVERY = 300.0


@dataclass(frozen=True)
class Job:
    """One piece of background work: its name, seconds between runs (None: once, at start),
    and what a run does."""

    name: str
    every: float | None
    run: Callable[[], Awaitable[object]]


async def thaw(thawing: bulk.Thaw, admission: Admission) -> None:
    """Free the garbage the frozen objects hold, when they grew past the bound and no turn
    waits for the event loop (or they grew past the overdue bound)."""
    started = time.perf_counter()
    if thawing(busy=admission.busy()):
        log.debug(
            "frozen objects collected in %.0f ms: %d frozen again",
            1000 * (time.perf_counter() - started),
            gc.get_freeze_count(),
        )


async def reflect(engine: Engine, worker: ReflectionWorker) -> None:
    """Write what a busy database refused, then reflect on the queued exchanges. Never raises:
    a turn starts it as a task of its own, whose error would print the exception's message."""
    try:
        await engine.flush_pending()
        await worker.run_due()
    except Exception as exc:
        log.error("background writes and reflections failed: %s", unexpected(exc))


def listed(
    engine: Engine,
    worker: ReflectionWorker,
    indexer: Indexer,
    *,
    reindex_every: float,
    history_days: float,
    followups: FollowUps | None = None,
    deliver: Deliverer | None = None,
) -> tuple[Job, ...]:
    """Every background job, as the module's docstring lists them (`followups` only with
    something to post them through, and when the operator allows them)."""
    store = engine.store
    posting = (
        (Job("followups", FOLLOWUPS_EVERY, functools.partial(followups.run, deliver)),)
        if followups is not None and deliver is not None and followups.policy.enabled
        else ()
    )
    return (
        Job("reflect", REFLECT_EVERY, functools.partial(reflect, engine, worker)),
        Job("reindex", reindex_every, indexer.run_once),
        Job("erasures", ERASURE_EVERY, functools.partial(forgetting.settle_pending, store)),
        Job(
            "retention",
            RETENTION_EVERY,
            functools.partial(
                forgetting.tidy,
                store,
                history_days=history_days,
                versions_hours=engine.config.versions_hours,
            ),
        ),
        Job("warm-up", None, engine.warm_up),
        Job("casting", CASTING_EVERY, functools.partial(casting.reload, store, engine.characters)),
        Job("thaw", THAW_EVERY, functools.partial(thaw, bulk.Thaw(), engine.admission)),
        *posting,
    )


class Background:
    """Jobs running in this event loop: each one run at a time, a first run at start, runs
    missed while the machine slept made up once (not piled up, not skipped)."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.jobs = tuple(jobs)
        self._scheduler = AsyncIOScheduler()
        # The runs under way, and APScheduler's tasks waiting for them: `stop` waits for both.
        self._runs: set[asyncio.Task[None]] = set()
        self._waiting: set[asyncio.Task[Any]] = set()
        self._stopping = False
        now = datetime.datetime.now(datetime.UTC)
        for job in self.jobs:
            timing: dict[str, Any] = (
                {"trigger": "date", "run_date": now}
                if job.every is None
                else {"trigger": "interval", "seconds": job.every, "next_run_time": now}
            )
            self._scheduler.add_job(
                self._run,
                args=[job],
                id=job.name,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,
                **timing,
            )

    @property
    def running(self) -> bool:
        return self._scheduler.running and not self._stopping

    def start(self) -> None:
        """Start the jobs in the running event loop."""
        self._scheduler.start()

    async def stop(self) -> None:
        """Start no run any more, cancel the runs under way and wait until they have ended: a
        reflection cut short has given its outbox row back (memory.write.worker), the
        re-indexing its turn (Store.exclusive)."""
        self._stopping = True
        if not self._scheduler.running:
            return
        # Paused first, and its last tasks let start: APScheduler's shutdown cancels the tasks
        # it made, and one cancelled before it began is logged as an error with a traceback.
        self._scheduler.pause()
        await asyncio.sleep(0)
        for task in self._runs:
            task.cancel()
        await asyncio.gather(*self._runs, *self._waiting, return_exceptions=True)
        if self._scheduler.running:  # not already shut down by a `stop` at the same time
            self._scheduler.shutdown(wait=False)

    async def _run(self, job: Job) -> None:
        if self._stopping:
            return
        run = asyncio.create_task(self._guarded(job), name=f"job {job.name}")
        self._runs.add(run)
        run.add_done_callback(self._runs.discard)
        waiting = asyncio.current_task()
        if waiting is not None:
            self._waiting.add(waiting)
            waiting.add_done_callback(self._waiting.discard)
        # APScheduler cancels its task at shutdown; the run itself is `stop`'s to end, and a
        # cancelled run is no error for APScheduler to log with a traceback.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(run)

    async def _guarded(self, job: Job) -> None:
        try:
            await job.run()
        except Exception as exc:  # APScheduler's own log line would print the message
            log.error("background job %s failed: %s", job.name, unexpected(exc))


def start(jobs: Sequence[Job]) -> Background:
    """Start these jobs (`listed`: all of them) in the running event loop; the caller ends them
    with `stop`."""
    background = Background(jobs)
    background.start()
    return background
