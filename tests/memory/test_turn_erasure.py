"""A turn under way when its message, or its author, is erased records nothing of it: no turn
row with the person's id, no keyword hit holding the message's words, while everyone else's
turns, at the same time, are recorded as usual. On the `store` fixture's backend."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest

from memory import Engine, Incoming, manage
from memory.backends.chat import ChatResult
from memory.manage import forgetting
from memory.store import Store

ALICE, STORY, GUILD = 1, 10, "111"
CROWD = range(2, 8)
HOLD = "qqhold"


class Embedder:
    """Bag-of-letters vectors after a random latency; the message carrying HOLD waits."""

    model = "letters"

    def __init__(self) -> None:
        self.rng = random.Random(4)
        self.held = asyncio.Event()
        self.open = asyncio.Event()

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        if any(HOLD in t for t in texts):
            self.held.set()
            await self.open.wait()
        await asyncio.sleep(self.rng.uniform(0, 0.02))
        return [[0.01 + t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts]


class Chat:
    model = "fake-chat"

    async def chat(self, messages: Any, **_: Any) -> ChatResult:
        await asyncio.sleep(0.005)
        return ChatResult("Noted.")


def _message(user: int, text: str) -> Incoming:
    return Incoming(f"t:{user}:{text}", user, f"p{user}", STORY, GUILD, text)


async def _turn_rows(store: Store, user: int) -> int:
    row = await store.fetchone("SELECT count(*) FROM turns WHERE user_id = ?", (user,))
    assert row is not None
    return int(row[0])


async def _matched(store: Store) -> list[str]:
    rows = await store.fetchall("SELECT matched FROM turn_selections WHERE matched <> ''")
    return [str(r[0]) for r in rows]


@pytest.mark.parametrize("erased", ["person", "message"])
async def test_a_turn_under_way_records_nothing_once_its_message_or_author_is_erased(
    store: Store, erased: str
) -> None:
    for person in (ALICE, *CROWD):
        await manage.remember(store, user_id=person, story_id=STORY, origin=GUILD,
                              text=f"Plays the oboe in Lyon, says {person}", now=1.0)  # fmt: skip
        await manage.remember(store, user_id=person, story_id=STORY, origin=GUILD,
                              text=f"Keeps bees on a roof, says {person}", now=1.0)  # fmt: skip
    embedder = Embedder()
    engine = Engine(store, embedder=embedder, chat=Chat())
    # Her message names her oboe: a keyword hit the turn would record with the word.
    alices = _message(ALICE, f"My oboe teacher moved away {HOLD}")
    turn = asyncio.ensure_future(engine.turn(alices))
    await embedder.held.wait()  # her message is stored; the turn is embedding it

    async def erase() -> None:
        if erased == "person":
            await forgetting.forget_person(store, ALICE, engine=engine)
        else:
            stored = await forgetting.resolve(store, alices.source_id)
            await forgetting.forget_message(store, stored, actor_id=ALICE, engine=engine)
        embedder.open.set()

    async def crowd(person: int) -> None:
        for n in range(2):
            await engine.turn(_message(person, f"How is my oboe doing, round {n}?"))

    await asyncio.gather(erase(), *(crowd(p) for p in CROWD), turn)
    assert await _turn_rows(store, ALICE) == 0
    for person in CROWD:
        assert await _turn_rows(store, person) == 2, person
    matched = await _matched(store)
    assert len(matched) == 2 * len(CROWD)  # the others' hits are recorded, with their word
    assert all(m == "oboe" for m in matched)
