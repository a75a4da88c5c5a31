"""What the operator's page shows: each page's figures, read from the store, never written.

The page is the operator's, not a person's: it reads everyone's memories. The front end (bot.web)
decides who may open it (a token); these functions only read.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from memory.errors import NotFound
from memory.manage import story as manage_story
from memory.manage import versions
from memory.manage.story import Positions
from memory.model import Memory, Turn
from memory.store import Store
from memory.store.queries import dashboard, erasure
from memory.store.queries.dashboard import (
    Answered,
    LanguageFit,
    Latency,
    MemoryFilter,
    OutboxState,
    PersonRow,
    RecallSplit,
    ReflectionDay,
    Revision,
    StateChange,
    StoryRow,
    TokenFit,
    TurnDay,
)
from memory.store.queries.moderation import HeldAnchor
from memory.store.tables import characters as cast_store
from memory.store.tables import counters, history, privacy, story_context
from memory.store.tables.timings import DAY, TIMINGS_DAYS, TurnPlan
from memory.vectors.indexer import IndexerStatus
from memory.write import state

__all__ = [
    "DAY",
    "Answered",
    "LanguageFit",
    "Latency",
    "MemoryFilter",
    "OutboxState",
    "PersonRow",
    "RecallSplit",
    "ReflectionDay",
    "Revision",
    "StateChange",
    "StoryRow",
    "TokenFit",
    "TurnDay",
    "TurnPlan",
]

# The overview's default range, and the longest one timings are kept for.
DEFAULT_DAYS = 14
MAX_DAYS = TIMINGS_DAYS
# Rows on one page: people, a person's memories, never-served memories, turns, stories.
PAGE_ROWS = 100
TURNS_SHOWN = 30
STORIES_SHOWN = 100
HISTORY_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Overview:
    since: float
    until: float
    turn_days: list[TurnDay]
    # Reply latency percentiles per day, and over the whole range under "" (none: no turn).
    latencies: dict[str, Latency]
    reflection_days: list[ReflectionDay]
    outbox: OutboxState
    # The running indexer's own status, or None when the page runs apart from the bot.
    indexer: IndexerStatus | None
    vectors_missing: int
    language_fits: list[LanguageFit]
    token_fits: list[TokenFit]
    erasures_pending: int
    # All-time counters: reflections given up (by why), rejected candidates (by reason).
    reflection_drops: dict[str, int]
    reflection_failures: dict[str, int]


async def overview(
    store: Store,
    *,
    days: int = DEFAULT_DAYS,
    indexer: IndexerStatus | None = None,
    now: float | None = None,
) -> Overview:
    """The whole bot over the last `days` days (UTC), from the start of the first one."""
    until = time.time() if now is None else now
    days = max(1, min(MAX_DAYS, days))
    since = (until // DAY - (days - 1)) * DAY
    named = await counters.read_all(store)
    turn_days, latencies = await dashboard.turn_timings(store, since)
    return Overview(
        since=since,
        until=until,
        turn_days=turn_days,
        latencies={x.day: x for x in latencies},
        reflection_days=await dashboard.reflection_days(store, since),
        outbox=await dashboard.outbox_state(store),
        indexer=indexer,
        vectors_missing=await dashboard.vectors_missing(store),
        language_fits=await dashboard.language_fits(store),
        token_fits=await dashboard.token_fits(store),
        erasures_pending=len(await erasure.pending(store)),
        reflection_drops=_prefixed(named, "reflection_dropped_"),
        reflection_failures=_prefixed(named, "reflection_failed:"),
    )


def _prefixed(named: dict[str, int], prefix: str) -> dict[str, int]:
    return {k.removeprefix(prefix): v for k, v in named.items() if k.startswith(prefix)}


@dataclass(frozen=True, slots=True)
class Health:
    origin: str | None
    origins: list[tuple[str, int]]
    ratio_bins: list[int]
    split: RecallSplit
    never_served: list[Memory]
    reasons: dict[str, int]


async def health(store: Store, *, origin: str | None = None) -> Health:
    """The memories' counters, for one place (a server id, or 'dm') or for everyone."""
    bins, split = await dashboard.served_ratios(store, origin)
    return Health(
        origin=origin,
        origins=await dashboard.origins(store),
        ratio_bins=bins,
        split=split,
        never_served=await dashboard.never_served(store, origin, limit=PAGE_ROWS),
        reasons=await dashboard.reasons_served(store),
    )


async def people(store: Store, *, page: int = 0) -> tuple[list[PersonRow], int]:
    """One page of people, one row each, the latest turn first; and how many there are. Each
    row names the character of each of their ids (the home's key where the id is theirs)."""
    found, total = await dashboard.people(store, limit=PAGE_ROWS, offset=page * PAGE_ROWS)
    home = await cast_store.recorded_home(store)
    return [replace(p, ids=tuple((i, key or home) for i, key in p.ids)) for p in found], total


@dataclass(frozen=True, slots=True)
class Known:
    """A person as the page names them: the name they last wrote under (None: no message
    kept, an imported person or one whose messages went), and the id they are known by (their
    own, whichever character's id they were found under)."""

    name: str | None
    person: int


async def known(store: Store, user_ids: Collection[int]) -> dict[int, Known]:
    """How the page names each of these ids' person."""
    names = await dashboard.names(store, user_ids)
    owners = await dashboard.owners(store, user_ids)
    return {u: Known(names.get(u), owners.get(u, u)) for u in set(user_ids)}


async def speakers(store: Store, story_ids: Collection[int]) -> dict[int, list[int]]:
    """The people with a message kept in each of these stories, by id."""
    return await dashboard.speakers(store, story_ids)


async def in_terminal(store: Store, user_ids: Collection[int]) -> set[int]:
    """Which of these ids (each character's) are of people who talk in the terminal chat: what
    such a person said in a DM, they said there (a terminal id is never a Discord one)."""
    owners = await dashboard.owners(store, user_ids)
    people = {owners.get(u, u) for u in user_ids}
    talking = {p for p in people if await dashboard.own_story(store, p)}
    return {u for u in user_ids if owners.get(u, u) in talking}


@dataclass(frozen=True, slots=True)
class Person:
    user_id: int
    name: str | None
    # Their /privacy choice ('where_learned', 'everywhere'), None: the operator's default.
    served: str | None
    memories: list[Memory]
    matching: int
    chosen: MemoryFilter


async def person(store: Store, user_id: int, chosen: MemoryFilter) -> Person:
    """One person's memories, filtered, ordered and paged as chosen."""
    found, matching = await dashboard.person_memories(store, user_id, chosen)
    return Person(
        user_id=user_id,
        name=await dashboard.person_name(store, user_id),
        served=await privacy.memories_served(store, user_id),
        memories=found,
        matching=matching,
        chosen=chosen,
    )


@dataclass(frozen=True, slots=True)
class RecentTurn:
    turn: Turn
    origin: str
    plan: TurnPlan | None
    answered: Answered | None = None


async def recent_turns(store: Store, *, user_id: int | None = None) -> list[RecentTurn]:
    """The last turns recorded, newest first, each with its selection and context plan."""
    found = await dashboard.recent_turns(store, limit=TURNS_SHOWN, user_id=user_id)
    planned = await dashboard.plans(store, [t.id for t, _, _ in found])
    return [RecentTurn(t, origin, planned.get(t.id), answered) for t, origin, answered in found]


async def stories(store: Store) -> list[StoryRow]:
    return await dashboard.stories(store, limit=STORIES_SHOWN)


@dataclass(frozen=True, slots=True)
class StoryPage:
    story_id: int
    summary: str
    revisions: list[Revision]
    anchors: list[HeldAnchor]
    positions: Positions
    state: dict[str, float]
    state_changes: list[StateChange]
    strategy: str | None
    condensed: tuple[str, ...] = field(default_factory=tuple)


async def story(store: Store, story_id: int) -> StoryPage:
    """A story's summary, anchors, positions and state, each with its recent history."""
    condensed = await story_context.condensed(store, story_id)
    return StoryPage(
        story_id=story_id,
        summary=await history.summary(store, story_id),
        revisions=await dashboard.revisions(store, story_id, limit=HISTORY_SHOWN),
        anchors=await manage_story.anchors(store, story_id),
        positions=await manage_story.positions(store, story_id),
        state=await state.for_story(store, story_id),
        state_changes=await dashboard.state_changes(store, story_id, limit=HISTORY_SHOWN),
        strategy=await story_context.strategy(store, story_id),
        condensed=tuple(condensed.sentences),
    )


async def memory(store: Store, user_id: int, memory_id: int) -> versions.Chain | None:
    """One person's memory with its earlier versions; None when they have no such memory."""
    try:
        return await versions.history(store, user_id, memory_id)
    except NotFound:
        return None
