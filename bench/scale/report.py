"""bench.scale's report: scale.md (the tables), scale.json (every figure), scale.png and
scale-newcomers.png (the plots); another stem than `scale` with --name."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import numpy as np

from bench.scale.constants import CONCURRENCY, IDLE_PASSES, RESULTS


def report(rows: list[dict[str, Any]], idle: dict[str, dict[str, float]],
           args: argparse.Namespace, notes: list[str]) -> None:  # fmt: skip
    """NAME.md (the tables), NAME.json (every figure), NAME.png and NAME-newcomers.png."""
    name = args.name
    RESULTS.mkdir(exist_ok=True)
    everything, attacked = rows, [r for r in rows if r.get("newcomers")]
    flooded = [r for r in rows if r.get("flood")]
    rows = [r for r in rows if not r.get("newcomers") and not r.get("flood")]
    total = args.people * args.per_person
    lines = [
        f"# Scale: {total:,} memories over {args.people:,} people ({args.per_person} each, "
        f"{args.dim}-d vectors)", "",
        f"One invocation of bench.scale (configurations in the order of the table); "
        f"{os.cpu_count()} cores. Each person: two turns (cold, then warm), {CONCURRENCY} "
        "people at once per process, an instant fake chat.", "",
        "| target | processes | cache_mb | turns | p50 ms | p95 ms | cold p50/p95 ms | "
        "warm p50/p95 ms | turns/s | longest stall ms | RSS MB (start → end, peak) | caches "
        "held MB (entries, evictions) | database MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        lines.append(
            f"| {r['target']} | {r['processes']} | {r['cache_mb']} | {r['turns']:,} | "
            f"{r['p50_ms']:.0f} | {r['p95_ms']:.0f} | {r['cold_p50_ms']:.0f} / "
            f"{r['cold_p95_ms']:.0f} | {r['warm_p50_ms']:.0f} / {r['warm_p95_ms']:.0f} | "
            f"{r['throughput']:.1f} | {r['stall_ms']:.0f} | {r['rss_before_mb']:.0f} → "
            f"{r['rss_mb']:.0f}, {r['peak_rss_mb']:.0f} | {r['cache_mb_held']:.0f} "
            f"({r['cache_entries']:,}, {r['evictions']:,}) | {r['size_mb']:,.0f} |"
        )
    lines += ["", "Idle indexer pass (nothing to embed), median and longest of "
              f"{IDLE_PASSES}:", ""]  # fmt: skip
    for label, figures in idle.items():
        median, longest = figures["median_ms"], figures["max_ms"]
        lines.append(f"- {label}, {figures['memories']:,.0f} memories: {median:.2f} ms "
                     f"(longest {longest:.2f} ms)")  # fmt: skip
    lines += ["", "RSS is one process's (the first): with several processes, each holds its "
              "own caches for its share of the people.", ""]  # fmt: skip
    cores = os.cpu_count() or 1
    lines += [f"This machine has {cores} cores, shared by the workers and the database server "
              "(PostgreSQL's backends, or SQLite inside each worker). Processes beyond the "
              "cores cannot add CPU: with more processes than cores, throughput shows whether "
              "the store lets them work side by side without errors or lock waits, and how "
              "much the contention costs in latency, not how far more machines or cores "
              "would scale.", ""] if cores < 4 else []  # fmt: skip
    lines += [*notes, ""] if notes else []
    lines += ["The longest stall: how late the event loop woke a 100 ms ticker at worst, in any "
              "process, during the turns (memory.looplag). Database MB: the file and its WAL, "
              "or the PostgreSQL database, after the configuration's turns.", ""]  # fmt: skip
    lines += _attack_table(rows, attacked, args)
    lines += _flood_table(rows, flooded)
    (RESULTS / f"{name}.md").write_text("\n".join(lines), encoding="utf-8")
    (RESULTS / f"{name}.json").write_text(
        json.dumps({"rows": everything, "idle": idle, "notes": notes, "people": args.people,
                    "per_person": args.per_person, "dim": args.dim}, indent=1) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    _plot(rows, idle, name)
    if attacked:
        _plot_attack(rows, attacked, name)
    print("\n".join(lines))


def _baseline(rows: list[dict[str, Any]], attack: dict[str, Any]) -> dict[str, Any]:
    """The run without newcomers that the attack run repeats (same target, processes, cache)."""
    return next(r for r in rows if all(r[k] == attack[k]
                                       for k in ("target", "processes", "cache_mb")))  # fmt: skip


def _attack_table(
    rows: list[dict[str, Any]], attacked: list[dict[str, Any]], args: argparse.Namespace
) -> list[str]:
    if not attacked:
        return []
    lines = [
        "## Newcomers' attack (issue 28)", "",
        f"The same configuration again, while {attacked[0]['newcomers']} people with no memory "
        "send, turn after turn until the others are done, one message of every word the "
        "memories hold (bench.scale.run.ATTACK). The others' turns, without and with them:", "",
        "| target | processes | others' p50 ms (without → with) | others' p95 ms (without → "
        "with) | p95 ratio | newcomers' turns | newcomers' p50 / p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for a in attacked:
        b = _baseline(rows, a)
        lines.append(
            f"| {a['target']} | {a['processes']} | {b['p50_ms']:.0f} → {a['p50_ms']:.0f} | "
            f"{b['p95_ms']:.0f} → {a['p95_ms']:.0f} | {a['p95_ms'] / b['p95_ms']:.2f} | "
            f"{a['newcomer_turns']:,} | {a['newcomer_p50_ms']:.0f} / {a['newcomer_p95_ms']:.0f} |"
        )
    return [*lines, ""]


def _flood_table(rows: list[dict[str, Any]], flooded: list[dict[str, Any]]) -> list[str]:
    if not flooded:
        return []
    lines = [
        "## One person's flood", "",
        "The same configuration again, while one person (the last, with their memories; left "
        "out of the conversations) sends a message every "
        "bench.scale.run.FLOOD_PAUSE seconds in one place without waiting for the answers, "
        "until the others are done. The others' turns, without and with the flood:", "",
        "| target | processes | others' p50 ms (without → with) | others' p95 ms (without → "
        "with) | p95 ratio | longest stall ms (without → with) | flood answered / refused | "
        "flood p50 / p95 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for f in flooded:
        b = _baseline(rows, f)
        lines.append(
            f"| {f['target']} | {f['processes']} | {b['p50_ms']:.0f} → {f['p50_ms']:.0f} | "
            f"{b['p95_ms']:.0f} → {f['p95_ms']:.0f} | {f['p95_ms'] / b['p95_ms']:.2f} | "
            f"{b['stall_ms']:.0f} → {f['stall_ms']:.0f} | {f['flood_answered']:,} / "
            f"{f['flood_refused']:,} | {f['flood_p50_ms']:.0f} / {f['flood_p95_ms']:.0f} |"
        )
    return [*lines, ""]


def _plot_attack(rows: list[dict[str, Any]], attacked: list[dict[str, Any]], stem: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(len(attacked))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    bars = (("p50_ms", "others p50"), ("p95_ms", "others p95"))
    for k, (key, name) in enumerate(bars):
        ax.bar(x + (2 * k - 1.5) * 0.2, [_baseline(rows, a)[key] for a in attacked], 0.2,
               label=f"{name}, alone")  # fmt: skip
        ax.bar(x + (2 * k - 0.5) * 0.2, [a[key] for a in attacked], 0.2,
               label=f"{name}, with newcomers")  # fmt: skip
    ax.plot(x, [a["newcomer_p95_ms"] for a in attacked], "kx", label="newcomers p95")
    ax.set_xticks(x, [f"{a['target']}\n{a['processes']} proc" for a in attacked])
    ax.set_title(f"turn latency (ms) with {attacked[0]['newcomers']} newcomers sending every word")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{stem}-newcomers.png", dpi=110)


def _plot(rows: list[dict[str, Any]], idle: dict[str, dict[str, float]], stem: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bounds = {r["cache_mb"] for r in rows}
    labels = [f"{r['target']}\n{r['processes']} proc"
              + (f", {r['cache_mb']} MB" if len(bounds) > 1 else "") for r in rows]  # fmt: skip
    x = np.arange(len(rows))
    fig, axes = plt.subplots(1, 4, figsize=(16, 4.2), width_ratios=(3, 3, 3, 1.2))
    latencies = (("cold_p50_ms", "cold p50"), ("cold_p95_ms", "cold p95"),
                 ("warm_p50_ms", "warm p50"), ("warm_p95_ms", "warm p95"))  # fmt: skip
    for k, (key, name) in enumerate(latencies):
        axes[0].bar(x + (k - 1.5) * 0.2, [r[key] for r in rows], 0.2, label=name)
    axes[0].set_title("turn latency (ms)")
    axes[0].legend()
    axes[1].bar(x, [r["throughput"] for r in rows], 0.6)
    axes[1].set_title("throughput (turns/s, all processes)")
    for offset, key, name in ((-0.2, "rss_mb", "RSS after"), (0.2, "peak_rss_mb", "peak")):
        axes[2].bar(x + offset, [r[key] for r in rows], 0.4, label=name)
    axes[2].plot(x, [r["cache_mb"] for r in rows], "k_", markersize=30, label="cache_mb")
    axes[2].set_title(
        "resident memory of one process (MB)"
        + (f"\ncache_mb {next(iter(bounds))}" if len(bounds) == 1 else "")
    )
    axes[2].legend(loc="lower left")
    for ax in axes[:3]:
        ax.set_xticks(x, labels, fontsize=8)
    names = list(idle)
    axes[3].bar(names, [idle[n]["median_ms"] for n in names], 0.6)
    axes[3].set_title("idle indexer pass\n(ms, median of 7)")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{stem}.png", dpi=110)
