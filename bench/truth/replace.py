"""The replacement rule on pairs it was not tuned on: true updates accepted, look-alikes refused.

Runs `memory.write.supersede.may_replace` (without vectors: `closeness=None`, the lexical rule
alone) on tests/corpora/truth/replace.py, per language and half, and on the project's earlier
pairs (tests/corpora/supersession.py). Part of `make bench-truth` (bench/truth/run.py).
"""

from __future__ import annotations

from bench.truth.report import Figure, Section
from memory import lexicon
from memory.text import words
from memory.write.supersede import may_replace
from tests.corpora import supersession
from tests.corpora.truth.replace import DEV, LOOKALIKE, TEST, UPDATE, Pair

MEASURES = {UPDATE: "true updates accepted", LOOKALIKE: "look-alikes refused"}


def _right(pair: Pair) -> bool:
    return may_replace(pair.old, pair.new) is (pair.label == UPDATE)


def _figures(pairs: list[Pair], half: str) -> list[Figure]:
    out = []
    for language in ("fr", "en"):
        for label, measure in MEASURES.items():
            group = [p for p in pairs if p.language == language and p.label == label]
            out.append(Figure(language, half, measure, sum(map(_right, group)), len(group)))
    return out


def _miss(pair: Pair) -> str:
    said = "accepted" if pair.label == LOOKALIKE else "refused"
    return f"{pair.language} {pair.tag} ({pair.label}, {said}): {pair.old!r} -> {pair.new!r}"


def _earlier() -> list[Pair]:
    """tests/corpora/supersession.py as pairs, each with the language its words speak."""
    out = []
    for label, rows in ((UPDATE, supersession.UPDATES), (LOOKALIKE, supersession.LOOKALIKES)):
        for old, new in rows:
            language = lexicon.detect_language(words(f"{old} {new}")) or "en"
            out.append(Pair(old, new, label, language, "earlier"))
    return out


def sections() -> list[Section]:
    """The held-out corpus's halves (the test half's misses listed), and the earlier pairs."""
    held_out = Section(
        title="Replacements: may_replace(old, new), no vectors",
        figures=_figures(DEV, "dev") + _figures(TEST, "test"),
        misses=[_miss(p) for p in TEST if not _right(p)],
        notes="tests/corpora/truth/replace.py; a miss is a refused update or an accepted"
        " look-alike.",
    )
    earlier = _earlier()
    tuned = Section(
        title="Replacements: the earlier pairs (tests/corpora/supersession.py, tuned on)",
        figures=_figures(earlier, "dev"),
        misses=[],
        notes="These pairs were read while the rule was written: an upper bound.",
    )
    return [held_out, tuned]


if __name__ == "__main__":
    for section in sections():
        for f in section.figures:
            print(f"{f.language} {f.half:4} {f.measure:24} {f.right}/{f.total}")
