"""bench.scale's characters run (issue 33): scale-characters.md (the table), .json (every
figure) and .png (the plot), each count of characters side by side."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import numpy as np

from bench.scale.constants import CONCURRENCY, RESULTS


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    RESULTS.mkdir(exist_ok=True)
    total = args.people * args.per_person
    lines = [
        f"# Several characters: {total:,} memories over {args.people:,} people "
        f"({args.per_person} each, {args.dim}-d vectors), SQLite", "",
        f"One invocation of bench.scale --characters {args.characters} (in the order of the "
        f"table); {os.cpu_count()} cores, under `nice -n 10` on a shared machine. With N "
        "characters each person's memories are split across them (memory i is character "
        "i mod N's, under the ids it keeps the person and the story under): the same total. "
        "Each person holds two turns (cold, then warm) with each character, the order turned "
        f"by the person, {CONCURRENCY} people at once per process, an instant fake chat.", "",
        "| characters | processes | cache_mb | turns | cold p50/p95 ms | warm p50/p95 ms | "
        "turns/s | RSS MB (start → end, peak) | caches held MB (entries, evictions) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        lines.append(
            f"| {r['characters']} | {r['processes']} | {r['cache_mb']} | {r['turns']:,} | "
            f"{r['cold_p50_ms']:.0f} / {r['cold_p95_ms']:.0f} | {r['warm_p50_ms']:.0f} / "
            f"{r['warm_p95_ms']:.0f} | {r['throughput']:.1f} | {r['rss_before_mb']:.0f} → "
            f"{r['rss_mb']:.0f}, {r['peak_rss_mb']:.0f} | {r['cache_mb_held']:.0f} "
            f"({r['cache_entries']:,}, {r['evictions']:,}) |"
        )
    lines += ["", "RSS is the worker process's (the first, with several). A cold turn is a "
              "person's first with a character: with N characters there are N of them per "
              "person, each on a smaller share of the person's memories.", ""]  # fmt: skip
    (RESULTS / "scale-characters.md").write_text("\n".join(lines), encoding="utf-8")
    (RESULTS / "scale-characters.json").write_text(
        json.dumps({"rows": rows, "people": args.people, "per_person": args.per_person,
                    "dim": args.dim}, indent=1) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    _plot(rows)
    print("\n".join(lines))


def _plot(rows: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['characters']} character{'s' if r['characters'] > 1 else ''}\n"
              f"{r['processes']} proc, {r['cache_mb']} MB" for r in rows]  # fmt: skip
    x = np.arange(len(rows))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    latencies = (("cold_p50_ms", "cold p50"), ("cold_p95_ms", "cold p95"),
                 ("warm_p50_ms", "warm p50"), ("warm_p95_ms", "warm p95"))  # fmt: skip
    for k, (key, name) in enumerate(latencies):
        axes[0].bar(x + (k - 1.5) * 0.2, [r[key] for r in rows], 0.2, label=name)
    axes[0].set_title("turn latency (ms)")
    axes[0].legend()
    axes[1].bar(x, [r["throughput"] for r in rows], 0.6)
    axes[1].set_title("throughput (turns/s)")
    for offset, key, name in ((-0.2, "rss_mb", "RSS after"), (0.2, "peak_rss_mb", "peak")):
        axes[2].bar(x + offset, [r[key] for r in rows], 0.4, label=name)
    axes[2].set_title("resident memory of the worker (MB)")
    axes[2].legend(loc="lower left")
    for ax in axes:
        ax.set_xticks(x, labels, fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "scale-characters.png", dpi=110)
