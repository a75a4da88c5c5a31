"""The rewrite of /remember's first person (memory/write/voice.py) on what people type
(tests/corpora/voice.py): right on each half, the misses of each listed.

Run: make bench-voice (or `python -m bench.voice`). TUNE is what the rule was written on; the
held-out half is the measure.
"""

from __future__ import annotations

from memory.write.voice import third_person
from tests.corpora.voice import HELD_OUT, TUNE, Case


def misses(cases: list[Case]) -> list[tuple[str, str, str]]:
    """Each case whose rewrite is none of those accepted: typed, given, first accepted."""
    return [
        (typed, third_person(typed), accepted[0])
        for typed, accepted in cases
        if third_person(typed) not in accepted
    ]


def main() -> None:
    print("| half | right | share |\n|---|---|---|")
    for name, cases in (("tune", TUNE), ("held out", HELD_OUT)):
        right = len(cases) - len(misses(cases))
        print(f"| {name} | {right}/{len(cases)} | {right / len(cases):.0%} |")
    for name, cases in (("tune", TUNE), ("held out", HELD_OUT)):
        for typed, given, wanted in misses(cases):
            print(f"- {name}: {typed!r} → {given!r} (wanted {wanted!r})")


if __name__ == "__main__":
    main()
