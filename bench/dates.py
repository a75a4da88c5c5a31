"""The relative-date resolver and the time-window parser on their corpus, per language.

Run: make bench-time. Writes bench/results/dates.md: the share right per language and part, and
every miss with what was expected and what came out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType
from zoneinfo import ZoneInfo

from memory.lexicon.dates import annotate, window
from tests.corpora import dates_en, dates_fr

RESULTS = Path(__file__).parent / "results" / "dates.md"


@dataclass(frozen=True)
class Part:
    right: int
    total: int
    misses: tuple[tuple[str, str, str], ...]

    @property
    def share(self) -> float:
        return self.right / self.total if self.total else 1.0


def resolved(corpus: ModuleType, text: str) -> tuple[str, ...]:
    """The labels the resolver gives `text`, said at the corpus's instant and zone."""
    zone = ZoneInfo(corpus.ZONE)
    now = datetime.fromisoformat(corpus.NOW).replace(tzinfo=zone).timestamp()
    return tuple(span.label for span in annotate(text, now, zone)[1])


def windowed(corpus: ModuleType, text: str) -> tuple[str, str] | None:
    """The [first day, day after the last) the parser reads in `text`, or None."""
    zone = ZoneInfo(corpus.ZONE)
    now = datetime.fromisoformat(corpus.NOW).replace(tzinfo=zone).timestamp()
    found = window(text, now, zone)
    if found is None:
        return None
    return (
        datetime.fromtimestamp(found.start, zone).date().isoformat(),
        datetime.fromtimestamp(found.end, zone).date().isoformat(),
    )


def score(corpus: ModuleType) -> tuple[Part, Part]:
    """The resolver's and the window parser's results on one language's corpus."""
    date_misses = [
        (text, str(expected), str(got))
        for text, expected in corpus.DATES
        if (got := resolved(corpus, text)) != expected
    ]
    window_misses = [
        (text, str(expected), str(got))
        for text, expected in corpus.WINDOWS
        if (got := windowed(corpus, text)) != expected
    ]
    return (
        Part(len(corpus.DATES) - len(date_misses), len(corpus.DATES), tuple(date_misses)),
        Part(len(corpus.WINDOWS) - len(window_misses), len(corpus.WINDOWS), tuple(window_misses)),
    )


def report() -> str:
    lines = [
        "# Relative dates and time windows on the corpus",
        "",
        f"Said on {dates_en.NOW} in {dates_en.ZONE} (tests/corpora/dates_en.py, dates_fr.py).",
        "",
        "| language | part | right | share |",
        "|---|---|---|---|",
    ]
    misses: list[str] = []
    for name, corpus in (("en", dates_en), ("fr", dates_fr)):
        for part_name, part in zip(("dates", "windows"), score(corpus), strict=True):
            lines.append(f"| {name} | {part_name} | {part.right}/{part.total} | {part.share:.0%} |")
            for text, expected, got in part.misses:
                why = corpus.KNOWN_MISSES.get(text, "not a known miss")
                misses.append(
                    f"- {name} {part_name}: {text!r}: expected {expected}, got {got} ({why})"
                )
    return "\n".join([*lines, "", "## Misses", "", *(misses or ["none"]), ""])


def cost() -> list[str]:
    """annotate + window on long texts, each beside its first tenth, in one run: a linear
    parser takes about ten times as long on the whole (the best of three runs each)."""
    from tests.memory.lexicon.test_dates import LONG_TEXTS, PARIS, SATURDAY

    def best(text: str) -> float:
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            annotate(text, SATURDAY, PARIS)
            window(text, SATURDAY, PARIS)
            runs.append(time.perf_counter() - started)
        return min(runs)

    lines = ["", "## Cost on long texts", "", "| text | 10,000 chars (ms) | 100,000 chars (ms) |"
             " ratio |", "|---|---|---|---|"]  # fmt: skip
    for text in LONG_TEXTS:
        short, whole = best(text[:10_000]), best(text)
        lines.append(f"| {text[:24]!r}… | {short * 1000:.1f} | {whole * 1000:.1f} |"
                     f" {whole / short:.1f} |")  # fmt: skip
    return lines


def main() -> None:
    text = "\n".join([report(), *cost(), ""])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
