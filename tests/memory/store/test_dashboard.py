"""The operator's page queries against brute force: latency percentiles (from 5% buckets) and
turns per day, a person's memories filtered, ordered and paged."""

from __future__ import annotations

import datetime
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory import manage
from memory.model import Kind, Memory
from memory.store import Store, open_store
from memory.store.queries import dashboard
from memory.store.queries.dashboard import MemoryFilter
from memory.store.tables import memories, timings

DAY = 86_400.0
NOW = 1_790_000_000.0


def _brute_rank(values: list[float], share: float) -> float:
    return min(v for v in values if sum(x <= v for x in values) >= share * len(values) - 1e-9)


def _bucketed(exact: float) -> float:
    """What the page reports for an exact percentile: the top of its 5% bucket."""
    return timings.bucket_top(timings.bucket(exact))


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=200),
       st.sampled_from([0.5, 0.95]))  # fmt: skip
def test_a_percentile_from_buckets_is_the_bucket_of_the_exact_one(
    values: list[float], share: float
) -> None:
    counts = Counter(timings.bucket(v) for v in values)
    exact = _brute_rank(values, share)
    reported = dashboard.percentile(counts, share)
    assert reported == _bucketed(exact)
    assert exact <= reported * (1 + 1e-9) and reported <= max(exact, 1.0) * 1.05**2


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_turns_per_day_and_latencies_match_brute_force(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    rows = [
        (NOW - rng.random() * 20 * DAY, rng.lognormvariate(6, 1), rng.choice(["", "", "embedding",
                                                                            "vectors"]))
        for _ in range(300)
    ]  # fmt: skip
    for at, latency, why in rows:
        await timings.record(store, turn_id=0, latency_ms=latency, degraded=why, plan=None, now=at)
    since = (NOW // DAY - 13) * DAY  # the start of a UTC day, as the overview asks
    days, latencies = await dashboard.turn_timings(store, since)
    kept = [r for r in rows if r[0] >= since]

    def day(at: float) -> str:
        return datetime.datetime.fromtimestamp(at, datetime.UTC).date().isoformat()

    expected_days = sorted({day(at) for at, _, _ in kept})
    assert [d.day for d in days] == expected_days
    for d in days:
        mine = [r for r in kept if day(r[0]) == d.day]
        assert d.turns == len(mine)
        assert d.degraded == {w: n for w in ("embedding", "vectors")
                              if (n := sum(r[2] == w for r in mine))}  # fmt: skip
    by_day = {x.day: x for x in latencies}
    for name, mine in [("", kept)] + [(d, [r for r in kept if day(r[0]) == d])
                                      for d in expected_days]:  # fmt: skip
        values = [r[1] for r in mine]
        assert by_day[name].p50 == _bucketed(_brute_rank(values, 0.5))
        assert by_day[name].p95 == _bucketed(_brute_rank(values, 0.95))


def _key(order: str, m: Memory) -> object:
    ratio = min(1.0, m.served_count / m.candidate_count) if m.candidate_count > 0 else -1.0
    return {
        "id": m.id, "created": m.created_at, "updated": m.updated_at, "kind": m.kind.value,
        "served": m.served_count, "candidates": m.candidate_count, "ratio": ratio,
    }[order]  # fmt: skip


async def test_a_persons_memories_are_ordered_filtered_and_paged_like_brute_force(
    store: Store,
) -> None:
    rng = random.Random(7)
    kinds = [Kind.FACT, Kind.PREFERENCE, Kind.PROMISE, Kind.EPISODE]
    for i in range(40):
        await manage.remember(store, user_id=5, story_id=1, origin="9", kind=rng.choice(kinds),
                              text=f"Souvenir {i} {'jazz' if i % 3 else 'piano'}",
                              now=NOW + rng.choice([0, 1, 2]) * 10)  # fmt: skip
    await manage.remember(store, user_id=6, story_id=1, origin="9", text="Pas à moi jazz")
    await store.transact(lambda tx: tx.execute(
        "UPDATE turn_buckets SET turns = 50 WHERE user_id = 5"))  # fmt: skip
    await store.transact(lambda tx: tx.executemany(
        "UPDATE memory_counters SET served = ?, candidate_base = ? WHERE memory_id = ?",
        [(rng.choice([0, 0, 3, 10]), rng.choice([0, 20, 50]), i) for i in range(1, 41)],
    ))  # fmt: skip
    everything = await memories.list_for_user(store, 5)
    for order in dashboard.MEMORY_ORDERS:
        for descending in (True, False):
            for never, text in ((False, ""), (True, ""), (False, "JAZZ")):
                chosen = [m for m in everything
                          if (not never or m.served_count == 0)
                          and text.lower() in m.text.lower()]  # fmt: skip
                chosen.sort(key=lambda m: (_key(order, m), m.id), reverse=descending)
                pages = []
                for offset in range(0, 45, 15):
                    found, total = await dashboard.person_memories(
                        store, 5, MemoryFilter(never_served=never, text=text, order=order,
                                               descending=descending, limit=15, offset=offset),
                    )  # fmt: skip
                    assert total == len(chosen)
                    pages += [m.id for m in found]
                assert pages == [m.id for m in chosen], (order, descending, never, text)
    assert len(everything) == 40


async def test_reflections_applied_before_schema_17_are_counted_per_day(
    database: Path | str,
) -> None:
    path = database
    rng = random.Random(3)
    outcomes = [("created", None), ("merged", None), ("absorbed", None),
                ("rejected", "low_confidence"), ("rejected", "about_character")]  # fmt: skip
    reports = []
    async with await open_store(path, migrate_to=14) as old:
        for i in range(60):
            at = NOW - rng.randint(0, 5) * DAY
            chosen = rng.choices(outcomes, k=rng.randint(0, 4))
            reports.append((at, chosen))
            report = json.dumps({"outcomes": [{"action": a, "reason": r, "memory_id": None}
                                              for a, r in chosen], "dropped": []})  # fmt: skip
            await old.transact(lambda tx, i=i, at=at, report=report: tx.execute(
                "INSERT INTO applied_exchanges (exchange_id, applied_at, report) VALUES (?, ?, ?)",
                (f"x{i}", at, report)))  # fmt: skip
    async with await open_store(path) as store:
        found = await dashboard.reflection_days(store, NOW - 10 * DAY)
    expected: dict[str, Counter[str]] = {}
    for at, chosen in reports:
        day = datetime.datetime.fromtimestamp(at, datetime.UTC).date().isoformat()
        expected.setdefault(day, Counter()).update(a for a, _ in chosen)
    assert {d.day: dict(d.actions) for d in found} == {
        day: dict(c) for day, c in expected.items() if c
    }
    rejected = Counter(r for _, chosen in reports for a, r in chosen if a == "rejected")
    assert sum((Counter(d.rejected) for d in found), Counter()) == rejected


async def test_replacements_are_counted_per_day_among_the_merged(store: Store) -> None:
    outcomes = [("merged", "superseded"), ("merged", ""), ("created", ""), ("merged", "superseded")]
    await store.transact(lambda tx: timings.count_reflection(tx, outcomes, now=NOW))
    [day] = await dashboard.reflection_days(store, NOW - DAY)
    assert (day.actions["merged"], day.actions["replaced"], day.actions["created"]) == (3, 2, 1)
