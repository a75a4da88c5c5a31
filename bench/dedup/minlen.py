"""Read the minimum length below which difflib's ratio makes distinct facts look like variants,
and measure what comparing names wherever they stand gains over names inside sentences only.

For each candidate minimum L, score every pair of tests/corpora/dedup_pairs.py with the full
`similarity()` (ratio used only when both texts have at least L characters) and count the merges
it would make: wrong ones (distinct facts) and right ones (variants). Then, side by side in the
same run, the same counts with the sentence-opening words never taken as names (the comparison
before names were compared position-independently), and the pairs whose decision differs.
Prints Markdown and writes bench/results/dedup_names.md. Run: make bench-dedup
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.write import dedup
from tests.corpora.dedup_pairs import GROUPS

LENGTHS = (0, 8, 12, 16, 20, 22, 24, 28, 32, 40, 48, 1000)
RESULTS = Path(__file__).resolve().parent.parent / "results"


@contextmanager
def _patched(*, min_chars: int, openers: bool) -> Iterator[None]:
    saved = dedup.MIN_RATIO_CHARS, dedup.openers
    dedup.MIN_RATIO_CHARS = min_chars
    if not openers:
        dedup.openers = lambda text: frozenset()  # type: ignore[assignment]
    try:
        yield
    finally:
        dedup.MIN_RATIO_CHARS, dedup.openers = saved  # type: ignore[assignment]


def merged_pairs(min_chars: int, *, openers: bool = True) -> dict[tuple[str, str], bool]:
    """Every pair of the corpus that merges, and whether it is a right merge (a variant)."""
    labelled = [(text, g) for g, group in enumerate(GROUPS) for text in group]
    with _patched(min_chars=min_chars, openers=openers):
        return {
            (a, b): ga == gb
            for (a, ga), (b, gb) in itertools.combinations(labelled, 2)
            if dedup.similarity(a, b) >= dedup.SIMILARITY_THRESHOLD
        }


def count_merges(min_chars: int, *, openers: bool = True) -> tuple[int, int, int]:
    """Return (wrong merges, right merges, variant pairs) with the ratio gated at `min_chars`."""
    merged = merged_pairs(min_chars, openers=openers)
    variants = sum(len(g) * (len(g) - 1) // 2 for g in GROUPS)
    right = sum(merged.values())
    return len(merged) - right, right, variants


def lengths_table() -> list[str]:
    lines = ["| ratio used from L chars | wrong merges | right merges | variant pairs |",
             "|---|---|---|---|"]  # fmt: skip
    for length in LENGTHS:
        wrong, right, variants = count_merges(length)
        label = "never" if length == 1000 else str(length)
        lines.append(f"| {label} | {wrong} | {right} | {variants} |")
    return lines


def names_table() -> list[str]:
    length = dedup.MIN_RATIO_CHARS
    before, after = merged_pairs(length, openers=False), merged_pairs(length)
    lines = [
        f"At MIN_RATIO_CHARS = {length}, on {sum(map(len, GROUPS))} texts:",
        "",
        "| names compared | wrong merges | right merges | variant pairs |",
        "|---|---|---|---|",
    ]
    for label, openers in (("inside a sentence only (before)", False), ("anywhere (now)", True)):
        wrong, right, variants = count_merges(length, openers=openers)
        lines.append(f"| {label} | {wrong} | {right} | {variants} |")
    lines += ["", "Pairs whose decision changed:", ""]
    for pair in sorted(before.keys() ^ after.keys()):
        kind = "right" if (before | after)[pair] else "WRONG"
        change = "gained" if pair in after else "lost"
        lines.append(f"- {kind} merge {change}: {pair[0]!r} / {pair[1]!r}")
    return lines


def main() -> None:
    print(f"current MIN_RATIO_CHARS = {dedup.MIN_RATIO_CHARS}\n")
    print("\n".join(lengths_table()), end="\n\n")
    names = names_table()
    print("\n".join(names))
    RESULTS.mkdir(exist_ok=True)
    header = [
        "# Dedup: names compared wherever they stand",
        "",
        "Run: `make bench-dedup` (tests/corpora/dedup_pairs.py, every pair scored).",
        "",
    ]
    (RESULTS / "dedup_names.md").write_text("\n".join(header + names) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
