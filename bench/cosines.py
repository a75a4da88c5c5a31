"""A turn's two queries against one person's matrix: two products, one product of a two-column
matrix, and memory.vectors.cosines' single pass in blocks, side by side in one run.

Each way is timed on the same matrix, interleaved, the median of ROUNDS; the sizes are the
common embedding widths (384: MiniLM, e5-small; 768: nomic-embed-text) at 1k / 10k / 100k
memories. Writes bench/results/cosines.md and cosines.png.

Usage: python -m bench.cosines
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory.vectors.cosines import similarities

RESULTS = Path(__file__).parent / "results"
ROUNDS = 30
SIZES = ((1_000, 384), (10_000, 384), (100_000, 384), (1_000, 768), (10_000, 768), (100_000, 768))
WAYS = ("two products", "one product, 2 columns", "one pass in blocks")

Floats = npt.NDArray[np.float32]


def _ways(rows: Floats, units: list[Floats]) -> list[Callable[[], object]]:
    both = np.stack(units, axis=1)
    return [
        lambda: [rows @ u for u in units],
        lambda: rows @ both,
        lambda: similarities(rows, units),
    ]


def measure() -> list[tuple[int, int, list[float]]]:
    rng = np.random.default_rng(3)
    out = []
    for n, dim in SIZES:
        rows = rng.standard_normal((n, dim), dtype=np.float32)
        units = [rng.standard_normal(dim, dtype=np.float32) for _ in range(2)]
        ways = _ways(rows, units)
        times: list[list[float]] = [[] for _ in ways]
        for _ in range(ROUNDS):
            for k, way in enumerate(ways):
                began = time.perf_counter()
                way()
                times[k].append(time.perf_counter() - began)
        out.append((n, dim, [statistics.median(t) * 1000 for t in times]))
    return out


def main() -> None:
    found = measure()
    lines = [
        "# Two queries against one matrix (`python -m bench.cosines`)",
        "",
        f"Median of {ROUNDS} interleaved rounds, ms; numpy {np.__version__}.",
        "",
        "| memories | dim | " + " | ".join(WAYS) + " | blocks vs two products |",
        "|---|---|" + "---|" * (len(WAYS) + 1),
    ]
    for n, dim, ms in found:
        cells = " | ".join(f"{m:.2f}" for m in ms)
        lines.append(f"| {n:,} | {dim} | {cells} | {ms[2] / ms[0]:.2f} |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cosines.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    _plot(found)


def _plot(found: list[tuple[int, int, list[float]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    labels = [f"{n // 1000}k×{dim}" for n, dim, _ in found]
    width = 0.27
    for k, way in enumerate(WAYS):
        xs = [i + (k - 1) * width for i in range(len(found))]
        ax.bar(xs, [ms[k] for _, _, ms in found], width, label=way)
    ax.set_xticks(range(len(found)), labels)
    ax.set_ylabel("ms per turn (median)")
    ax.set_yscale("log")
    ax.set_title("Scoring the message and the conversation against one matrix")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "cosines.png", dpi=120)


if __name__ == "__main__":
    main()
