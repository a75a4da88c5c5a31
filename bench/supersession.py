"""The supersession criterion's distribution: how surely `same_thing` says a true update is
about the same thing as the memory it replaces, against look-alikes that are two facts.

Scores every pair of tests/corpora/supersession.py with `memory.write.supersede.same_thing`, and
again without its single-topic rule (subject words only), to show what each part decides. Prints
Markdown with the pairs on the wrong side of SAME_THING, writes bench/results/supersession.md
and, when matplotlib is installed (make .venv/.load-installed), supersession.png.
Run: make bench-supersession
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from memory.write import supersede
from tests.corpora.supersession import LOOKALIKES, UPDATES

RESULTS = Path(__file__).parent / "results"
BINS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _words_only(old: str, new: str) -> float:
    a = supersede.subject_words(old) - supersede._topic_words()
    b = supersede.subject_words(new) - supersede._topic_words()
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _bin(score: float) -> float:
    return max(b for b in BINS if b <= score)


def report() -> tuple[str, dict[str, list[float]]]:
    """The Markdown report, and the scores of each class (for the plot)."""
    scores = {
        "updates": [supersede.same_thing(*p) for p in UPDATES],
        "look-alikes": [supersede.same_thing(*p) for p in LOOKALIKES],
    }
    words = {
        "updates": [_words_only(*p) for p in UPDATES],
        "look-alikes": [_words_only(*p) for p in LOOKALIKES],
    }
    lines = [
        "# Supersession criterion (`same_thing`) on tests/corpora/supersession.py",
        "",
        f"{len(UPDATES)} true updates, {len(LOOKALIKES)} look-alikes; a replacement passes at"
        f" `same_thing >= SAME_THING` = {supersede.SAME_THING}.",
        "",
        "| score from | updates | look-alikes | updates, words only | look-alikes, words only |",
        "|---|---|---|---|---|",
    ]
    for low in BINS:
        columns = (*scores.values(), *words.values())
        row = [Counter(_bin(s) for s in found)[low] for found in columns]
        lines.append(f"| {low:.2f} | " + " | ".join(str(n) for n in row) + " |")
    threshold = supersede.SAME_THING
    missed = [p for p, s in zip(UPDATES, scores["updates"], strict=True) if s < threshold]
    passed = [p for p, s in zip(LOOKALIKES, scores["look-alikes"], strict=True) if s >= threshold]
    lines += [
        "",
        f"True updates refused: {len(missed)}/{len(UPDATES)}; look-alikes passed (false"
        f" positives): {len(passed)}/{len(LOOKALIKES)}.",
        "",
    ]
    lines += [f"- refused update: {old!r} -> {new!r}" for old, new in missed]
    lines += [f"- passed look-alike: {old!r} -> {new!r}" for old, new in passed]
    return "\n".join(lines) + "\n", scores


def main() -> None:
    text, scores = report()
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "supersession.md").write_text(text, encoding="utf-8")
    try:
        import matplotlib
    except ImportError:
        print("(no plot: matplotlib is not installed; make .venv/.load-installed)")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    edges = [*BINS, 1.25]
    for label, found in scores.items():
        ax.hist(found, bins=edges, alpha=0.6, label=label)
    ax.axvline(supersede.SAME_THING, color="black", linestyle="--", label="SAME_THING")
    ax.set_xlabel("same_thing(old, new)")
    ax.set_ylabel("pairs")
    ax.set_title("True updates against look-alikes")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "supersession.png", dpi=120)


if __name__ == "__main__":
    main()
