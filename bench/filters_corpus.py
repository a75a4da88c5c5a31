"""Precision and recall of each write-path detector on its labelled corpus, per language.

Run: make bench-filters (prints a Markdown table; the tests assert the floors).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from memory.write import filters
from tests.corpora import filters_en, filters_fr

Case = tuple[bool, str, str]


@dataclass(frozen=True)
class Score:
    tp: int
    fp: int
    fn: int
    tn: int
    misses: tuple[str, ...]

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def detectors(corpus: ModuleType) -> dict[str, tuple[Callable[[str, str], bool], list[Case]]]:
    """Return each detector bound to the corpus's character and user, with its cases."""
    char, user = corpus.CHARACTER, corpus.USER
    return {
        "not_about_user": (
            lambda t, m: filters.not_about_user(t, character_name=char, user_name=user),
            corpus.NOT_ABOUT_USER,
        ),
        "character_attitude": (
            lambda t, m: filters.character_attitude(t, character_name=char, user_message=m),
            corpus.CHARACTER_ATTITUDE,
        ),
        "negation_inverted": (
            lambda t, m: filters.inverts_negation(t, user_message=m),
            corpus.NEGATION,
        ),
    }


def score(detect: Callable[[str, str], bool], cases: list[Case]) -> Score:
    """Count true/false positives/negatives of `detect` over `cases`."""
    tp = fp = fn = tn = 0
    misses: list[str] = []
    for expected, text, message in cases:
        got = detect(text, message)
        tp += got and expected
        fp += got and not expected
        fn += expected and not got
        tn += not got and not expected
        if got != expected:
            misses.append(f"{'FP' if got else 'FN'}: {text!r} / {message!r}")
    return Score(tp, fp, fn, tn, tuple(misses))


def main() -> None:
    print("| detector | language | cases | precision | recall |")
    print("|---|---|---|---|---|")
    errors: list[str] = []
    for lang, corpus in (("fr", filters_fr), ("en", filters_en)):
        for name, (detect, cases) in detectors(corpus).items():
            s = score(detect, cases)
            print(f"| {name} | {lang} | {len(cases)} | {s.precision:.2f} | {s.recall:.2f} |")
            errors += [f"{name}/{lang} {m}" for m in s.misses]
    if errors:
        print("\n" + "\n".join(errors))


if __name__ == "__main__":
    main()
