"""The O(selected) counters give exactly what naive per-candidate increments would give."""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.model import Kind, Memory, Reason, Scope, Selected
from memory.store import Store, Tx, open_store
from memory.store.tables import memories, turns

# Stories: 10 and 20 are guild channels (origin "111"), 30 is a DM.
STORIES = {10: "111", 20: "111", 30: "dm"}

_create = st.tuples(
    st.just("create"),
    st.sampled_from([1, 2]),
    st.sampled_from(list(Scope)),
    st.sampled_from(list(STORIES)),
)
_turn = st.tuples(
    st.just("turn"),
    st.sampled_from([1, 2]),
    st.sampled_from(list(STORIES)),
    st.booleans(),  # degraded
    st.integers(min_value=0, max_value=2**16),  # which visible memories are selected
)
_widen = st.tuples(st.just("widen"), st.integers(min_value=0, max_value=50))
_delete = st.tuples(st.just("delete"), st.integers(min_value=0, max_value=50))
_ops = st.lists(
    st.one_of(_create, _create, _turn, _turn, _widen, _delete), min_size=10, max_size=40
)


class Naive:
    """Per-candidate increments: what the counters mean, at O(candidates) per turn."""

    def __init__(self) -> None:
        self.candidate: Counter[int] = Counter()
        self.served: Counter[int] = Counter()
        self.semantic: Counter[int] = Counter()

    def turn(self, visible: list[Memory], selected: list[Selected]) -> None:
        for memory in visible:
            self.candidate[memory.id] += 1
        for s in selected:
            self.served[s.memory.id] += 1
            self.semantic[s.memory.id] += s.reason is Reason.SEMANTIC


async def _run(ops: list[tuple[object, ...]], path: Path | str) -> None:
    naive = Naive()
    created: list[int] = []
    async with await open_store(path) as store:
        for op in ops:
            if op[0] == "create":
                _, user, scope, story = op

                async def create(
                    tx: Tx, u: object = user, sc: object = scope, st_: object = story
                ) -> int:
                    m = await memories.insert(
                        tx, user_id=u, text="t", kind=Kind.FACT, scope=sc, story_id=st_,
                        origin=STORIES[st_], confidence=1.0, now=0.0,
                    )  # type: ignore[arg-type]  # fmt: skip
                    return m.id

                created.append(await store.transact(create))
            elif op[0] == "turn":
                _, user, story, degraded, mask = op
                # A memory counts as a candidate wherever it may be served once its owner
                # chose "everywhere" (the bucket does not follow the privacy choice).
                visible = await memories.visible(
                    store, user, story, STORIES[story], everywhere=True
                )
                selected = [
                    Selected(m, Reason.SEMANTIC if i % 2 else Reason.FALLBACK)
                    for i, m in enumerate(visible)
                    if mask >> (i % 16) & 1
                ]
                await turns.record(
                    store, turns.TurnRecord(user, story, STORIES[story]), selected,
                    degraded=degraded, now=1.0,
                )  # type: ignore[arg-type]  # fmt: skip
                if not degraded:
                    naive.turn(visible, selected)
            elif op[0] == "widen" and created:
                memory_id = created[op[1] % len(created)]

                async def widen(tx: Tx, mid: int = memory_id) -> None:
                    rows = await tx.fetchall(f"{memories.SELECT_MEMORY} WHERE m.id = ?", (mid,))
                    for row in rows:
                        m = memories.from_row(row)
                        await memories.rewrite(
                            tx, m, text="t2", scope=Scope.GLOBAL, confidence=1.0, now=2.0
                        )

                await store.transact(widen)
            elif op[0] == "delete" and created:
                memory_id = created[op[1] % len(created)]
                for user in (1, 2):
                    await store.transact(
                        lambda tx, u=user, mid=memory_id: memories.delete(tx, u, [mid])
                    )
        for user in (1, 2):
            for m in await memories.list_for_user(store, user):
                assert (m.candidate_count, m.served_count, m.semantic_count) == (
                    naive.candidate[m.id],
                    naive.served[m.id],
                    naive.semantic[m.id],
                ), m.id


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ops)
def test_bucketed_counters_equal_naive_increments(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_run(ops, Path(tmp) / "c.sqlite3"))


def test_bucketed_counters_equal_naive_increments_on_postgresql(postgres: Any) -> None:
    """The same oracle on PostgreSQL (make test-pg), each example on a fresh database."""

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_ops)
    def check(ops: list[tuple[object, ...]]) -> None:
        async def run() -> None:
            url = await postgres.create()
            try:
                await _run(ops, url)
            finally:
                await postgres.drop(url)

        asyncio.run(run())

    check()


@pytest.mark.sqlite_only("counts written rows with SQLite's total_changes()")
async def test_a_turn_writes_rows_for_what_it_selected_not_for_every_candidate(
    store: Store,
) -> None:
    async def create(tx: Tx) -> None:
        for _ in range(300):
            await memories.insert(
                tx, user_id=1, text="t", kind=Kind.FACT, scope=Scope.GLOBAL, story_id=10,
                origin="111", confidence=1.0, now=0.0,
            )  # fmt: skip

    await store.transact(create)
    visible = await memories.visible(store, 1, 10, "111")
    before = await store.fetchone("SELECT total_changes()")
    # total_changes() is per connection: read it on the writer, around the turn's transaction.
    changes: list[int] = []

    async def probe(tx: Tx) -> None:
        row = await tx.fetchone("SELECT total_changes()")
        changes.append(int(row[0]) if row else 0)

    await store.transact(probe)
    await turns.record(
        store,
        turns.TurnRecord(1, 10, "111"),
        [Selected(m, Reason.FALLBACK) for m in visible[:24]],
        degraded=False,
        now=1.0,
    )
    await store.transact(probe)
    assert before is not None
    # 1 turn + 24 selections + 2 buckets + 24 counters.
    assert changes[1] - changes[0] == 1 + 24 + 2 + 24
