"""Questions about a time to come (memory.lexicon.dates.ahead) on what people type
(tests/corpora/ahead.py): right on each half, the misses of each listed.

Run: make bench-ahead (or `python -m bench.ahead`). TUNE is what the rule was written on; the
held-out half is the measure. A case is right when the days found are those labelled (None
for a message that asks about no time to come).
"""

from __future__ import annotations

import sys
from datetime import datetime
from zoneinfo import ZoneInfo

from memory.lexicon.dates import ahead
from tests.corpora.ahead import HELD_OUT, TUNE, Case


def found(case: Case) -> str | None:
    """The days the rule finds the message asks about, as labelled: a Span label or None."""
    text, (local, zone), _ = case
    tz = ZoneInfo(zone)
    asked = ahead(text, datetime.fromisoformat(local).replace(tzinfo=tz).timestamp(), tz)
    return None if asked is None else asked.span.label


def misses(cases: list[Case]) -> list[tuple[str, str | None, str | None]]:
    """Each case the rule gets wrong: the message, what was found, what is labelled."""
    return [(c[0], found(c), c[2]) for c in cases if found(c) != c[2]]


def _counts(cases: list[Case]) -> str:
    asking = [c for c in cases if c[2] is not None]
    not_asking = [c for c in cases if c[2] is None]
    right = len(cases) - len(misses(cases))
    days = len(asking) - len(misses(asking))
    quiet = len(not_asking) - len(misses(not_asking))
    return (
        f"{right}/{len(cases)} | {right / len(cases):.0%} | {days}/{len(asking)}"
        f" | {quiet}/{len(not_asking)}"
    )


def main(halves: list[str]) -> None:
    chosen = [(n, c) for n, c in (("tune", TUNE), ("held out", HELD_OUT)) if n in halves]
    print("| half | right | share | days right | no time, none found |\n|---|---|---|---|---|")
    for name, cases in chosen:
        print(f"| {name} | {_counts(cases)} |")
    for name, cases in chosen:
        for text, given, wanted in misses(cases):
            print(f"- {name}: {text!r} → {given} (labelled {wanted})")


if __name__ == "__main__":
    # `python -m bench.ahead tune` prints the tuning half alone (what tuning may read).
    main(sys.argv[1:] or ["tune", "held out"])
