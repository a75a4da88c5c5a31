"""Bulk builds in worker threads: the collector's full passes are paused while one runs, what
it built is out of the collector's sight afterwards, the caches it builds hold no reference
cycle (the only thing a frozen object could leak), the cycles frozen beside them are freed by
the thaw once garbage, and a dedup index a cache drops is freed in a worker thread, not on the
event loop."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import bulk
from memory.cache import CacheBudget
from memory.model import Kind, Memory, Scope
from memory.recall import selection
from memory.write.dedup_index import IndexCache, build_index, release

TEXTS = (
    "Plays the cello on Sundays", "Adopted a grey rabbit called Pistache",
    "Works at the bakery on 12 Rue Haute since 2019", "Plays the cello on Sunday mornings",
    "Never eats coriander", "Emma started judo",
)  # fmt: skip


def _memories(n: int, cls: type[Memory] = Memory) -> list[Memory]:
    kinds = (Kind.FACT, Kind.PREFERENCE, Kind.RULE, Kind.EPISODE)
    return [
        cls(id=i + 1, user_id=1, text=f"{TEXTS[i % len(TEXTS)]} {i // len(TEXTS)}",
            kind=kinds[i % 4], scope=Scope.GLOBAL, created_at=float(i), updated_at=float(i))
        for i in range(n)
    ]  # fmt: skip


def _made(n: int) -> list[Memory]:
    """`n` memories made as a build makes them: through `yielding`, which counts them."""
    return list(bulk.yielding(_memories(n)))


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_build_runs_without_collections_and_what_it_built_is_frozen() -> None:
    seen: list[bool] = []

    @bulk.quiet
    def build(n: int) -> list[Memory]:
        seen.append(gc.isenabled())
        return _made(n)

    before = gc.get_freeze_count()
    built = build(bulk.FREEZE_MIN)
    assert seen == [False]
    assert gc.isenabled()
    assert gc.get_freeze_count() - before >= len(built)


class InFlight:
    def __init__(self) -> None:
        self.me = self  # a reference cycle, as a request and its response hold


def test_a_small_build_freezes_nothing_and_garbage_of_others_is_still_collected() -> None:
    """What other turns have in flight during a small person's build, reference cycles that
    become garbage later, is collected: frozen, it stayed for the process's life."""
    _count_from_zero()
    others = [InFlight() for _ in range(50)]
    freed = [weakref.ref(o) for o in others]
    bulk.quiet(_made)(3)
    del others
    gc.collect()
    assert all(ref() is None for ref in freed)


def _count_from_zero() -> None:
    """Freeze now, so that the builds' count starts again from nothing."""
    with bulk.paused():
        bulk.made(bulk.FREEZE_MIN)


def test_what_other_turns_allocate_during_a_small_build_freezes_nothing() -> None:
    """A busy loop allocating while a small person's build runs does not make the build large:
    nothing is frozen, and the cycles those turns drop are collected."""
    _count_from_zero()
    before = gc.get_freeze_count()
    with bulk.paused():  # a read on the event loop, 50 other turns running meanwhile
        others = [InFlight() for _ in range(10 * bulk.FREEZE_MIN)]
        freed = [weakref.ref(o) for o in others[::100]]
        bulk.quiet(_made)(3)
    assert gc.get_freeze_count() == before
    del others
    gc.collect()
    assert all(ref() is None for ref in freed)


def test_many_small_builds_add_up_to_a_freeze() -> None:
    """Caches filled by many people's small builds are frozen once they made FREEZE_MIN items
    together, so full collections stop walking them as they stop walking one large build."""
    _count_from_zero()
    before = gc.get_freeze_count()
    small = bulk.FREEZE_MIN // 10
    kept = [bulk.quiet(_made)(small) for _ in range(9)]
    assert gc.get_freeze_count() == before
    kept.append(bulk.quiet(_made)(small))
    assert gc.get_freeze_count() - before >= 10 * small


def test_rows_a_build_keeps_count_toward_its_size() -> None:
    """Rows read and kept whole (a dedup index's source) are counted with `made`: many of them
    are frozen like the memories a build makes."""
    _count_from_zero()
    before = gc.get_freeze_count()
    with bulk.paused():
        rows = [(n, f"text {n}") for n in range(bulk.FREEZE_MIN)]
        bulk.made(len(rows))
    assert gc.get_freeze_count() - before >= len(rows)


def test_cycles_a_large_build_froze_are_freed_by_the_thaw_once_garbage() -> None:
    """What other turns had in flight when a large build ended is frozen with the build; once
    it is garbage a full collection does not see it, the thaw frees it and freezes again what
    still lives."""
    thaw = bulk.Thaw(growth=bulk.FREEZE_MIN)
    others = [InFlight() for _ in range(50)]
    freed = [weakref.ref(o) for o in others]
    built = bulk.quiet(_made)(bulk.FREEZE_MIN)
    del others
    gc.collect()
    assert all(ref() is not None for ref in freed)  # what issue 38 measured growing
    assert thaw()
    assert all(ref() is None for ref in freed)
    assert gc.get_freeze_count() >= len(built)


def test_the_thaw_collects_only_past_its_bound_and_never_during_a_build() -> None:
    """A full collection walks everything while the event loop waits: none while the frozen
    objects grew less than the bound, none while a build runs, one when both allow it, and
    none again until they grow once more."""
    patient, thaw = bulk.Thaw(growth=10**9), bulk.Thaw(growth=bulk.FREEZE_MIN)
    others = [InFlight() for _ in range(50)]
    freed = [weakref.ref(o) for o in others]
    built = bulk.quiet(_made)(bulk.FREEZE_MIN)
    del others
    assert not patient()
    with bulk.paused():
        assert not thaw()
    assert all(ref() is not None for ref in freed)
    assert thaw() and all(ref() is None for ref in freed)
    assert not thaw() and thaw.thawed == 1
    del built


def test_while_turns_are_in_flight_the_thaw_waits_until_overdue() -> None:
    """Its collection stalls everyone waiting on the event loop: while turns are in flight it
    runs only once the frozen objects grew THAW_OVERDUE times the bound."""
    thaw = bulk.Thaw()
    others = [InFlight() for _ in range(50)]
    freed = [weakref.ref(o) for o in others]
    built = bulk.quiet(_made)(bulk.FREEZE_MIN)
    del others
    grown = gc.get_freeze_count() - thaw.floor
    thaw.growth = grown // 2  # past the bound, not past the overdue one
    assert not thaw(busy=True) and all(ref() is not None for ref in freed)
    thaw.growth = grown // bulk.THAW_OVERDUE
    assert thaw(busy=True) and all(ref() is None for ref in freed)
    del built


def test_the_collector_stays_paused_until_the_last_concurrent_build_ends() -> None:
    inside, leave = threading.Event(), threading.Event()

    def long_build() -> None:
        with bulk.paused():
            inside.set()
            leave.wait(5)

    other = threading.Thread(target=long_build)
    other.start()
    assert inside.wait(5)
    with bulk.paused():
        pass
    assert not gc.isenabled()  # the other build still runs
    leave.set()
    other.join(5)
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    with bulk.paused():
        pass
    assert not gc.isenabled()


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 60), st.data())
def test_the_caches_built_in_bulk_hold_no_reference_cycle(n: int, data: st.DataObject) -> None:
    # Frozen objects are freed by reference counting alone: a cycle among them would leak.
    memories = _memories(n)
    gone = data.draw(st.sets(st.sampled_from([m.id for m in memories])))
    gc.collect()
    gc.disable()
    try:
        index = build_index.__wrapped__(memories)  # type: ignore[attr-defined]
        index.add(_memories(n + 1)[-1])
        for memory_id in gone:
            index.remove(memory_id)
        pool = selection.RankedPool.build(memories)
        pool = pool.patched(gone, [m for m in _memories(n) if m.id in gone])
        del index, pool, memories
        assert gc.collect() == 0
    finally:
        gc.enable()


FREED_IN: list[int] = []


class Noted(Memory):
    """A memory that notes the thread it is freed in."""

    def __del__(self) -> None:
        FREED_IN.append(threading.get_ident())


async def test_a_dedup_index_the_cache_drops_is_freed_off_the_event_loop() -> None:
    FREED_IN.clear()
    cache = IndexCache(CacheBudget(1))  # room for one index: the newest
    cache.put((1, 1, False), 1, build_index(_memories(50, Noted)))
    # The same index again drops nothing; a newer one drops the old one, for `release`.
    kept = cache.get((1, 1, False), 1)
    assert kept is not None and cache.put((1, 1, False), 2, kept) == []
    del kept
    dropped = cache.put((1, 1, False), 3, build_index(_memories(5)))
    assert len(dropped) == 1 and not FREED_IN
    await release(dropped)
    assert len(FREED_IN) == 50
    assert threading.get_ident() not in FREED_IN
    # A cache over its size drops the least recent.
    evicted = cache.put((2, 1, False), 1, build_index(_memories(5)))
    assert len(evicted) == 1 and cache.get((1, 1, False), 3) is None


async def test_a_dropped_index_still_in_use_elsewhere_is_left_whole() -> None:
    cache = IndexCache()
    in_use = build_index(_memories(20))
    cache.put((1, 1, False), 1, in_use)
    await release(cache.put((1, 1, False), 2, build_index(_memories(3))))
    assert in_use.decide(_memories(20)[7].text).target == _memories(20)[7]
