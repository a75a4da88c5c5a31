"""The admission's line for work that follows a person's turns (an edit of their message): it
waits for the turns already in the line, is never refused, takes no turn's place, and is
counted while it waits."""

from __future__ import annotations

import asyncio

import pytest

from memory.errors import Overloaded
from memory.turn.admission import Admission


async def test_work_that_follows_turns_waits_for_them_and_is_never_refused() -> None:
    admission = Admission(queue=1)
    order: list[str] = []
    release = asyncio.Event()

    async def turn(name: str) -> None:
        async with admission.turn(1, 10):
            order.append(name)
            await release.wait()

    first = asyncio.ensure_future(turn("turn 1"))
    second = asyncio.ensure_future(turn("turn 2"))
    await asyncio.sleep(0)
    # The line is full (one in flight, one waiting): a third turn is refused...
    with pytest.raises(Overloaded):
        async with admission.turn(1, 10):
            pass

    async def follow(n: int) -> None:
        async with admission.settled(1, 10):
            order.append(f"edit {n}")

    # ... but 50 edits at once all wait, behind the turns already there, in order.
    edits = [asyncio.ensure_future(follow(n)) for n in range(50)]
    await asyncio.sleep(0)
    assert admission.status().following == 50
    assert admission.status().waiting == 1  # the waiting turn: the edits hold no place
    release.set()
    await asyncio.gather(first, second, *edits)
    assert order == ["turn 1", "turn 2", *(f"edit {n}" for n in range(50))]
    status = admission.status()
    assert (status.following, status.waiting, status.refused) == (0, 0, 1)


async def test_following_a_quiet_line_takes_it_at_once_and_leaves_nothing_behind() -> None:
    admission = Admission()
    async with admission.settled(2, 20):
        assert admission.status().following == 1
    assert admission.status().following == 0
    async with admission.turn(2, 20):  # the line works as before afterwards
        pass
