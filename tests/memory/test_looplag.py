"""The loop-lag monitor: the longest stall of the last minute, and a warning above the threshold
at most once a minute (a struggling machine must not flood the log)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from memory.looplag import LoopLag


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_longest_stall_of_the_last_minute(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    lag = LoopLag(clock=clock, tick=0.1, window=60.0, warn_above=0.25)
    assert lag.longest() is None  # not started: not measured
    lag.start()
    try:
        with caplog.at_level(logging.WARNING, logger="memory.looplag"):
            for late in (0.02, 0.4, 0.3, 0.05):
                lag.record(late)
                clock.now += 10
            assert lag.longest() == 0.4
            assert len(caplog.records) == 1  # two stalls over 250 ms, one line
            clock.now += 45  # the 0.4 s stall is now 75 s old, the 0.3 s one 65 s
            assert lag.longest() == 0.05
            lag.record(0.5)
            assert len(caplog.records) == 2 and "2 stalls" in caplog.records[-1].getMessage()
    finally:
        await lag.stop()


async def test_a_blocked_loop_is_seen() -> None:
    lag = LoopLag(tick=0.01)
    lag.start()
    try:
        await asyncio.sleep(0.05)
        time.sleep(0.3)  # what a synchronous build on the loop does to everyone
        await asyncio.sleep(0.05)
        longest = lag.longest()
        assert longest is not None and longest >= 0.2
    finally:
        await lag.stop()
    assert lag.longest() is None
