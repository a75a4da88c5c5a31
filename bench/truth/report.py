"""What the parts of bench-truth report (bench/truth/run.py assembles them): a `Section` of
`Figure`s per part, as Markdown (`table`) and as score histograms (`plot`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Figure:
    """One rate on one half of one language: `right` of `total`."""

    language: str
    half: str  # "dev" or "test"
    measure: str  # e.g. "different facts kept apart"
    right: int
    total: int

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 1.0


@dataclass(frozen=True)
class Section:
    """A part of the report: its figures, the test half's misses (one line each, with what was
    expected and what came out), and, for a rule with a score, the scores by label with the
    threshold (drawn in the plot)."""

    title: str
    figures: list[Figure]
    misses: list[str]
    scores: dict[str, list[float]] = field(default_factory=dict)
    threshold: float | None = None
    notes: str = ""


def table(section: Section, *, misses: str = "Misses on the test half") -> list[str]:
    """A section as Markdown: its figures, its notes, then its misses under `misses`."""
    lines = [
        f"## {section.title}",
        "",
        "| language | half | measure | right | share |",
        "|---|---|---|---|---|",
    ]
    for f in section.figures:
        lines.append(
            f"| {f.language} | {f.half} | {f.measure} | {f.right}/{f.total} | {f.share:.0%} |"
        )
    if section.notes:
        lines += ["", section.notes]
    lines += ["", f"{misses} ({len(section.misses)}):", ""]
    lines += [f"- {m}" for m in section.misses] or ["- none"]
    return [*lines, ""]


def plot(sections: list[Section], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scored = [s for s in sections if s.scores]
    if not scored:
        return
    fig, axes = plt.subplots(len(scored), 1, figsize=(8, 3 * len(scored)), squeeze=False)
    for ax, section in zip(axes[:, 0], scored, strict=True):
        for label, values in section.scores.items():
            ax.hist(values, bins=20, range=(0.0, 1.0), alpha=0.55, label=f"{label} ({len(values)})")
        if section.threshold is not None:
            ax.axvline(section.threshold, color="black", linestyle="--", label="threshold")
        ax.set_title(section.title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
