"""Dedup cost: one candidate against N existing memories, brute force against DedupIndex.

The index is exact: the bench asserts that every decision equals brute force, and reports the
per-candidate time of both and the speed-up. Existing memories come from the recall corpora's
templates (English and French); candidates are variants of existing memories (which must merge)
and new facts (which must not). Run: make bench-dedup-cost
"""

from __future__ import annotations

import itertools
import random
import statistics
import sys
import time
from pathlib import Path

from bench.corpora.recall import CORPORA
from memory.model import Kind, Memory, Scope
from memory.write.dedup import decide
from memory.write.dedup_index import DedupIndex

SIZES = (1_000, 10_000, 100_000)
RESULTS = Path(__file__).resolve().parent.parent / "results"
BRUTE_CANDIDATES = {1_000: 20, 10_000: 10, 100_000: 2}


def _texts() -> list[str]:
    pool: list[str] = []
    for corpus in CORPORA.values():
        for template, slots in corpus.templates:
            names = list(slots)
            for values in itertools.product(*(slots[n] for n in names)):
                pool.append(template.format(**dict(zip(names, values, strict=True))))
    pool = sorted(set(pool))
    pool += [f"{t}, d'après elle" if i % 2 else f"{t}, she says" for i, t in enumerate(pool)]
    random.Random(3).shuffle(pool)
    return pool


def _candidates(existing: list[str]) -> list[str]:
    rng = random.Random(5)
    variants = [f"{t} !" for t in rng.sample(existing, 5)]
    variants += [f"{t} avec plaisir" for t in rng.sample(existing, 5)]
    fresh = [r for corpus in CORPORA.values() for r in corpus.references][:10]
    return variants + fresh


def main() -> None:
    texts = _texts()
    lines = [
        "# Dedup cost per candidate",
        "",
        "| N | index build (s) | indexed (ms, median) | brute force (ms, median) | speed-up |"
        " identical decisions | merges found |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in SIZES:
        memories = [
            Memory(id=i + 1, user_id=1, text=t, kind=Kind.FACT, scope=Scope.GLOBAL)
            for i, t in enumerate(texts[:n])
        ]
        started = time.perf_counter()
        index = DedupIndex(memories)
        build = time.perf_counter() - started
        candidates = _candidates(texts[:n])
        fast, brute, same, merges = [], [], 0, 0
        for i, candidate in enumerate(candidates):
            started = time.perf_counter()
            decision = index.decide(candidate)
            fast.append(time.perf_counter() - started)
            merges += decision.target is not None
            if i < BRUTE_CANDIDATES[n] // 2 or len(candidates) - i <= BRUTE_CANDIDATES[n] // 2:
                started = time.perf_counter()
                reference = decide(candidate, memories)
                brute.append(time.perf_counter() - started)
                assert decision == reference, (n, candidate, decision, reference)
                same += 1
        f, b = statistics.median(fast), statistics.median(brute)
        lines.append(
            f"| {n:,} | {build:.2f} | {1000 * f:.2f} | {1000 * b:.0f} | {b / f:.0f}× | "
            f"{same}/{same} checked | {merges}/{len(candidates)} |"
        )
        print(lines[-1], flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dedup.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
