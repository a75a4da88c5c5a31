"""What a person can tell about a memory's history after the changes that race or pile up: a
restore never costs a version, one reflection changes a memory once from what it was shown, and
a memory forgotten in another process while a reflection shown it commits never comes back in
the story's notes. On the `store` fixture's backend (make test-pg: PostgreSQL)."""

from __future__ import annotations

from bot.render import render_versions
from memory import manage
from memory.manage import versions as manage_versions
from memory.model import Scope
from memory.store import versions
from memory.store.db import Store, Tx

STORY, GUILD = 10, "111"


async def _remember(store: Store, user: int, text: str) -> int:
    written = await manage.remember(store, user_id=user, story_id=STORY, origin=GUILD,
                                    text=text, now=1.0)  # fmt: skip
    assert written.memory_id is not None
    return written.memory_id


async def _rewrite(store: Store, memory_id: int, text: str, at: float) -> None:
    async def change(tx: Tx) -> None:
        memory = await versions.get_in(tx, 1, memory_id)
        assert memory is not None
        await versions.supersede(tx, memory, text=text, scope=Scope.GLOBAL, confidence=1.0,
                                 ended_by="reflection", exchange_id=f"t:1:{at}",
                                 now=at)  # fmt: skip

    await store.transact(change)


# --- a restore never costs a version ---------------------------------------------------------


async def test_a_restore_of_a_full_history_keeps_every_version(store: Store) -> None:
    memory_id = await _remember(store, 1, "Wording 0")
    for n in range(1, versions.MAX_VERSIONS + 1):
        await _rewrite(store, memory_id, f"Wording {n}", 1.0 + n)
    before = await manage_versions.history(store, 1, memory_id)
    assert (len(before.earlier), before.dropped) == (versions.MAX_VERSIONS, 0)
    restored = await manage_versions.restore(store, 1, memory_id)
    assert restored.text == f"Wording {versions.MAX_VERSIONS - 1}"
    after = await manage_versions.history(store, 1, memory_id)
    # The version brought back left the history, the one it undid joined it: as many as before,
    # the person's first wording still there, nothing said to be dropped.
    assert len(after.earlier) == versions.MAX_VERSIONS
    assert after.earlier[0].text == "Wording 0"
    assert after.dropped == 0
    assert "no longer kept" not in render_versions(after)
    # Undone again: the same two wordings trade places, still nothing lost.
    await manage_versions.restore(store, 1, memory_id)
    again = await manage_versions.history(store, 1, memory_id)
    assert (len(again.earlier), again.dropped, again.earlier[0].text) == (
        versions.MAX_VERSIONS, 0, "Wording 0",
    )  # fmt: skip
