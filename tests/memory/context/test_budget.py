"""The token budget is a hard limit whatever the strategy, and each strategy removes blocks in
its documented order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.context.budget import Budget, ContextPlan, assemble
from memory.context.prompt import Block, BlockKind, block, raw_total, render
from memory.context.strategies import (
    ContextRequest,
    Manual,
    Status,
    StrategyResult,
    Summarize,
    Truncate,
    VectorRecall,
)
from memory.context.tokens import Estimator, raw_messages
from memory.model import CondensedHistory

ESTIMATOR = Estimator("test-model")
USER = "Marie"


def history(n: int, *, words: int = 30, start: int = 1) -> list[Block]:
    blocks = []
    for i in range(start, start + n):
        role = "user" if i % 2 else "assistant"
        who = USER if role == "user" else "Écho"
        body = f"Message {i} about the garden and the lighthouse at Brest. " + "word " * words
        text = f"{who}: {body}" if role == "user" else body
        blocks.append(
            block(BlockKind.HISTORY, f"history:{i}", text, order=i, role=role, label=f"{who} #{i}")
        )
    return blocks


def memory(i: int, relevance: float, *, words: int = 20) -> Block:
    return block(
        BlockKind.MEMORY, f"memory:{i}", f"- (fact) memory {i} " + "detail " * words,
        order=-i, relevance=relevance,
    )  # fmt: skip


def base() -> list[Block]:
    return [
        block(BlockKind.PERSONA, "persona", "You are Écho, a warm confidante."),
        block(BlockKind.RULES, "rules", "Rules you always follow:\n- Never lie."),
    ]


def plan(blocks: list[Block], strategy: Any, prompt_budget: int, **kw: Any) -> ContextPlan:
    return assemble(
        [*blocks, block(BlockKind.INPUT, "input", f"{USER}: what about my garden?")],
        strategy=strategy, budget=Budget(prompt_budget + 100, 100), estimator=ESTIMATOR,
        user_name=USER, **kw,
    )  # fmt: skip


def status(p: ContextPlan) -> dict[str, Status]:
    return {d.block.key: d.status for d in p.decisions}


def tokens(blocks: list[Block]) -> int:
    return ContextRequest(tuple(blocks), 0, USER, ESTIMATOR).tokens(blocks)


def test_everything_fits_nothing_removed() -> None:
    p = plan([*base(), *history(4)], Truncate(), 10_000)
    assert set(status(p).values()) == {Status.INCLUDED}
    assert p.messages[-1]["content"].endswith("what about my garden?")


def test_truncate_drops_the_oldest_history_first() -> None:
    blocks = [*base(), memory(1, 0.1), *history(6)]
    full = tokens([*blocks, block(BlockKind.INPUT, "input", f"{USER}: what about my garden?")])
    per_message = tokens(history(1)) - tokens([])
    p = plan(blocks, Truncate(), full - 2 * per_message + 5)
    s = status(p)
    assert [k for k, v in s.items() if v is Status.EXCLUDED] == ["history:1", "history:2"]
    assert s["memory:1"] is Status.INCLUDED


def test_summarize_condenses_what_leaves_before_the_input() -> None:
    blocks = [*base(), *history(12)]
    full = tokens([*blocks, block(BlockKind.INPUT, "input", f"{USER}: what about my garden?")])
    p = plan(blocks, Summarize(), full * 2 // 3)
    condensed = [d.block.key for d in p.with_status(Status.CONDENSED)]
    assert condensed and condensed == [f"history:{i}" for i in range(1, len(condensed) + 1)]
    assert p.condensed is not None and p.condensed.through_id == len(condensed)
    assert p.messages[-2]["role"] == "system" and "condensed" in p.messages[-2]["content"]
    assert "Message 1 " in p.messages[-2]["content"] or p.condensed.sentences
    assert p.tokens <= p.budget.prompt


def test_summarize_starts_after_the_stored_summary() -> None:
    blocks = [*base(), *history(6)]
    previous = CondensedHistory(("Marie: my sister lives in Brest.",), through_id=3)
    p = plan(blocks, Summarize(), 10_000, previous_condensed=previous)
    s = status(p)
    assert [s[f"history:{i}"] for i in range(1, 7)] == [Status.CONDENSED] * 3 + [
        Status.INCLUDED
    ] * 3
    assert "my sister lives in Brest" in p.messages[-2]["content"]
    assert p.condensed is None  # nothing new left: nothing to store


def test_vector_recall_drops_least_relevant_memories_before_history() -> None:
    memories = [memory(i, r) for i, r in enumerate([0.9, 0.1, 0.5, 0.2], start=1)]
    blocks = [*base(), *memories, *history(4)]
    full = tokens([*blocks, block(BlockKind.INPUT, "input", f"{USER}: what about my garden?")])
    one_memory = tokens(memories[:2]) - tokens(memories[:1])
    p = plan(blocks, VectorRecall(), full - one_memory + 1)
    s = status(p)
    assert s["memory:2"] is Status.EXCLUDED  # relevance 0.1 goes first
    assert all(s[f"history:{i}"] is Status.INCLUDED for i in range(1, 5))
    # Squeezed harder: the less relevant half, then the oldest history, never the best memory.
    p = plan(blocks, VectorRecall(), full // 2)
    s = status(p)
    assert s["memory:1"] is Status.INCLUDED and s["memory:3"] is Status.INCLUDED
    assert s["memory:2"] is Status.EXCLUDED and s["memory:4"] is Status.EXCLUDED
    assert s["history:1"] is Status.EXCLUDED


def test_manual_keeps_out_only_what_people_excluded_then_the_host_cuts() -> None:
    all_history = history(6)
    person = [(all_history[1], "excluded from the context by a person")]
    kept = [b for b in all_history if b is not all_history[1]]
    p = plan([*base(), *kept], Manual(), 10_000, excluded=person)
    s = status(p)
    assert s["history:2"] is Status.EXCLUDED
    assert all(s[f"history:{i}"] is Status.INCLUDED for i in (1, 3, 4, 5, 6))
    p = plan([*base(), *kept], Manual(), tokens([*base(), *kept]) // 2)
    reasons = {d.block.key: d.reason for d in p.with_status(Status.EXCLUDED)}
    assert reasons["history:1"] == "over the budget after manual"


class Greedy:
    """A plugin that tries to spend more than it has: keeps everything and adds a huge block."""

    name = "greedy"

    def apply(self, request: ContextRequest) -> StrategyResult:
        huge = block(BlockKind.LORE, "lore:huge", "- " + "lorem " * 5000, protected=True)
        return StrategyResult((*request.blocks, huge))


class Broken:
    name = "broken"

    def apply(self, request: ContextRequest) -> StrategyResult:
        raise RuntimeError("plugin bug")


class DropsPersona:
    name = "drops-persona"

    def apply(self, request: ContextRequest) -> StrategyResult:
        return StrategyResult(tuple(b for b in request.blocks if b.kind is not BlockKind.PERSONA))


def test_a_strategy_cannot_overspend_raise_or_drop_the_persona() -> None:
    blocks = [*base(), *history(6)]
    greedy = plan(blocks, Greedy(), 600)
    assert greedy.tokens <= 600 and status(greedy)["lore:huge"] is Status.EXCLUDED
    broken = plan(blocks, Broken(), 600)
    assert broken.tokens <= 600 and "truncate used" in broken.notes[0]
    dropped = plan(blocks, DropsPersona(), 600)
    assert status(dropped)["persona"] is Status.INCLUDED and "restored" in dropped.notes[0]


def test_protected_blocks_are_cut_as_a_last_resort() -> None:
    persona = block(BlockKind.PERSONA, "persona", "You are Écho. " * 400)
    p = plan([persona, *history(3)], Truncate(), 300)
    s = {d.block.key: d for d in p.decisions}
    assert s["persona"].status is Status.CUT and "cut to" in s["persona"].reason
    assert p.tokens <= 300 and p.messages[-1]["content"].endswith("garden?")


TEXT = st.text(
    alphabet=st.sampled_from([*"abcdéèçœ 1234567890.,;!?'\n-_", "漢", "字", "ß", "\u0301"]),
    max_size=400,
)
KINDS = [k for k in BlockKind if k is not BlockKind.INPUT]


@st.composite
def blocksets(draw: st.DrawFn) -> list[Block]:
    out = [block(BlockKind.PERSONA, "persona", draw(TEXT) or "You are Écho.")]
    for i in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(KINDS))
        order = draw(st.integers(-50, 50))
        relevance = draw(st.none() | st.floats(-1, 1))
        role = draw(st.sampled_from(["user", "assistant"]))
        text = draw(TEXT)
        out.append(block(kind, f"{kind}:{i}", text, order=order, relevance=relevance, role=role))
    return out


STRATEGIES = [Truncate(), Summarize(), VectorRecall(), Manual(), Greedy(), Broken(), DropsPersona()]


@settings(max_examples=150, deadline=None)
@given(
    blocksets(), st.integers(64, 3000), st.sampled_from(STRATEGIES), TEXT,
    st.floats(0.5, 3.0), st.floats(0.0, 2.0),
)  # fmt: skip
def test_the_budget_is_never_exceeded(
    blocks: list[Block], budget: int, strategy: Any, text: str, factor: float, spread: float
) -> None:
    estimator = Estimator("m", factor=factor, recent=(factor, factor + spread), samples=2)
    p = assemble(
        [*blocks, block(BlockKind.INPUT, "input", text or "?")], strategy=strategy,
        budget=Budget(budget + 64, 64), estimator=estimator, user_name=USER,
        previous_condensed=CondensedHistory(("Marie: hello there friend.",), through_id=10),
    )  # fmt: skip
    assert estimator.count_messages(p.messages) <= budget
    assert p.tokens == estimator.count_messages(p.messages)
    keys = [d.block.key for d in p.decisions]
    assert len(keys) == len(set(keys)) and {b.key for b in blocks} <= set(keys)
    for d in p.decisions:
        if d.block.protected and d.block.key in {b.key for b in blocks}:
            assert d.status in (Status.INCLUDED, Status.CUT)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(blocksets())
def test_raw_total_counts_exactly_what_render_produces(blocks: list[Block]) -> None:
    assert raw_total(blocks, user_name=USER) == raw_messages(render(blocks, user_name=USER))


def test_summarize_passes_over_excluded_messages_and_lets_them_back_in() -> None:
    all_history = history(12)
    person = [(all_history[1], "excluded from the context by a person")]
    kept = [b for b in all_history if b is not all_history[1]]
    full = tokens([*base(), *all_history])
    p = plan([*base(), *kept], Summarize(), full * 2 // 3, excluded=person)
    assert p.condensed is not None and p.condensed.through_id > 2 and p.condensed.omitted == (2,)
    # Included again: it is history, not "already in the condensed history".
    again = plan([*base(), *all_history], Summarize(), 10_000, previous_condensed=p.condensed)
    assert status(again)["history:2"] is Status.INCLUDED
    assert status(again)["history:1"] is Status.CONDENSED
    # When it leaves again it is condensed once, and no longer omitted.
    squeezed = plan([*base(), *all_history], Summarize(), full // 2, previous_condensed=p.condensed)
    assert squeezed.condensed is not None and 2 not in squeezed.condensed.omitted
