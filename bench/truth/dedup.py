"""The dedup on pairs written apart (tests/corpora/truth/dedup.py): different facts kept apart
and variants merged, per language and half, the test half's misses listed.

Run with the other parts: make bench-truth (bench/truth/run.py).
"""

from __future__ import annotations

from collections import Counter

from bench.truth.report import Figure, Section
from memory.write.dedup import SIMILARITY_THRESHOLD, similarity
from tests.corpora.truth.dedup import DEV, DIFFERENT, SAME, TEST, Pair

KEPT_APART = "different facts kept apart"
MERGED = "variants merged"


def right(pair: Pair) -> bool:
    """Whether the dedup decides this pair as labelled: a variant merges, two facts do not."""
    merges = similarity(pair.a, pair.b) >= SIMILARITY_THRESHOLD
    return merges if pair.label == SAME else not merges


def figures() -> list[Figure]:
    """Each measure on each half of each language."""
    out = []
    for language in ("fr", "en"):
        for half, pairs in (("dev", DEV), ("test", TEST)):
            for label, measure in ((DIFFERENT, KEPT_APART), (SAME, MERGED)):
                chosen = [p for p in pairs if p.language == language and p.label == label]
                out.append(Figure(language, half, measure, sum(map(right, chosen)), len(chosen)))
    return out


def _miss(pair: Pair) -> str:
    expected = "merge" if pair.label == SAME else "stay apart"
    score = similarity(pair.a, pair.b)
    return (
        f"{pair.language} {pair.kind}: « {pair.a} » / « {pair.b} » should {expected}, {score:.2f}"
    )


def _by_class(pairs: list[Pair]) -> str:
    total = Counter(p.kind for p in pairs)
    good = Counter(p.kind for p in pairs if right(p))
    return ", ".join(f"{k} {good[k]}/{total[k]}" for k in sorted(total))


def sections() -> list[Section]:
    scores: dict[str, list[float]] = {}
    for pair in DEV + TEST:
        scores.setdefault(pair.label, []).append(similarity(pair.a, pair.b))
    notes = (
        f"Per class, dev: {_by_class(DEV)}.\n\nPer class, test: {_by_class(TEST)}.\n\n"
        f"A pair merges at similarity >= {SIMILARITY_THRESHOLD:.2f}."
    )
    return [
        Section(
            title="Dedup: different facts kept apart, variants merged",
            figures=figures(),
            misses=[_miss(p) for p in TEST if not right(p)],
            scores=scores,
            threshold=SIMILARITY_THRESHOLD,
            notes=notes,
        )
    ]
