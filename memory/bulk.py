"""Bulk builds in worker threads that the event loop does not feel.

A build in a worker thread still shares the interpreter lock with the event loop, and two
things in it stalled every person at once (make bench-loop, measured with gc.callbacks):

- the cyclic garbage collector's full passes: each walks every object the process tracks, in
  whichever thread triggers it, the loop waiting for the lock meanwhile (190-250 ms of CPU each
  at 30,000 memories, several per dedup index build, growing with the caches). The caches built
  in worker threads (rank-ordered pools, memories made from rows, and the rows read for them:
  `paused` also wraps those reads) are hundreds
  of thousands of objects that live until the cache drops them and hold no reference cycle
  (tests/memory/test_bulk.py checks it): reference counting frees them, the collector has
  nothing to find in them. So while such a build runs, automatic collections are paused (one
  process-wide switch, counted across threads), and when the last running build ends every
  object then alive is moved out of the collector's sight (gc.freeze, constant time): later
  collections walk only what was allocated since. A frozen object is still freed by reference
  counting when dropped; what stays is only a reference cycle among frozen objects that
  becomes garbage later. Such cycles are what other people's turns have in flight at that
  moment (their requests, responses, futures): frozen at every small person's build, 10,000
  people of one message each kept 33 KB apiece after a full collection (issue 28). So a
  pause freezes only once the builds made FREEZE_MIN items since the last freeze (memories
  made from rows, texts indexed, rows kept, counted by `yielding` and `made`): after a large
  build, or after many small ones whose caches add up; otherwise the collector simply
  resumes. The count is the builds' own: what other turns allocate on the event loop
  meanwhile is not in it, so a busy bot freezes no more often than an idle one (counting
  every new object, a bot answering 50 people at once froze after builds of one memory). The
  cycles a large build's freeze still catches are given back by `Thaw`, a background job:
  when the frozen objects have grown by THAW_GROWTH since the fewest it counted, everything is
  thawed, collected once and frozen again, so what they hold stays bounded however long the
  process runs. That one collection walks every object (594 ms at 50,000 people, the loop
  waiting, and CPython 3.11 cannot do it in steps nor without the interpreter lock), so it
  waits for a moment when no turn is in flight; a bot never idle gets it past THAW_OVERDUE
  times the growth;
- the hand-over of the lock on a busy machine: a thread that never lets go keeps the loop
  waiting for the interpreter's switch interval and then for the OS to run it. Letting go every
  YIELD_EVERY items (`yielding`) measured, for a pure-Python build beside a 1 ms ticker on two
  shared cores: p99 lateness 31 -> 8 ms.
"""

from __future__ import annotations

import functools
import gc
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

# Items between two hand-overs of the interpreter lock (a few milliseconds of work).
YIELD_EVERY = 500
# Items the builds made since the last freeze (memories, texts, rows kept) from which what is
# alive at the end of a pause is frozen: a pool of 2,000 memories is about 6,000 tracked
# objects (a Memory, its tuple and position entry); the full passes that stalled the loop
# walked 30,000 memories' worth and more.
FREEZE_MIN = 2_000
# Frozen objects gained since the fewest counted after which `Thaw` collects: garbage cycles
# frozen by large builds are then at most this many objects (a few MB), and one collection of
# everything runs per that much growth, not per build.
THAW_GROWTH = 50_000
# How many times THAW_GROWTH the frozen objects may grow while turns are in flight before the
# thaw runs anyway: a bot that is never idle still gets the garbage back, one stall per
# 200,000 frozen objects instead of none.
THAW_OVERDUE = 4

_lock = threading.Lock()
_running = 0
# Whether automatic collection was on when the first running build paused it.
_resume = False
# Items the builds made since the last freeze.
_made = 0


@contextmanager
def paused() -> Iterator[None]:
    """No automatic collection while the block runs; what is alive at the end is frozen when
    the builds made FREEZE_MIN items or more since the last freeze."""
    global _running, _resume, _made
    with _lock:
        if _running == 0:
            _resume = gc.isenabled()
            gc.disable()
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                if _made >= FREEZE_MIN:
                    gc.freeze()
                    _made = 0
                if _resume:
                    gc.enable()


def building() -> bool:
    """Whether a build is paused now (in any thread)."""
    with _lock:
        return _running > 0


def made(items: int) -> None:
    """Count `items` a build made and keeps (rows read into a cache): what decides whether a
    pause's end freezes. `yielding` counts what it hands out by itself."""
    global _made
    with _lock:
        _made += items


def quiet(fn: Callable[P, T]) -> Callable[P, T]:
    """`fn` run inside `paused()`: for a build handed to a worker thread."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        with paused():
            return fn(*args, **kwargs)

    return run


def yielding(items: Iterable[T], every: int = YIELD_EVERY) -> Iterator[T]:
    """`items`, letting go of the interpreter lock every `every` of them (a worker thread),
    each counted as made by the running build (`made`)."""
    count = 0
    for count, item in enumerate(items, 1):
        yield item
        if count % every == 0:
            made(every)
            time.sleep(0)
    made(count % every)


class Thaw:
    """Gives back the reference cycles that freezes kept: when the frozen objects have grown by
    `growth` since the fewest this counted, everything is thawed, collected and frozen again.

    One full collection walks every object the process tracks (the event loop waits for it),
    so it runs only when freezes kept that much more, while people wait for a turn only when
    they kept THAW_OVERDUE times that, and never while a build is paused: the build would be
    walked with it, and it freezes its own objects when it ends.
    """

    def __init__(self, growth: int = THAW_GROWTH) -> None:
        self.growth = growth
        self.floor = gc.get_freeze_count()
        self.thawed = 0

    def __call__(self, *, busy: bool = False) -> bool:
        """Collect what the frozen objects hold if they grew past the bound (`busy`: turns are
        in flight, past THAW_OVERDUE times it); whether it did."""
        frozen = gc.get_freeze_count()
        self.floor = min(self.floor, frozen)
        bound = self.growth * (THAW_OVERDUE if busy else 1)
        if building() or frozen - self.floor < bound:
            return False
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.floor = gc.get_freeze_count()
        self.thawed += 1
        return True
