"""The host side of context assembly: run the story's strategy, then enforce the token budget.

The budget is a hard limit on the estimate: after any strategy, built in or plugged in, the
lowest-priority unprotected blocks go until the prompt fits, and if the protected blocks alone
(persona, rules, the input) do not fit, they are cut short. A strategy that raises, drops a
protected block, or invents one is overruled, and the plan says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memory.context.prompt import Block, BlockKind, render
from memory.context.strategies import (
    CONDENSED_SHARE,
    NOTHING_CONDENSED,
    VECTOR_KEEP,
    ContextRequest,
    Status,
    Strategy,
    StrategyResult,
    Truncate,
    by_priority,
    drop_until_fits,
)
from memory.context.tokens import Estimator
from memory.errors import unexpected
from memory.model import CondensedHistory

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Budget:
    """The model's context length, and the part of it kept for the reply."""

    context_length: int
    response_tokens: int

    def __post_init__(self) -> None:
        if not 0 < self.response_tokens < self.context_length:
            raise ValueError("the response space must be positive and below the context length")

    @property
    def prompt(self) -> int:
        return self.context_length - self.response_tokens


def within(context_length: int, response_tokens: int, server: int | None) -> Budget:
    """The budget of the configured numbers within the server's context (None: unknown): the
    smaller context, and the reply's room at most half of it when the server's is the smaller
    (a configured 1,024 for the reply would leave nothing of a 512-token context)."""
    if server is None or server >= context_length:
        return Budget(context_length, response_tokens)
    return Budget(server, max(1, min(response_tokens, server // 2)))


@dataclass(frozen=True, slots=True)
class Decision:
    """What happened to one block, why, and its own token estimate."""

    block: Block
    status: Status
    reason: str
    tokens: int


@dataclass(frozen=True, slots=True)
class ContextPlan:
    """The prompt of a turn and how it was chosen: what /context shows."""

    strategy: str
    estimator: Estimator
    budget: Budget
    decisions: tuple[Decision, ...]
    messages: tuple[dict[str, str], ...]
    tokens: int
    condensed: CondensedHistory | None = None  # the new condensed history, to store
    notes: tuple[str, ...] = ()

    def with_status(self, *statuses: Status) -> list[Decision]:
        return [d for d in self.decisions if d.status in statuses]


def assemble(
    blocks: Sequence[Block],
    *,
    strategy: Strategy,
    budget: Budget,
    estimator: Estimator,
    user_name: str,
    previous_condensed: CondensedHistory = NOTHING_CONDENSED,
    excluded: Sequence[tuple[Block, str]] = (),
    condensed_share: float = CONDENSED_SHARE,
    vector_keep: float = VECTOR_KEEP,
    preferred_history: frozenset[int] = frozenset(),
) -> ContextPlan:
    """Choose the blocks of a prompt with `strategy` and return the plan within the budget.

    `excluded` blocks (a person excluded them, or they are over the lore budget) never reach
    the strategy; they appear in the plan with their reason. `preferred_history` (message ids,
    those said in the time the message names) is the last history to go.
    """
    excluded_history = frozenset(b.order for b, _ in excluded if b.kind is BlockKind.HISTORY)
    request = ContextRequest(
        tuple(blocks),
        budget.prompt,
        user_name,
        estimator,
        previous_condensed,
        condensed_share,
        vector_keep,
        excluded_history,
        preferred_history,
    )
    notes: list[str] = []
    try:
        result = strategy.apply(request)
        if not isinstance(result, StrategyResult):
            raise TypeError(f"returned {type(result).__name__}, not a StrategyResult")
    except Exception as exc:
        log.warning("context strategy %s failed: %s; truncate used", strategy.name, unexpected(exc))
        notes.append(f"strategy {strategy.name!r} failed ({type(exc).__name__}); truncate used")
        result = Truncate().apply(request)
    keep, removed = _overrule(request, result, notes)
    given = {b.key for b in request.blocks}
    candidates = [*request.blocks, *(b for b in keep if b.key not in given)]
    host = f"over the budget after {strategy.name}"
    drop_until_fits(request, keep, by_priority(keep, preferred_history), removed, host)
    cuts = _cut_protected(request, keep) if not request.fits(keep) else {}
    messages = render(keep, user_name=user_name)
    tokens = estimator.count_messages(messages)
    if tokens > budget.prompt:  # impossible unless render and raw_total disagree
        raise AssertionError(f"prompt of {tokens} tokens over a budget of {budget.prompt}")
    return ContextPlan(
        strategy.name,
        estimator,
        budget,
        _decisions(candidates, keep, removed, cuts, excluded, estimator),
        tuple(messages),
        tokens,
        result.condensed,
        tuple(notes),
    )


def _overrule(
    request: ContextRequest, result: StrategyResult, notes: list[str]
) -> tuple[list[Block], dict[str, tuple[Status, str]]]:
    """The strategy's choice, minus what it may not do: drop a protected block or add one."""
    given = {b.key: b for b in request.blocks}
    keep: dict[str, Block] = {}
    for b in result.keep:
        if b.key in keep:
            continue
        if b.key not in given and b.protected:
            notes.append(f"the strategy added a protected block {b.key!r}: unprotected")
            b = replace(b, protected=False)
        keep[b.key] = b
    for b in request.blocks:
        if b.protected and b.key not in keep:
            notes.append(f"the strategy dropped the protected block {b.key!r}: restored")
            keep[b.key] = b
    removed = {k: v for k, v in result.removed.items() if k in given and k not in keep}
    for key in given.keys() - keep.keys() - removed.keys():
        removed[key] = (Status.EXCLUDED, "left out by the strategy")
    order = {key: i for i, key in enumerate(given)}
    ordered = sorted(keep.values(), key=lambda b: order.get(b.key, len(order)))
    return ordered, removed


def _cut_protected(request: ContextRequest, keep: list[Block]) -> dict[str, str]:
    """Shorten the protected blocks, longest first, to the longest prefix that fits."""
    cuts: dict[str, str] = {}
    for b in sorted((b for b in keep if b.protected), key=lambda b: -len(b.text)):
        if request.fits(keep):
            break
        index = keep.index(b)
        low, high = 0, len(b.text)
        while low < high:  # the longest prefix that fits
            middle = (low + high + 1) // 2
            keep[index] = replace(b, text=b.text[:middle].rstrip("\n"))
            if request.fits(keep):
                low = middle
            else:
                high = middle - 1
        keep[index] = replace(b, text=b.text[:low].rstrip("\n"))
        cuts[b.key] = f"cut to {low} of {len(b.text)} characters to fit the budget"
    return cuts


def _decisions(
    candidates: Sequence[Block],
    keep: list[Block],
    removed: dict[str, tuple[Status, str]],
    cuts: dict[str, str],
    excluded: Sequence[tuple[Block, str]],
    estimator: Estimator,
) -> tuple[Decision, ...]:
    out = []
    kept = {b.key: b for b in keep}
    seen = set()
    for b in candidates:
        if b.key in seen:
            continue
        seen.add(b.key)
        if b.key in cuts:
            out.append(Decision(kept[b.key], Status.CUT, cuts[b.key], estimator.count(b.text)))
        elif b.key in kept:
            out.append(Decision(b, Status.INCLUDED, "", estimator.count(b.text) + 1))
        else:
            status, reason = removed[b.key]
            out.append(Decision(b, status, reason, estimator.count(b.text) + 1))
    out += [Decision(b, Status.EXCLUDED, r, estimator.count(b.text) + 1) for b, r in excluded]
    return tuple(out)
