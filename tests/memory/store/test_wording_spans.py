"""A memory's history covers its whole life: every wording it had, each with the span it held,
edits and restores in any order, the spans end to end from its creation to its current
wording's start (a restore and an edit after it lost the restored wording's first span); and
the prompt dates a memory by its current wording, not its creation."""

from __future__ import annotations

import asyncio
import itertools
import random
from datetime import UTC

from memory import manage
from memory.context.prompt import memory_blocks
from memory.model import Reason, Selected
from memory.store import Store
from memory.store.tables import memories, memory_versions

STORY = 10
DAY = 86_400.0


async def _text(store: Store, user: int, memory_id: int) -> str:
    memory = await memories.get(store, user, memory_id)
    assert memory is not None
    return memory.text


async def _life(store: Store, user: int, steps: list[str]) -> None:
    """Create a memory, change it day after day as `steps` say, then check its history."""
    outcome = await manage.remember(
        store, user_id=user, story_id=STORY, origin="dm", text=f"Habite à {user}-0", now=DAY
    )
    assert outcome.memory_id is not None
    mid, at = outcome.memory_id, DAY
    held = [f"Habite à {user}-0"]  # every wording, in the order each became current
    for n, step in enumerate(steps, start=1):
        at += DAY
        if step == "edit":
            current = await memories.get(store, user, mid)
            assert current is not None
            await store.transact(
                lambda tx, c=current, n=n, at=at: memory_versions.supersede(
                    tx, c, text=f"Habite à {user}-{n}", scope=c.scope, confidence=c.confidence,
                    ended_by="edit", exchange_id=f"manual:{user}:{n}", now=at,
                )
            )  # fmt: skip
        elif (
            await store.transact(lambda tx, at=at: memory_versions.restore(tx, user, mid, now=at))
            is None
        ):
            continue  # nothing to restore yet: nothing changed
        held.append(await _text(store, user, mid))
    current = await memories.get(store, user, mid)
    assert current is not None
    kept = await memory_versions.history(store, user, mid)
    since = await memory_versions.current_since(store, current)
    assert [v.text for v in kept] + [current.text] == held
    if kept:  # end to end, from the creation to the current wording's start
        assert kept[0].valid_from == DAY
        assert all(a.valid_until == b.valid_from for a, b in itertools.pairwise(kept))
        assert kept[-1].valid_until == since
    # The prompt says when the current wording was said.
    [block] = memory_blocks([Selected(current, Reason.GLOBAL)], {}, now=since + DAY, zone=UTC)
    assert "; yesterday" in block.text, block.text


async def test_a_restore_then_an_edit_keeps_every_span(store: Store) -> None:
    await _life(store, 1, ["edit", "restore", "edit"])


async def test_people_changing_memories_at_once_each_keep_spans_end_to_end(
    store: Store,
) -> None:
    rng = random.Random(4)
    lives = {
        user: [rng.choice(["edit", "restore"]) for _ in range(rng.randint(1, 9))]
        for user in range(2, 14)
    }
    await asyncio.gather(*(_life(store, user, steps) for user, steps in lives.items()))
