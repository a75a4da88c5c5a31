"""How truthful the memory's rules are on cases they were not tuned on: the dedup (different
facts kept apart, variants merged), the replacement rule (true updates accepted, look-alikes
refused), relative dates in memories and time windows in messages.

Run: make bench-truth. Each part's corpus (tests/corpora/truth/) was written from how people
write in chat and split in two before any rule was read off it: `dev` is the half the rules were
tuned on, `test` the half kept apart. Every figure is given on both halves, the misses of the
test half listed. Writes bench/results/truth.md and truth.png (each score's distribution by
label, the threshold drawn).

The parts live in bench/truth/ (dedup.py, replace.py, dates.py, blind.py); each gives
`sections()`, a list of `Section` (bench/truth/report.py).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from bench.truth.report import Section, plot, table

RESULTS = Path(__file__).resolve().parent.parent / "results"
PARTS = ("bench.truth.dedup", "bench.truth.replace", "bench.truth.dates", "bench.truth.blind")


def main() -> None:
    sections: list[Section] = []
    for name in PARTS:
        sections.extend(importlib.import_module(name).sections())
    lines = [
        "# Truthful memory on cases written apart (make bench-truth)",
        "",
        "Corpora: tests/corpora/truth/, each split in a `dev` half (the rules were tuned on it)",
        "and a `test` half (kept apart; its misses listed below).",
        "",
    ]
    for section in sections:
        lines += table(section)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "truth.md").write_text("\n".join(lines))
    plot(sections, RESULTS / "truth.png")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
