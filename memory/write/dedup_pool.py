"""Dedup index builds in another process: the one part of a build that is pure Python (the
features of every text, ~100 µs each) no longer shares the interpreter lock with the event loop.

Built in a worker thread, an index of 100,000 memories held the lock for seconds beside every
turn: a turn arriving during it waited 7.5 s and the loop stalled 277 ms (make bench-loop). The
process gets plain texts in chunks and sends back numpy arrays and the distinct words and
carrier keys (`memory.write.dedup_features`); this process assembles them in a worker thread,
which is a few numpy calls. The caller checks the result against the store's generation as for
any build (`memory.write.apply`).

The pool is started at the first large build (spawned, not forked: the bot's process has
threads) and shut down by `close` (the worker's, when the bot stops): a chunk running then
finishes, the others are cancelled. A failed process build is logged (the exception's type,
never a text), counted in `fallbacks`, and the features are computed in a thread instead.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from memory.bulk import quiet
from memory.write.dedup_features import Features, features
from memory.write.dedup_index import DedupIndex, Source

log = logging.getLogger(__name__)

# Below this many memories a build stays in a thread: ~0.2 s of features, less than starting a
# process (0.5-1 s to import numpy and the text module there).
PROCESS_MIN = 2_000
# Texts per chunk sent (~0.5 s of work there): `close` waits for at most one, and sending or
# receiving one holds the interpreter lock here for a few milliseconds.
CHUNK = 5_000
# One process: the machine's other core stays with the bot (two cores measured).
WORKERS = 1


# The build process's scheduling priority below the bot's: a build is background work, and on
# two cores shared with other jobs the bot's process competing with it stalled the event loop
# 196-309 ms with 2-7 ms of the loop's own work (make bench-loop, load average 7.7).
NICENESS = 10


def _start_worker() -> None:
    # Ctrl-C in a terminal reaches the whole process group: the bot stops its pool itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(NICENESS)


class IndexBuilder:
    """Builds dedup indexes, large ones in a process pool it owns; `close` it when done."""

    def __init__(
        self,
        *,
        process_min: int = PROCESS_MIN,
        chunk: int = CHUNK,
        work: Callable[[Sequence[str]], Features] = features,
    ) -> None:
        self.process_min = process_min
        self.chunk = chunk
        # What the process runs on each chunk: a module-level function (sent by name).
        self.work = work
        # Builds whose process part failed and were done in a thread instead.
        self.fallbacks = 0
        # Builds done in the process pool.
        self.in_process = 0
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False

    async def build(self, source: Source) -> DedupIndex:
        """The dedup index of `source`, its features computed off this process when large."""
        if len(source) < self.process_min or self._closed:
            return await asyncio.to_thread(build_in_thread, source)
        texts = await asyncio.to_thread(source.texts)
        try:
            parts = await self._in_process(texts)
            self.in_process += 1
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self.closed() or (task is not None and task.cancelling()):
                raise
            # The pool closed under this build (the bot stopping): its chunks were cancelled.
            parts = [await asyncio.to_thread(quiet(features), texts)]
        except Exception as exc:
            self.fallbacks += 1
            log.warning(
                "dedup index of %d memories: the build process failed (%s), built in a"
                " thread instead",
                len(source),
                type(exc).__name__,
            )
            if isinstance(exc, BrokenProcessPool):  # a process died: a new pool next time
                broken, self._executor = self._executor, None
                if broken is not None:
                    broken.shutdown(wait=False)
            parts = [await asyncio.to_thread(quiet(features), texts)]
        return await asyncio.to_thread(quiet(DedupIndex.assembled), source, parts)

    async def _in_process(self, texts: list[str]) -> list[Features]:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                WORKERS,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
            )
        loop = asyncio.get_running_loop()
        chunks = [texts[i : i + self.chunk] for i in range(0, len(texts), self.chunk)]
        futures = [loop.run_in_executor(self._executor, self.work, c) for c in chunks]
        try:
            return list(await asyncio.gather(*futures))
        except BaseException:
            for future in futures:
                future.cancel()
            raise

    def closed(self) -> bool:
        """Whether `close` was called (later builds run in a thread)."""
        return self._closed

    def processes(self) -> list[int]:
        """The ids of the pool's processes now (none before the first large build)."""
        running = getattr(self._executor, "_processes", None) or {}
        return sorted(running)

    async def close(self) -> None:
        """Stop the pool: the chunk running finishes, the rest are cancelled; no process is
        left behind. Later builds run in a thread."""
        self._closed = True
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)


@quiet
def build_in_thread(source: Source) -> DedupIndex:
    """The dedup index of `source` built whole in this thread (a worker thread)."""
    return DedupIndex.assembled(source, [features(source.texts())])
