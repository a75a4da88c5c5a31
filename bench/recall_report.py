"""Tables and plot of the recall bench (bench/recall.py): the figures it measured, as text."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# The stages of the default path, per relevant memory (see bench/recall.py's `_stages`).
STAGES = ("cosine top 16", "cosine top 24", "eligible", "keyword hit", "recalled, not served")
# What any fusion of this model's cosine and the keywords could reach: the relevant memories
# within the cosine top K, and within it or among the keyword hits.
CEILING = ("cosine top 24", "cosine top 50", "cosine top 100", "cosine top 500",
           "cosine top 100 or keyword hit", "cosine top 500 or keyword hit")  # fmt: skip
# The engine configurations measured (each a share of the relevant memories served).
CONFIGS = ("relative", "relative + conversation", "relative + unrelated conversation",
           "absolute 0.32", "relative, calibrated", "absolute, probes' cutoff",
           "keywords only")  # fmt: skip


@dataclass
class Tally:
    values: dict[tuple[str, int, str], list[float]] = field(default_factory=dict)

    def add(self, language: str, size: int, metric: str, value: float) -> None:
        self.values.setdefault((language, size, metric), []).append(value)

    def mean(self, language: str, size: int, metric: str) -> float | None:
        got = self.values.get((language, size, metric))
        return statistics.fmean(got) if got else None


def cell(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def table(tally: Tally, language: str, sizes: Sequence[int], metrics: Sequence[str]) -> list[str]:
    lines = [f"| N ({language}) | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    for size in sizes:
        cells = [cell(tally.mean(language, size, m)) for m in metrics]
        lines.append(f"| {size:,} | " + " | ".join(cells) + " |")
    return lines


def plot(tallies: dict[str, Tally], model: str, sizes: Sequence[int], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = len(tallies)
    fig, grid = plt.subplots(rows, 2, figsize=(11, 4 * rows), sharey=True, squeeze=False)
    for (family, tally), axes in zip(tallies.items(), grid, strict=True):
        for ax, language in zip(axes, ("en", "fr"), strict=True):
            for config in ("cosine top 24", *CONFIGS, "cosine top 100"):
                points = [(n, tally.mean(language, n, config)) for n in sizes]
                kept = [(n, 100 * v) for n, v in points if v is not None]
                if kept:
                    style = ":" if config.startswith("cosine") else "-"
                    ax.plot(*zip(*kept, strict=True), style, marker="o", label=config)
            ax.set_xscale("log")
            ax.set_title(f"{family}, {language}: relevant served in the 24 ({model})")
            ax.set_xlabel("memories (log)")
            ax.set_ylim(0, 105)
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("% of relevant served")
        axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
