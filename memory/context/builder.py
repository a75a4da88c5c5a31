"""Gather a turn's prompt blocks and plan them under the token budget.

The story's part comes from the turn's one read of it (memory.context.story_view), the lore and the
estimator's calibration from the store. The budget is the configured one within the context the
chat server takes, when it says it (memory.backends.context_size). The same plan serves the turn
and the `/context` preview (which writes nothing). After a turn, the backend's token count
calibrates the estimator, and a new condensed history is stored.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from memory.context.budget import Budget, ContextPlan, assemble, within
from memory.context.lore import activate
from memory.context.prompt import (
    Block,
    Character,
    history_blocks,
    input_block,
    lore_blocks,
    memory_blocks,
    persona_blocks,
    story_blocks,
)
from memory.context.story_view import story_context
from memory.context.strategies import (
    CONDENSED_SHARE,
    DEFAULT_STRATEGY,
    VECTOR_KEEP,
    Registry,
    Strategy,
    load_registry,
)
from memory.context.tokens import Estimator, Observation, raw_messages
from memory.context.when import gap_line
from memory.errors import InvalidInput, StoreError
from memory.model import DM_ORIGIN, CondensedHistory, Selected
from memory.store import Store, Tx
from memory.store.queries.story_snapshot import StorySnapshot
from memory.store.tables import lore_entries as lore_store
from memory.store.tables import story_context as stored
from memory.store.tables.history import HistoryMessage
from memory.text import lexical_similarity

log = logging.getLogger(__name__)

# Messages of a story considered for the prompt; the budget decides how many go in.
HISTORY_MESSAGES = 200
# Messages scanned for lore keywords, the current one included.
LORE_DEPTH = 4
# Share of the prompt budget lore may take; the best-ranked entries go first.
LORE_SHARE = 0.25
PREVIEW_INPUT = "…"

ServerContext = Callable[[], Awaitable[int | None]]


@dataclass(frozen=True, slots=True)
class ContextConfig:
    """The context budget's numbers (config section `[context]`)."""

    context_length: int = 8192
    response_tokens: int = 1024
    strategy: str = DEFAULT_STRATEGY
    history_messages: int = HISTORY_MESSAGES
    lore_depth: int = LORE_DEPTH
    lore_share: float = LORE_SHARE
    condensed_share: float = CONDENSED_SHARE
    vector_keep: float = VECTOR_KEEP
    # Token budgets of lore sources (a character card's lorebook), on top of lore_share.
    source_budgets: Mapping[str, int] = field(default_factory=dict)

    @property
    def budget(self) -> Budget:
        return Budget(self.context_length, self.response_tokens)


def _input(user_name: str, text: str, gap: str = "") -> Block:
    if text:
        return input_block(user_name, text, gap=gap)
    return replace(input_block(user_name, PREVIEW_INPUT, gap=gap), label="(your next message)")


def _said_in(
    messages: Sequence[HistoryMessage], window: tuple[float, float] | None
) -> frozenset[int]:
    if window is None:
        return frozenset()
    start, end = window
    return frozenset(m.id for m in messages if start <= m.created_at < end)


class ContextBuilder:
    """Plans prompts for one character and one chat model."""

    def __init__(
        self,
        store: Store,
        *,
        character: Character,
        chat_model: str,
        config: ContextConfig | None = None,
        registry: Registry | None = None,
        clock: Callable[[], float] = time.time,
        server_context: ServerContext | None = None,
    ) -> None:
        self.store = store
        # The context the chat server takes (None: it says none): the budget's cap.
        self.server_context = server_context
        self.character = character
        self.chat_model = chat_model
        self.config = config or ContextConfig()
        self.registry = registry or load_registry()
        self.clock = clock
        self._estimator: Estimator | None = None

    async def estimator(self) -> Estimator:
        """The calibrated estimator of the chat model (loaded once, then kept in step)."""
        if self._estimator is None:
            saved = await stored.calibration(self.store, self.chat_model)
            # Several first turns load it at once: the first loaded wins, so an observation
            # made meanwhile is not replaced by a fresh copy of the saved one.
            if self._estimator is None:
                self._estimator = (
                    Estimator(self.chat_model)
                    if saved is None
                    else Estimator(self.chat_model, *saved)
                )
        return self._estimator

    async def budget(self) -> Budget:
        """The configured budget, within the context the chat server takes when it is known."""
        server = await self.server_context() if self.server_context is not None else None
        return within(self.config.context_length, self.config.response_tokens, server)

    async def strategy_for(self, story_id: int) -> Strategy:
        return self._strategy(story_id, await stored.strategy(self.store, story_id))

    def _strategy(self, story_id: int, chosen: str | None) -> Strategy:
        name = chosen or self.config.strategy
        found = self.registry.strategies.get(name)
        if found is None:
            # A plugin that is no longer installed: the default, said in the log and the preview.
            log.warning(
                "story %d: strategy %r unavailable, %s used", story_id, name, self.config.strategy
            )
            return self.registry.get(self.config.strategy)
        return found

    async def set_strategy(self, story_id: int, name: str) -> str:
        """Choose a story's strategy; InvalidInput names the available ones."""
        strategy = self.registry.strategies.get(name.strip())
        if strategy is None:
            raise InvalidInput(
                f"no context strategy {name.strip()!r} "
                f"(available: {', '.join(self.registry.names())})"
            )
        await self.store.transact(
            lambda tx: stored.set_strategy(tx, story_id, strategy.name, now=self.clock())
        )
        return strategy.name

    async def plan(
        self,
        *,
        user_name: str,
        origin: str,
        text: str,
        selected: Sequence[Selected],
        story: StorySnapshot,
        window: tuple[float, float] | None = None,
    ) -> ContextPlan:
        """Plan the prompt of a message (`text` empty: the preview of the next one) on the
        story as the turn read it; the messages said in `window` ([start, end), the time the
        message names) are the last history to go."""
        estimator = await self.estimator()
        budget = await self.budget()
        messages = story.history
        kept = [m for m in messages if not m.excluded]
        excluded: list[tuple[Block, str]] = [
            (b, "excluded from the context by a person")
            for b in history_blocks([m for m in messages if m.excluded])
        ]
        current = text or PREVIEW_INPUT
        # Similarity to the message: the cosine when the turn had one, else shared words.
        relevance = {
            s.memory.id: lexical_similarity(current, s.memory.text) if s.score is None else s.score
            for s in selected
        }
        lore, over = await self._lore(estimator, budget, origin, current, kept, user_name)
        excluded += over
        now, zone, language = self.clock(), self.character.zone, self.character.language
        silence = gap_line(messages[-1].created_at, now, zone, language) if messages else ""
        blocks = [
            *persona_blocks(self.character, selected, user_name=user_name, now=now),
            *story_blocks(story_context(story)),
            *memory_blocks(selected, relevance, now=now, zone=zone, language=language),
            *lore,
            *history_blocks(kept, zone=zone, language=language),
            _input(user_name, text, silence),
        ]
        c = self.config
        plan = assemble(
            blocks,
            strategy=self._strategy(story.story_id, story.strategy),
            budget=budget,
            estimator=estimator,
            user_name=user_name,
            previous_condensed=story.condensed,
            excluded=excluded,
            condensed_share=c.condensed_share,
            vector_keep=c.vector_keep,
            preferred_history=_said_in(kept, window),
        )
        if budget.context_length < c.context_length:
            note = (
                f"the chat server takes {budget.context_length} tokens of context, fewer than "
                f"context_length ({c.context_length}): the prompt is kept within it"
            )
            plan = replace(plan, notes=(*plan.notes, note))
        return plan

    async def _lore(
        self,
        estimator: Estimator,
        budget: Budget,
        origin: str,
        text: str,
        kept: Sequence[HistoryMessage],
        user_name: str,
    ) -> tuple[list[Block], list[tuple[Block, str]]]:
        """The lore blocks the conversation activates within the lore budgets, and those over."""
        guild = None if origin == DM_ORIGIN else int(origin)
        entries = await lore_store.applicable(self.store, guild)
        if not entries:
            return [], []
        conversation = [text, *(m.content for m in reversed(kept))]
        fired = activate(
            entries, conversation, depth=self.config.lore_depth, character=self.character.name
        )
        cap = int(budget.prompt * self.config.lore_share)
        spent: dict[str, int] = {}
        used = 0
        inside, over = [], []
        blocks = lore_blocks(fired, user_name=user_name, character=self.character.name)
        for b, activation in zip(blocks, fired, strict=True):
            cost = estimator.count(b.text) + 1
            source = activation.entry.source
            source_cap = self.config.source_budgets.get(source)
            if used + cost > cap:
                over.append((b, f"over the lore budget ({cap} tokens)"))
            elif source_cap is not None and spent.get(source, 0) + cost > source_cap:
                over.append((b, f"over its lorebook's budget ({source_cap} tokens)"))
            else:
                inside.append(b)
                used += cost
                spent[source] = spent.get(source, 0) + cost
        return inside, over

    async def after_reply(self, story_id: int, plan: ContextPlan, reported: int | None) -> None:
        """Learn from the backend's token count and keep the new condensed history.

        The count is learned on top of the stored calibration, read in the transaction that
        saves it: every process on the database learns from every other's reports, and none
        overwrites another's."""
        loaded = await self.estimator()
        raw, length = raw_messages(plan.messages), plan.budget.context_length
        condensed = plan.condensed

        async def learn(tx: Tx) -> tuple[Estimator, Observation]:
            if condensed is not None:
                # The erasure lock before the calibration's (set_condensed takes it): waiting
                # for an erasure (PostgreSQL, another process) with the calibration held
                # stalled every process's turns that condense nothing behind this one.
                await tx.serialize("erasure", shared=True)
            saved = await stored.calibration(tx, self.chat_model)
            base = loaded if saved is None else Estimator(self.chat_model, *saved)
            updated, observation = base.observe(raw, reported, context_length=length)
            await self._save(tx, story_id, updated, condensed)
            return updated, observation

        try:
            updated, observation = await self.store.transact(learn)
        except StoreError as exc:
            # Both are derived: the next turn condenses again, the next report recalibrates.
            log.warning("context state of story %d not stored (%s)", story_id, exc)
            assert self._estimator is not None
            updated, observation = self._estimator.observe(raw, reported, context_length=length)
        self._estimator = updated
        if not observation.accepted:  # counted in the estimator, shown by /context
            log.info("token count not learned: %s", observation.reason)

    async def _save(
        self, tx: Tx, story_id: int, estimator: Estimator, condensed: CondensedHistory | None
    ) -> None:
        e = estimator
        value = (e.factor, e.recent, e.samples, e.rejected)
        await stored.save_calibration(tx, e.model, value, now=self.clock())
        if condensed is not None:
            await stored.set_condensed(tx, story_id, condensed, now=self.clock())
