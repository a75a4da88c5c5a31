"""The memory's rules measured on the blind corpus (tests/corpora/truth/blind.py), written by a
separate author who did not read the rules: dedup, replacement, dates in memories, windows in
messages. Every figure is given per language and per half (A and B, a stratified seeded split);
the misses of both halves are listed with their tag.

Run: PYTHONPATH=. python -m bench.truth.blind (prints the report as Markdown).
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bench.truth.report import Figure, Section, table
from tests.corpora.truth import blind

HALVES = ("A", "B")
LANGUAGES = ("fr", "en")


def _language(case: tuple[Any, ...], fr: list[Any]) -> str:
    return "fr" if case in fr else "en"


def _halves(name: str) -> list[tuple[str, list[Any]]]:
    return [(h, getattr(blind, f"{name}_{h}")) for h in HALVES]


def _epoch(said_at: str, zone: str) -> float:
    return datetime.fromisoformat(said_at).replace(tzinfo=ZoneInfo(zone)).timestamp()


def _figures(
    rows: Iterable[tuple[str, str, str, bool]],
) -> list[Figure]:
    """rows: (language, half, measure, right) -> one Figure per (language, half, measure)."""
    counts: dict[tuple[str, str, str], list[int]] = {}
    for language, half, measure, right in rows:
        c = counts.setdefault((language, half, measure), [0, 0])
        c[0] += int(right)
        c[1] += 1
    order = {m: i for i, m in enumerate(dict.fromkeys(k[2] for k in counts))}
    keys = sorted(counts, key=lambda k: (order[k[2]], LANGUAGES.index(k[0]), k[1]))
    return [Figure(k[0], k[1], k[2], counts[k][0], counts[k][1]) for k in keys]


def _dedup() -> Section:
    from memory.write.dedup import SIMILARITY_THRESHOLD, similarity

    rows: list[tuple[str, str, str, bool]] = []
    misses: list[str] = []
    scores: dict[str, list[float]] = {"same": [], "different": []}
    asymmetric = 0
    for half, cases in _halves("DEDUP"):
        for case in cases:
            a, b, same, tag = case
            lang = _language(case, blind.DEDUP_FR)
            ab, ba = similarity(a, b), similarity(b, a)
            merged_ab, merged_ba = ab >= SIMILARITY_THRESHOLD, ba >= SIMILARITY_THRESHOLD
            asymmetric += merged_ab != merged_ba
            scores["same" if same else "different"].append(max(ab, ba))
            # Right only when both orders agree with the label.
            right = (merged_ab and merged_ba) if same else not (merged_ab or merged_ba)
            measure = "same facts merged" if same else "different facts kept apart"
            rows.append((lang, half, measure, right))
            if not right:
                want = "merge" if same else "keep apart"
                misses.append(
                    f"[{half}/{lang}] {tag}: {a!r} ~ {b!r}: expected {want}, "
                    f"similarity {ab:.3f}/{ba:.3f}"
                )
    return Section(
        "Dedup (blind)",
        _figures(rows),
        misses,
        scores,
        SIMILARITY_THRESHOLD,
        notes=f"Pairs whose merge decision depends on the order: {asymmetric}.",
    )


def _replace() -> Section:
    from memory.write.supersede import may_replace

    rows: list[tuple[str, str, str, bool]] = []
    misses: list[str] = []
    for half, cases in _halves("REPLACE"):
        for case in cases:
            old, new, update, tag = case
            lang = _language(case, blind.REPLACE_FR)
            got = may_replace(old, new)
            right = got == update
            measure = "updates accepted" if update else "look-alikes refused"
            rows.append((lang, half, measure, right))
            if not right:
                want = "replace" if update else "keep both"
                misses.append(f"[{half}/{lang}] {tag}: {old!r} -> {new!r}: expected {want}")
    return Section("Replacement (blind)", _figures(rows), misses)


def _label(span: Any) -> str:
    label = getattr(span, "label", None)
    if isinstance(label, str):
        return label
    first, last = span.first, span.last
    if first == last:
        return first.isoformat()
    if first.day == 1 and last == date(first.year, first.month, 1) + timedelta(
        days=calendar.monthrange(first.year, first.month)[1] - 1
    ):
        return f"{first.year:04d}-{first.month:02d}"
    if (first.month, first.day, last.month, last.day) == (1, 1, 12, 31) and first.year == last.year:
        return str(first.year)
    return f"{first.isoformat()}/{last.isoformat()}"


def _dates() -> Section:
    from memory.lexicon.dates import annotate

    rows: list[tuple[str, str, str, bool]] = []
    misses: list[str] = []
    for half, cases in _halves("DATES"):
        for case in cases:
            text, said_at, zone, expected, tag = case
            lang = _language(case, blind.DATES_FR)
            _, spans = annotate(text, _epoch(said_at, zone), ZoneInfo(zone))
            got = tuple(_label(s) for s in spans)
            right = got == tuple(expected)
            measure = "dates right" if expected else "no-date left undated"
            rows.append((lang, half, measure, right))
            if not right:
                misses.append(
                    f"[{half}/{lang}] {tag}: {text!r} said {said_at} {zone}: "
                    f"expected {tuple(expected)}, got {got}"
                )
    return Section("Dates in memories (blind)", _figures(rows), misses)


def _local_window(w: Any, zone: ZoneInfo) -> tuple[str, str] | None:
    if w is None:
        return None
    start = datetime.fromtimestamp(w.start, zone).date()
    # The day after the last day: the end's local date when it falls at midnight, else next day.
    last = datetime.fromtimestamp(w.end - 1, zone).date()
    return (start.isoformat(), (last + timedelta(days=1)).isoformat())


def _windows() -> Section:
    from memory.lexicon.dates import window

    rows: list[tuple[str, str, str, bool]] = []
    misses: list[str] = []
    for half, cases in _halves("WINDOWS"):
        for case in cases:
            message, said_at, zone, expected, tag = case
            lang = _language(case, blind.WINDOWS_FR)
            tz = ZoneInfo(zone)
            got = _local_window(window(message, _epoch(said_at, zone), tz), tz)
            right = got == (tuple(expected) if expected is not None else None)
            measure = "windows right" if expected is not None else "no-time left without window"
            rows.append((lang, half, measure, right))
            if not right:
                misses.append(
                    f"[{half}/{lang}] {tag}: {message!r} said {said_at} {zone}: "
                    f"expected {expected}, got {got}"
                )
    return Section("Windows in messages (blind)", _figures(rows), misses)


def sections() -> list[Section]:
    return [_dedup(), _replace(), _dates(), _windows()]


def _render(section: Section) -> list[str]:
    by_text = sorted(section.misses, key=lambda m: m.split("] ", 1)[1])
    return table(replace(section, misses=by_text), misses="Misses, both halves")


def main() -> None:
    lines = ["# The memory's rules on the blind corpus", ""]
    for section in sections():
        lines += _render(section)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
