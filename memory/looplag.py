"""The event loop's own health: how late it wakes a ticker, the longest stall per minute.

Every person, Discord heartbeat and command shares one event loop: a stall is felt by all of
them at once. A ticker sleeps TICK and measures how much later than asked it woke; /stats shows
the longest lateness of the last minute, and a stall over WARN_STALL is logged (at most one line
per minute, with how many there were), because a warning per stall would flood a log exactly
when the machine is struggling.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)

# Wake-ups per second: the ticker costs microseconds, and a stall shorter than this is still
# seen (it delays the next wake-up by its whole length).
TICK = 0.1
# The window /stats reports on.
WINDOW = 60.0
# A stall longer than this is logged: five times the 50 ms a step may take on the loop
# (bench/results/loop.md); shorter ones come and go with a busy machine's own scheduling.
WARN_STALL = 0.25


class LoopLag:
    """Measures the event loop's stalls while started."""

    def __init__(
        self,
        *,
        tick: float = TICK,
        window: float = WINDOW,
        warn_above: float = WARN_STALL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tick = tick
        self.window = window
        self.warn_above = warn_above
        self.clock = clock
        # (when, lateness) of every stall over a tenth of a tick, within the window.
        self._samples: deque[tuple[float, float]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._warned_at: float | None = None
        self._unwarned = 0

    def start(self) -> None:
        """Start the ticker in the running loop (once)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="loop-lag")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def longest(self) -> float | None:
        """The longest stall of the last minute in seconds; None when not measuring."""
        if self._task is None:
            return None
        self._forget_old(self.clock())
        return max((late for _, late in self._samples), default=0.0)

    def record(self, late: float) -> None:
        """Note one wake-up `late` seconds after it was due."""
        now = self.clock()
        self._forget_old(now)
        if late > self.tick / 10:
            self._samples.append((now, late))
        if late > self.warn_above:
            self._unwarned += 1
            if self._warned_at is None or now - self._warned_at >= self.window:
                log.warning(
                    "the event loop stalled %.0f ms (%d stalls over %.0f ms since the last"
                    " warning): every person and heartbeat waited",
                    late * 1000,
                    self._unwarned,
                    self.warn_above * 1000,
                )
                self._warned_at = now
                self._unwarned = 0

    def _forget_old(self, now: float) -> None:
        while self._samples and now - self._samples[0][0] > self.window:
            self._samples.popleft()

    async def _run(self) -> None:
        while True:
            started = self.clock()
            await asyncio.sleep(self.tick)
            self.record(max(0.0, self.clock() - started - self.tick))
