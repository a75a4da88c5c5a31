"""Context strategies: which blocks of a turn's prompt go in when they do not all fit.

Built in: `truncate`, `summarize` (the default), `vector-recall`, `manual`. More plug in through
the `echo.context_strategies` entry-point group: an object (or a class built with no arguments)
with a `name` and an `apply(request) -> StrategyResult`. Whatever a strategy returns, the host
(`budget.assemble`) then enforces the token budget: a strategy can choose, never overspend.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from memory.context.extractive import choose, split_sentences
from memory.context.prompt import (
    CONDENSED_HISTORY_HEADER,
    Block,
    BlockKind,
    as_data,
    block,
    raw_total,
)
from memory.context.tokens import PER_MESSAGE, Estimator
from memory.context.when import without_gap
from memory.model import CondensedHistory

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "echo.context_strategies"
NOTHING_CONDENSED = CondensedHistory()
DEFAULT_STRATEGY = "summarize"

# Share of the prompt budget the condensed history may take (summarize). A larger one crowds out
# the recent messages it is meant to complement.
CONDENSED_SHARE = 0.15
# vector-recall keeps at least this share of the memory and lore blocks, the most relevant,
# before touching history: a long conversation must not push every memory out.
VECTOR_KEEP = 0.5
# Excluded messages remembered under the condensed history's cursor (the most recent ones).
MAX_OMITTED = 1000


class Status(StrEnum):
    INCLUDED = "included"
    EXCLUDED = "excluded"
    CONDENSED = "condensed"
    CUT = "cut"


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What a strategy sees: the candidate blocks (protected ones included), the budget, and the
    story's condensed history so far."""

    blocks: tuple[Block, ...]
    budget: int
    user_name: str
    estimator: Estimator
    previous_condensed: CondensedHistory = NOTHING_CONDENSED
    condensed_share: float = CONDENSED_SHARE
    vector_keep: float = VECTOR_KEEP
    # History message ids a person excluded (their blocks are not in `blocks`).
    excluded_history: frozenset[int] = frozenset()
    # History message ids said in the time the message names ("yesterday"): the last to go.
    preferred_history: frozenset[int] = frozenset()

    def tokens(self, blocks: Iterable[Block]) -> int:
        """The estimated tokens of these blocks rendered as a prompt."""
        raw = raw_total(blocks, user_name=self.user_name)
        return math.ceil(raw * self.estimator.planning_factor)

    def fits(self, blocks: Iterable[Block]) -> bool:
        return self.tokens(blocks) <= self.budget


@dataclass(frozen=True, slots=True)
class StrategyResult:
    """The blocks to keep (new ones allowed, e.g. the condensed history's), why the others
    went, and the condensed history to store when it changed."""

    keep: tuple[Block, ...]
    removed: Mapping[str, tuple[Status, str]] = field(default_factory=dict)
    condensed: CondensedHistory | None = None


@runtime_checkable
class Strategy(Protocol):
    name: str

    def apply(self, request: ContextRequest) -> StrategyResult: ...


def how_many_to_drop(
    request: ContextRequest, keep: Sequence[Block], candidates: Sequence[Block], limit: int
) -> int:
    """The fewest leading `candidates` to drop from `keep` so the rest costs at most `limit`
    (all of them when even that is not enough). Dropping a block never raises the count, so a
    binary search finds it in O(log n) counts instead of one count per block."""

    def fits_without(k: int) -> bool:
        gone = {b.key for b in candidates[:k]}
        return request.tokens(b for b in keep if b.key not in gone) <= limit

    if fits_without(0):
        return 0
    low, high = 1, len(candidates)
    if not fits_without(high):
        return high
    while low < high:
        middle = (low + high) // 2
        if fits_without(middle):
            high = middle
        else:
            low = middle + 1
    return low


def drop_until_fits(
    request: ContextRequest,
    keep: list[Block],
    order: Iterable[Block],
    removed: dict[str, tuple[Status, str]],
    reason: str,
    *,
    reserve: int = 0,
) -> list[Block]:
    """Remove blocks from `keep` in the given order until the rest fits `budget - reserve`;
    return the removed blocks. Protected blocks are skipped."""
    present = {b.key for b in keep}
    candidates = [b for b in order if not b.protected and b.key in present]
    count = how_many_to_drop(request, keep, candidates, request.budget - reserve)
    gone = candidates[:count]
    keys = {b.key for b in gone}
    keep[:] = [b for b in keep if b.key not in keys]
    for b in gone:
        removed[b.key] = (Status.EXCLUDED, reason)
    return gone


def by_priority(blocks: Iterable[Block], preferred: frozenset[int] = frozenset()) -> list[Block]:
    """Unprotected blocks, the first to go first: lowest priority, then the history outside
    `preferred` (message ids) before the history in it, then lowest order."""
    return sorted(
        (b for b in blocks if not b.protected),
        key=lambda b: (b.priority, b.kind is BlockKind.HISTORY and b.order in preferred, b.order),
    )


def oldest_history(blocks: Iterable[Block], preferred: frozenset[int] = frozenset()) -> list[Block]:
    """Unprotected history, the first to go first: the oldest outside `preferred` (message ids),
    then the oldest in it."""
    return sorted(
        (b for b in blocks if b.kind is BlockKind.HISTORY and not b.protected),
        key=lambda b: (b.order in preferred, b.order),
    )


class Truncate:
    """Drop the oldest unprotected history first, then the lowest-priority blocks."""

    name = "truncate"

    def apply(self, request: ContextRequest) -> StrategyResult:
        keep = list(request.blocks)
        removed: dict[str, tuple[Status, str]] = {}
        preferred = request.preferred_history
        drop_until_fits(
            request, keep, oldest_history(keep, preferred), removed, "oldest history first"
        )
        drop_until_fits(
            request, keep, by_priority(keep, preferred), removed, "lowest priority first"
        )
        return StrategyResult(tuple(keep), removed)


class Summarize:
    """Like truncate, but the history that leaves is condensed (its most informative sentences)
    and placed before the current input; the condensed history rolls over the story's life and
    is stored with it."""

    name = "summarize"

    def apply(self, request: ContextRequest) -> StrategyResult:
        previous = request.previous_condensed
        preferred = request.preferred_history
        removed: dict[str, tuple[Status, str]] = {}
        keep = []
        omitted = set(previous.omitted)
        # Condensed already, but said in the time asked about: shown as they were said again
        # when they fit, never condensed twice.
        shown: set[int] = set()
        for b in request.blocks:
            if (
                b.kind is BlockKind.HISTORY
                and b.order <= previous.through_id
                and b.order not in omitted
            ):
                if b.order in preferred:
                    shown.add(b.order)
                    keep.append(b)
                else:
                    removed[b.key] = (Status.CONDENSED, "already in the condensed history")
            else:
                keep.append(b)
        current = condensed_block(previous)
        if request.fits([*keep, *current]):
            return StrategyResult((*keep, *current), removed)
        allowance = int(request.budget * request.condensed_share)
        gone = drop_until_fits(
            request, keep, oldest_history(keep, preferred), {}, "", reserve=allowance
        )
        leaving = [b for b in gone if b.order not in shown]
        for b in gone:
            if b.order in shown:
                removed[b.key] = (Status.CONDENSED, "already in the condensed history")
        condensed = previous
        if leaving:
            sentences = [*previous.sentences]
            sources = [previous.source_of(i) for i in range(len(sentences))]
            for b in leaving:
                said = split_sentences(*_speaker_and_text(b))
                sentences += said
                sources += [b.order] * len(said)
            # The header and the fence around the sentences, in the message they open.
            fence = f"{CONDENSED_HISTORY_HEADER}\n<earlier>\n</earlier>"
            overhead = request.estimator.count(fence) + PER_MESSAGE * 2
            through = max(b.order for b in leaving)
            excluded = {i for i in request.excluded_history if i <= through}
            # Messages of the time asked about, kept while older ones left: under the cursor,
            # not condensed, so they come back as history when no time is asked.
            spared = {
                b.order for b in keep if b.kind is BlockKind.HISTORY and b.order <= through
            } - shown
            skipped = (excluded | omitted | spared) - {b.order for b in leaving}
            kept = choose(
                sentences, limit=max(0, allowance - overhead), count=request.estimator.count
            )
            condensed = CondensedHistory(
                tuple(sentences[i] for i in kept),
                through_id=through,
                omitted=tuple(sorted(skipped)[-MAX_OMITTED:]),
                sources=tuple(sources[i] for i in kept),
            )
            for b in leaving:
                removed[b.key] = (Status.CONDENSED, "condensed into the history before your input")
        keep += condensed_block(condensed)
        for b in drop_until_fits(
            request, keep, by_priority(keep, preferred), removed, "lowest priority first"
        ):
            if b.order in shown and b.kind is BlockKind.HISTORY:
                removed[b.key] = (Status.CONDENSED, "already in the condensed history")
        return StrategyResult(tuple(keep), removed, condensed if leaving else None)


def _speaker_and_text(b: Block) -> tuple[str, str]:
    speaker = b.label.rsplit(" #", 1)[0]
    prefix = f"{speaker}: "
    text = without_gap(b.text)
    return speaker, text.removeprefix(prefix) if b.role == "user" else text


def condensed_block(condensed: CondensedHistory) -> list[Block]:
    if not condensed.sentences:
        return []
    return [
        block(
            BlockKind.CONDENSED_HISTORY,
            "condensed-history",
            as_data(condensed.text),
            label=f"{len(condensed.sentences)} sentences, through #{condensed.through_id}",
        )
    ]


class VectorRecall:
    """Keep what matters to the current message: drop the memory and lore blocks least similar
    to it first (keeping the most relevant share), then the oldest history, then the rest."""

    name = "vector-recall"

    def apply(self, request: ContextRequest) -> StrategyResult:
        keep = list(request.blocks)
        removed: dict[str, tuple[Status, str]] = {}
        scorable = sorted(
            (b for b in keep if b.kind in (BlockKind.MEMORY, BlockKind.LORE) and not b.protected),
            key=lambda b: (b.relevance if b.relevance is not None else -1.0, b.order),
        )
        spare = len(scorable) - math.ceil(len(scorable) * request.vector_keep)
        reason = "least similar to your message"
        drop_until_fits(request, keep, scorable[:spare], removed, reason)
        preferred = request.preferred_history
        drop_until_fits(
            request,
            keep,
            oldest_history(keep, preferred),
            removed,
            "oldest history, after the least relevant memories and lore",
        )
        drop_until_fits(request, keep, scorable, removed, reason)
        drop_until_fits(
            request, keep, by_priority(keep, preferred), removed, "lowest priority first"
        )
        return StrategyResult(tuple(keep), removed)


class Manual:
    """Nothing automatic: only the messages people excluded stay out. When the rest still does
    not fit, the host's budget cuts the oldest history and the preview says so."""

    name = "manual"

    def apply(self, request: ContextRequest) -> StrategyResult:
        return StrategyResult(request.blocks)


BUILT_IN: tuple[Callable[[], Strategy], ...] = (Truncate, Summarize, VectorRecall, Manual)


@dataclass(frozen=True, slots=True)
class Registry:
    """The strategies available, and why any plugin could not be loaded."""

    strategies: Mapping[str, Strategy]
    errors: tuple[str, ...] = ()

    def names(self) -> list[str]:
        return sorted(self.strategies)

    def get(self, name: str) -> Strategy:
        try:
            return self.strategies[name]
        except KeyError:
            raise ValueError(
                f"no context strategy {name!r} (available: {', '.join(self.names())})"
            ) from None


def load_registry(group: str = ENTRY_POINT_GROUP) -> Registry:
    """The built-in strategies plus those registered in the entry-point group."""
    found: dict[str, Strategy] = {}
    for factory in BUILT_IN:
        strategy = factory()
        found[strategy.name] = strategy
    errors: list[str] = []
    for point in entry_points(group=group):
        try:
            loaded = point.load()
            strategy = loaded() if isinstance(loaded, type) else loaded
        except Exception as exc:  # a broken plugin must not stop the bot
            errors.append(f"{point.name}: cannot be loaded ({type(exc).__name__}: {exc})")
            continue
        name = getattr(strategy, "name", None)
        if not isinstance(strategy, Strategy) or not isinstance(name, str) or not name:
            errors.append(f"{point.name}: has no `name` and `apply(request)`")
        elif name in found:
            errors.append(f"{point.name}: the name {name!r} is already taken")
        else:
            found[name] = strategy
    for error in errors:
        log.warning("context strategy plugin %s", error)
    return Registry(found, tuple(errors))
