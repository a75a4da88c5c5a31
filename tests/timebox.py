"""A bound on a test's time that holds even when the event loop spins in pure Python and no
await ever comes back (asyncio.wait_for cannot fire then): the interval timer's signal raises
in the main thread between two bytecodes, and again each second while the block still runs (a
task that caught it, or a second loop, does not outlast it); the block fails either way."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the block once `seconds` of wall time have passed."""
    expired = False

    def alarm(signum: int, frame: FrameType | None) -> None:
        nonlocal expired
        expired = True
        raise TimeoutError(f"still running after {seconds} s")

    before = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    if expired:
        raise TimeoutError(f"ran past {seconds} s")
