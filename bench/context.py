"""The cost of planning a prompt: blocks from 24 memories, 10 lore entries and N history
messages, each strategy, under an 8k context. Baseline in the same run: the same strategies
dropping one block at a time and recounting the prompt after each (what the host did first).
Medians of 7 runs; the baseline stops at 1,000 messages (quadratic: minutes per plan beyond).
Run: make bench-context
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from pathlib import Path
from unittest import mock

from memory.context import strategies
from memory.context.budget import Budget, assemble
from memory.context.prompt import Block, BlockKind, block
from memory.context.tokens import Estimator

RESULTS = Path(__file__).parent / "results" / "context.md"
SIZES = (50, 200, 1000, 5000)
REPEATS = 7
# The baseline is quadratic: past this many messages one plan takes minutes.
BASELINE_UP_TO = 1000


def blocks(history: int) -> list[Block]:
    out = [block(BlockKind.PERSONA, "persona", "You are Écho, a warm confidante. " * 20)]
    out += [
        block(BlockKind.MEMORY, f"memory:{i}", f"- (fact) memory {i}: a cat, a garden in Brest",
              order=-i, relevance=i / 24)
        for i in range(24)
    ]  # fmt: skip
    out += [
        block(BlockKind.LORE, f"lore:{i}", f"- lore {i}: the lighthouse was built in 1902",
              order=-i, relevance=i / 10)
        for i in range(10)
    ]  # fmt: skip
    out += [
        block(BlockKind.HISTORY, f"history:{i}",
              f"Marie: message {i} about the garden, the lighthouse and the storm. " * 2,
              order=i, role="user", label=f"Marie #{i}")
        for i in range(1, history + 1)
    ]  # fmt: skip
    return [*out, block(BlockKind.INPUT, "input", "Marie: and the lamp?")]


def one_at_a_time(
    request: strategies.ContextRequest, keep: list[Block], order: Iterable[Block],
    removed: dict[str, tuple[strategies.Status, str]], reason: str, *, reserve: int = 0,
) -> list[Block]:  # fmt: skip
    gone = []
    for candidate in order:
        if request.tokens(keep) + reserve <= request.budget:
            break
        if candidate.protected or candidate not in keep:
            continue
        keep.remove(candidate)
        removed[candidate.key] = (strategies.Status.EXCLUDED, reason)
        gone.append(candidate)
    return gone


def timed(history: int, strategy: strategies.Strategy) -> float:
    prompt = blocks(history)
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        assemble(prompt, strategy=strategy, budget=Budget(8192, 1024),
                 estimator=Estimator("bench"), user_name="Marie")  # fmt: skip
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000


def main() -> None:
    lines = [
        "# Planning a prompt under the budget",
        "",
        "24 memories, 10 lore entries, N history messages, 8,192-token context (7,168 for the "
        "prompt). Milliseconds per plan, median of 7. Baseline: one block dropped at a time, "
        "the prompt recounted after each. Run: `make bench-context`.",
        "",
        "| history messages | strategy | ours (binary search) | one at a time | ratio |",
        "|---|---|---|---|---|",
    ]
    for size in SIZES:
        for factory in (strategies.Truncate, strategies.Summarize, strategies.VectorRecall):
            ours = timed(size, factory())
            if size > BASELINE_UP_TO:
                lines.append(f"| {size:,} | {factory.name} | {ours:.1f} ms | not run | |")
                print(lines[-1], flush=True)
                continue
            with mock.patch.object(strategies, "drop_until_fits", one_at_a_time):
                naive = timed(size, factory())
            lines.append(
                f"| {size:,} | {factory.name} | {ours:.1f} ms | {naive:.1f} ms | "
                f"{naive / ours:.1f}× |"
            )
            print(lines[-1], flush=True)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
