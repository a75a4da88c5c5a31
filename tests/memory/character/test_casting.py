"""Who plays where is kept in the database: a choice made in one process reaches another at its
next reading (the `casting` job), and a reading under way never undoes a choice made meanwhile.
On the `store` fixture's backend."""

from __future__ import annotations

import asyncio
import random

import pytest

from memory import Character, Characters
from memory.manage import casting
from memory.store import Store
from memory.store.tables import characters as cast_store


def _cast() -> Characters:
    return Characters([Character("Nyx", "Tu es Nyx.", key="nyx"),
                       Character("Brann", "Tu es Brann.", key="brann")])  # fmt: skip


async def test_a_choice_made_in_one_process_reaches_the_other_at_its_next_reading(
    store: Store,
) -> None:
    here, there = _cast(), _cast()
    await casting.load(store, here)
    await casting.load(store, there)
    await casting.set_channel(store, here, 10, "brann", by=1)
    await casting.set_person(store, here, 7, "brann")
    assert there.for_channel(10).key == "nyx" and there.for_person(7).key == "nyx"
    await casting.reload(store, there)
    assert there.for_channel(10).key == "brann" and there.for_person(7).key == "brann"
    await casting.set_channel(store, there, 10, None, by=1)
    await casting.reload(store, here)
    assert here.for_channel(10).key == "nyx"


async def test_readings_at_the_same_time_as_choices_never_undo_one(store: Store) -> None:
    rng = random.Random(6)
    cast = _cast()
    await casting.load(store, cast)
    chosen: dict[int, str] = {}

    async def choose(channel: int) -> None:
        await asyncio.sleep(rng.uniform(0, 0.01))
        key = rng.choice(("nyx", "brann"))
        await casting.set_channel(store, cast, channel, key, by=1)
        chosen[channel] = key

    async def read() -> None:
        await asyncio.sleep(rng.uniform(0, 0.01))
        await casting.reload(store, cast)

    await asyncio.gather(*(choose(c) for c in range(20)), *(read() for _ in range(20)))
    assert {c: cast.for_channel(c).key for c in range(20)} == chosen


async def test_a_reading_under_way_never_undoes_a_choice_made_meanwhile(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    cast = _cast()
    await casting.load(store, cast)
    read, go = asyncio.Event(), asyncio.Event()
    real = cast_store.choices

    async def paused(s: Store) -> list[tuple[str, int, str]]:
        found = await real(s)
        read.set()
        await go.wait()
        return found

    monkeypatch.setattr(cast_store, "choices", paused)
    reading = asyncio.ensure_future(casting.reload(store, cast))
    await read.wait()  # it has read: no choice for channel 10 yet
    await casting.set_channel(store, cast, 10, "brann", by=1)
    go.set()
    await reading
    assert cast.for_channel(10).key == "brann"
