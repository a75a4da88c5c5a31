"""Read the minimum length below which difflib's ratio makes distinct facts look like variants.

For each candidate minimum L, score every pair of tests/corpora/dedup_pairs.py with the full
`similarity()` (ratio used only when both texts have at least L characters) and count the merges
it would make: wrong ones (distinct facts) and right ones (variants). Prints a Markdown table.
Run: make bench-dedup
"""

from __future__ import annotations

import itertools

from memory.write import dedup
from tests.corpora.dedup_pairs import GROUPS

LENGTHS = (0, 8, 12, 16, 20, 22, 24, 28, 32, 40, 48, 1000)


def count_merges(min_chars: int) -> tuple[int, int, int]:
    """Return (wrong merges, right merges, variant pairs) with the ratio gated at `min_chars`."""
    saved = dedup.MIN_RATIO_CHARS
    dedup.MIN_RATIO_CHARS = min_chars
    try:
        labelled = [(text, g) for g, group in enumerate(GROUPS) for text in group]
        wrong = right = variants = 0
        for (a, ga), (b, gb) in itertools.combinations(labelled, 2):
            merged = dedup.similarity(a, b) >= dedup.SIMILARITY_THRESHOLD
            variants += ga == gb
            wrong += merged and ga != gb
            right += merged and ga == gb
        return wrong, right, variants
    finally:
        dedup.MIN_RATIO_CHARS = saved


def main() -> None:
    print(f"current MIN_RATIO_CHARS = {dedup.MIN_RATIO_CHARS}\n")
    print("| ratio used from L chars | wrong merges | right merges | variant pairs |")
    print("|---|---|---|---|")
    for length in LENGTHS:
        wrong, right, variants = count_merges(length)
        label = "never" if length == 1000 else str(length)
        print(f"| {label} | {wrong} | {right} | {variants} |")


if __name__ == "__main__":
    main()
