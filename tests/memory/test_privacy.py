"""Where memories are served: a change of a person's choice reaches their cached candidate pools
before their next turn, whatever runs at the same time."""

from __future__ import annotations

import asyncio
import random

import pytest

from memory import Engine, MemoryConfig, manage
from memory.manage import privacy
from memory.recall.selection import RankedPool
from memory.store import Store
from memory.store.tables import memories

PLACES = [(10, "111"), (20, "222"), (30, "dm")]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_pools_follow_privacy_changes_under_concurrent_turns(store: Store, seed: int) -> None:
    """One person remembers, switches between where-learned and everywhere, and talks in three
    places at every await: no turn serves a memory from elsewhere after a switch back returned,
    and each cached pool equals a fresh build for the final choice."""
    rng = random.Random(seed)
    engine = Engine(store, embedder=None, config=MemoryConfig())
    everywhere = False
    switches = 0  # finished and running
    running = 0

    async def talk(story: int, origin: str) -> None:
        await asyncio.sleep(rng.uniform(0, 0.005))
        before = (switches, running, everywhere)
        chosen = await engine.recall(user_id=1, story_id=story, origin=origin, text="thé")
        if before == (switches, 0, False) and running == 0:  # where-learned throughout
            assert {s.memory.origin for s in chosen.selected} <= {origin}

    async def write(n: int) -> None:
        nonlocal everywhere, switches, running
        await asyncio.sleep(rng.uniform(0, 0.005))
        if rng.random() < 0.6:
            story, origin = rng.choice(PLACES)
            await manage.remember(store, user_id=1, story_id=story, origin=origin,
                                  text=f"Aime le thé numéro {n} {rng.random()}")  # fmt: skip
            return
        wanted = rng.random() < 0.5
        choice = privacy.EVERYWHERE if wanted else privacy.WHERE_LEARNED
        switches, running = switches + 1, running + 1
        await privacy.choose(store, 1, choice, default=privacy.WHERE_LEARNED)
        everywhere, running = wanted, running - 1

    work = [talk(*rng.choice(PLACES)) for _ in range(60)] + [write(n) for n in range(30)]
    rng.shuffle(work)
    await asyncio.gather(*work)
    final = await privacy.get(store, 1, default=privacy.WHERE_LEARNED)
    for story, origin in PLACES:
        pool, served_everywhere = await engine.recaller.pool(1, story, origin)
        assert served_everywhere is final.everywhere
        fresh = await memories.visible(store, 1, story, origin, counters=False,
                                       everywhere=final.everywhere)  # fmt: skip
        assert pool == RankedPool.build(fresh)


def test_each_memory_says_where_it_can_be_used() -> None:
    from memory.model import Kind, Memory, Scope

    def memory(scope: Scope, origin: str) -> Memory:
        story = 5 if scope is Scope.STORY else None
        return Memory(1, 1, "t", Kind.FACT, scope, story_id=story, origin=origin)

    where = privacy.served_where
    assert where(memory(Scope.GLOBAL, "111"), everywhere=False) == "only in server 111"
    assert where(memory(Scope.GLOBAL, "111"), everywhere=True) == "in every server and DMs"
    assert where(memory(Scope.GLOBAL, "dm"), everywhere=True) == "only in DMs"
    assert where(memory(Scope.STORY, "111"), everywhere=True) == "only in conversation 5"
