"""Page load of the operator's page at 100k memories, with and without the indexes of migration 16.

A database of 100,000 memories (one person holds 50,000, a thousand others 50 each), 50,000
history messages, 20,000 recorded turns (the last 1,000 with 24 selections each), 140,000
answered turns over 14 days (10,000 a day) and 20,000 applied reflections. Each page is fetched
over loopback HTTP (aiohttp server, httpx client, the token in a header) REPEAT times; reported:
median and p95 in ms, then the same with the two indexes of migration 16 dropped, side by side
in one run.
Target: overview and a person's page under 200 ms.
Run: make bench-web
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from bot.web.pages import View
from bot.web.server import build_app
from memory.store import Store, Tx, open_store
from memory.store.tables import timings
from tests.fakes.loopback import serve as loopback

RESULTS = Path(__file__).parent / "results"
MEMORIES = 100_000
HEAVY = 1  # the person with half of them
HEAVY_SHARE = 50_000
OTHERS = 1_000
MESSAGES = 50_000
TURNS = 20_000
SELECTED_TURNS = 1_000
TIMINGS = 140_000  # 10,000 answered turns a day for 14 days
REFLECTIONS = 20_000
REPEAT = 20
TOKEN = "bench-token-0123456789abcdef"
DAY = 86_400.0
INDEXES = ("messages_by_user", "memories_by_created")
KINDS = ("fact", "preference", "promise", "episode")
PAGES = {
    "overview": "/",
    "person (newest first)": f"/people/{HEAVY}",
    "person (by served ratio)": f"/people/{HEAVY}?sort=ratio&order=asc",
    "person (never served)": f"/people/{HEAVY}?never=1",
    "person (text filter)": f"/people/{HEAVY}?q=souvenir+42",
    "memory health": "/health",
    "people": "/people",
    "turns": "/turns",
}
TARGETS = ("overview", "person (newest first)", "person (by served ratio)")


async def _fill(tx: Tx, rng: random.Random, now: float) -> None:
    owners = [HEAVY] * HEAVY_SHARE + [2 + i % OTHERS for i in range(MEMORIES - HEAVY_SHARE)]
    await tx.executemany(
        "INSERT INTO memories (id, user_id, scope, origin, kind, text, confidence, created_at,"
        " updated_at, content_hash) VALUES (?, ?, 'global', '111', ?, ?, 0.9, ?, ?, ?)",
        [
            (i + 1, owner, KINDS[i % 4], f"Un souvenir {i} de la personne {owner}",
             now - (MEMORIES - i) * 60.0, now - (MEMORIES - i) * 60.0, f"{i:064x}")
            for i, owner in enumerate(owners)
        ],
    )  # fmt: skip
    await tx.executemany(
        "INSERT INTO memory_counters (memory_id, bucket, candidate_base, served, semantic)"
        " VALUES (?, 'all', ?, ?, ?)",
        [
            (i + 1, base, served, rng.randint(0, served))
            for i in range(MEMORIES)
            for base in [rng.randint(0, 90)]
            for served in [rng.choice((0, 0, rng.randint(0, 100 - base)))]
        ],
    )
    await tx.executemany(
        "INSERT INTO turn_buckets (user_id, bucket, turns) VALUES (?, 'all', 100)",
        [(u,) for u in range(1, OTHERS + 2)],
    )
    await tx.executemany(
        "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
        " created_at) VALUES (?, ?, ?, 'user', ?, 'Bonjour', ?)",
        [(f"b{i}", 100 + i % 100, 1 + i % (OTHERS + 1), f"Personne {i % (OTHERS + 1)}",
          now - (MESSAGES - i) * 30.0) for i in range(MESSAGES)],
    )  # fmt: skip
    await tx.executemany(
        "INSERT INTO turns (id, user_id, story_id, origin, degraded, created_at)"
        " VALUES (?, ?, ?, '111', 0, ?)",
        [(i + 1, 1 + i % (OTHERS + 1), 100 + i % 100, now - (TURNS - i) * 30.0)
         for i in range(TURNS)],
    )  # fmt: skip
    await tx.executemany(
        "INSERT INTO turn_selections (turn_id, memory_id, position, reason, score)"
        " VALUES (?, ?, ?, 'semantic', 0.5)",
        [(t, HEAVY_SHARE + (t * 24 + p) % (MEMORIES - HEAVY_SHARE) + 1, p)
         for t in range(TURNS - SELECTED_TURNS + 1, TURNS + 1) for p in range(24)],
    )  # fmt: skip
    answered: Counter[tuple[int, str, int]] = Counter(
        (int((now - rng.random() * 14 * DAY) // DAY), rng.choice(("", "", "", "embedding")),
         timings.bucket(rng.lognormvariate(7, 0.5)))
        for _ in range(TIMINGS)
    )  # fmt: skip
    await tx.executemany(
        "INSERT INTO turn_days (day, degraded, bucket, turns) VALUES (?, ?, ?, ?)",
        [(*key, n) for key, n in answered.items()],
    )
    report = json.dumps({"outcomes": [{"action": "created", "reason": None, "memory_id": 1},
                                      {"action": "rejected", "reason": "low_confidence",
                                       "memory_id": None}], "dropped": []})  # fmt: skip
    await tx.executemany(
        "INSERT INTO applied_exchanges (exchange_id, applied_at, report) VALUES (?, ?, ?)",
        [(f"x{i}", now - rng.random() * 30 * DAY, report) for i in range(REFLECTIONS)],
    )
    # What each applied reflection counts in its day (memory.store.tables.timings.count_reflection).
    await tx.execute(
        "INSERT INTO reflection_days (day, action, reason, candidates)"
        " SELECT CAST(applied_at / 86400 AS INTEGER), 'created', '', count(*)"
        " FROM applied_exchanges GROUP BY 1"
        " UNION ALL SELECT CAST(applied_at / 86400 AS INTEGER), 'rejected', 'low_confidence',"
        " count(*) FROM applied_exchanges GROUP BY 1"
    )


async def _measure(fast: Store, slow: Store) -> tuple[dict[str, list[float]], ...]:
    """Each page from both databases, one request to each in turn (the machine's load falls on
    both alike)."""
    timings: tuple[dict[str, list[float]], ...] = ({}, {})
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        loopback(build_app(View(fast), TOKEN)) as a,
        loopback(build_app(View(slow), TOKEN)) as b,
        httpx.AsyncClient(timeout=60) as client,
    ):
        for name, path in PAGES.items():
            for base, found in ((a, timings[0]), (b, timings[1])):
                await client.get(base.rstrip("/") + path, headers=headers)  # warm the cache
                found[name] = []
            for _ in range(REPEAT):
                for base, found in ((a, timings[0]), (b, timings[1])):
                    start = time.perf_counter()
                    response = await client.get(base.rstrip("/") + path, headers=headers)
                    found[name].append((time.perf_counter() - start) * 1000)
                    assert response.status_code == 200, (path, response.text[:200])
    for found in timings:
        for values in found.values():
            values.sort()
    return timings


def _p95(values: list[float]) -> float:
    return values[min(len(values) - 1, int(0.95 * len(values)))]


async def main() -> int:
    rng = random.Random(19)
    now = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        path, copy = Path(tmp) / "bench.sqlite3", Path(tmp) / "without.sqlite3"
        async with await open_store(path) as store:
            started = time.perf_counter()
            await store.transact(lambda tx: _fill(tx, rng, now))
            print(f"filled in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        with sqlite3.connect(path) as conn:
            conn.execute("VACUUM INTO ?", (str(copy),))
        async with await open_store(path) as fast, await open_store(copy) as slow:
            await slow.transact(_drop_indexes)
            with_indexes, without = await _measure(fast, slow)
    _report(with_indexes, without)
    slow = [n for n in TARGETS if statistics.median(with_indexes[n]) >= 200]
    return 1 if slow else 0


async def _drop_indexes(tx: Tx) -> None:
    for name in INDEXES:
        await tx.execute(f"DROP INDEX {name}")


def _report(with_indexes: dict[str, list[float]], without: dict[str, list[float]]) -> None:
    lines = [
        "# Operator's page load at 100k memories (`make bench-web`)",
        "",
        f"{MEMORIES:,} memories (one person {HEAVY_SHARE:,}), {MESSAGES:,} messages, "
        f"{TURNS:,} turns kept, {TIMINGS:,} answered in 14 days, {REFLECTIONS:,} reflections; "
        f"{REPEAT} loads each over loopback HTTP. Target: overview and a person's page < 200 ms.",
        "",
        "| page | median ms | p95 ms | median without migration 16's indexes | ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in PAGES:
        a, b = statistics.median(with_indexes[name]), statistics.median(without[name])
        lines.append(f"| {name} | {a:.1f} | {_p95(with_indexes[name]):.1f} | {b:.1f} | "
                     f"{b / a:.1f}× |")  # fmt: skip
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "web.md").write_text(text, encoding="utf-8")
    _plot(with_indexes, without)


def _plot(with_indexes: dict[str, list[float]], without: dict[str, list[float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(PAGES)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ys = range(len(names))
    ax.barh([y + 0.2 for y in ys], [statistics.median(with_indexes[n]) for n in names],
            height=0.4, label="with migration 16's indexes")  # fmt: skip
    ax.barh([y - 0.2 for y in ys], [statistics.median(without[n]) for n in names],
            height=0.4, label="without them")  # fmt: skip
    ax.axvline(200, color="grey", linestyle="--", linewidth=1, label="target (200 ms)")
    ax.set_yticks(list(ys), names)
    ax.invert_yaxis()
    ax.set_xlabel("median page load (ms), 100k memories")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(RESULTS / "web.png", dpi=120)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
