"""Read-path latency per turn: score + select + counter update, for one user with N memories.

Ours: the engine's path — the user's float32 matrix and rank-ordered pool cached (built on the
first turn after a change), one matrix-vector product, the relative threshold, `select()` on the
prebuilt pool, and `turns.record` (O(selected) rows). Baseline, in the same run: the spec's naive
pure-Python cosine over lists of floats (scoring only, which is what its 1.5 / 13.4 / 40.4 ms at
100 / 1k / 3k measured). 768-dimension vectors. Medians over repeats; peak traced memory of a
turn; the memory-bandwidth floor (bytes of vectors scanned / measured read bandwidth).
Run: make bench-latency
"""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from memory.read import selection
from memory.read.semantic import VectorCache
from memory.store import memories, turns
from memory.store.db import Store, Tx

SIZES = (100, 1_000, 3_000, 10_000, 100_000)
DIM = 768
REPEATS = 30
BASELINE_UP_TO = 10_000  # the pure-Python baseline at 100k takes seconds per turn
RESULTS = Path(__file__).parent / "results"
USER, STORY, ORIGIN = 1, 1, "1"


async def _fill(store: Store, n: int, rng: np.random.Generator) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    kinds = ("fact", "preference", "promise", "episode")

    async def run(tx: Tx) -> None:
        await tx.executemany(
            "INSERT INTO memories (id, user_id, scope, origin, kind, text, confidence, created_at,"
            " updated_at, content_hash) VALUES (?, ?, 'global', ?, ?, ?, 1, 0, ?, ?)",
            [(i + 1, USER, ORIGIN, kinds[i % 4], f"memory {i}", float(i), "0" * 64)
             for i in range(n)],
        )  # fmt: skip
        await tx.executemany(
            "INSERT INTO memory_counters (memory_id, bucket) VALUES (?, 'all')",
            [(i + 1,) for i in range(n)],
        )
        await tx.executemany(
            "INSERT INTO embeddings (memory_id, model, content_hash, dim, vector)"
            " VALUES (?, 'bench', ?, ?, ?)",
            [(i + 1, "0" * 64, DIM, vectors[i].tobytes()) for i in range(n)],
        )
        tx.touch(USER)

    await store.transact(run)
    return vectors


def _naive_scores(rows: list[list[float]], query: list[float]) -> dict[int, float]:
    q_norm = math.sqrt(sum(x * x for x in query))
    out = {}
    for i, row in enumerate(rows):
        dot = sum(a * b for a, b in zip(row, query, strict=True))
        norm = math.sqrt(sum(a * a for a in row))
        out[i + 1] = dot / (norm * q_norm)
    return out


def _bandwidth() -> float:
    """Measured read bandwidth, bytes per second (best of 5 sums over 256 MiB)."""
    data = np.ones(64 * 1024 * 1024, dtype=np.float32)
    best = math.inf
    for _ in range(5):
        started = time.perf_counter()
        data.sum()
        best = min(best, time.perf_counter() - started)
    return data.nbytes / best


async def measure(n: int, rng: np.random.Generator) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        async with await Store.open(Path(tmp) / "latency.sqlite3") as store:
            vectors = await _fill(store, n, rng)
            cache = VectorCache(store)
            pool = selection.RankedPool.build(await memories.visible(store, USER, STORY, ORIGIN))
            query = rng.standard_normal(DIM).astype(np.float32)
            first_started = time.perf_counter()
            await cache.matrix(USER, "bench")
            first = time.perf_counter() - first_started

            async def turn() -> None:
                scores, cutoff = await cache.scores(
                    USER, "bench", query, floor=0.10, relative_sd=1.5
                )
                chosen = selection.select(pool, scores, threshold=cutoff)
                await turns.record(
                    store, turns.TurnRecord(USER, STORY, ORIGIN), chosen, degraded=False, now=1.0
                )

            for _ in range(3):
                await turn()
            timings = []
            for _ in range(REPEATS):
                started = time.perf_counter()
                await turn()
                timings.append(time.perf_counter() - started)
            tracemalloc.start()
            await turn()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            baseline = math.nan
            if n <= BASELINE_UP_TO:
                rows = [v.tolist() for v in vectors]
                q = query.tolist()
                runs = []
                for _ in range(max(3, REPEATS // 10)):
                    started = time.perf_counter()
                    _naive_scores(rows, q)
                    runs.append(time.perf_counter() - started)
                baseline = statistics.median(runs)
    return {
        "ours": statistics.median(timings),
        "baseline": baseline,
        "peak": float(peak),
        "first": first,
        "bytes": float(n * DIM * 4),
    }


def main() -> None:
    rng = np.random.default_rng(7)
    bandwidth = _bandwidth()
    results = {n: asyncio.run(measure(n, rng)) for n in SIZES}
    lines = [
        "# Read-path latency per turn",
        "",
        f"{DIM}-d vectors, one user; medians of {REPEATS} turns. Ours = score + select + counter "
        "update; baseline = the spec's pure-Python cosine (scoring only), same run. "
        f"Measured read bandwidth: {bandwidth / 1e9:.1f} GB/s.",
        "",
        "| N | ours (ms) | baseline (ms) | speed-up | bandwidth floor (ms) | first turn after a "
        "change (ms) | peak traced memory of a turn (MiB) |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, r in results.items():
        speedup = r["baseline"] / r["ours"] if not math.isnan(r["baseline"]) else math.nan
        base = "—" if math.isnan(r["baseline"]) else f"{1000 * r['baseline']:.1f}"
        ratio = "—" if math.isnan(speedup) else f"{speedup:.0f}×"
        lines.append(
            f"| {n:,} | {1000 * r['ours']:.2f} | {base} | {ratio} | "
            f"{1000 * r['bytes'] / bandwidth:.2f} | {1000 * r['first']:.0f} | "
            f"{r['peak'] / 2**20:.1f} |"
        )
    RESULTS.mkdir(exist_ok=True)
    _plot(results)
    lines += ["", "![latency](latency.png)"]
    (RESULTS / "latency.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def _plot(results: dict[int, dict[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    sizes = list(results)
    ax.plot(sizes, [1000 * results[n]["ours"] for n in sizes], marker="o", label="ours")
    base = [n for n in sizes if not math.isnan(results[n]["baseline"])]
    ax.plot(base, [1000 * results[n]["baseline"] for n in base], marker="s",
            label="pure-Python cosine")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories")
    ax.set_ylabel("ms per turn (log)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "latency.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
