"""Orchestration of a turn and of what follows it. No Discord types: ids and text only."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memory.llm import Embedder
from memory.model import Kind, Selected
from memory.read import selection
from memory.read.semantic import TURN_EMBEDDING_TIMEOUT, VectorCache, embed_query
from memory.store import memories, turns
from memory.store.db import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The read path's numbers (defaults from the spec's measurements; see selection.py)."""

    limit: int = selection.DEFAULT_LIMIT
    semantic_slots: int = selection.SEMANTIC_SLOTS
    threshold: float = selection.COSINE_THRESHOLD
    quotas: Mapping[Kind, int] = field(default_factory=lambda: dict(selection.DEFAULT_QUOTAS))
    turn_embedding_timeout: float = TURN_EMBEDDING_TIMEOUT


@dataclass(frozen=True, slots=True)
class Recall:
    """The memories one turn uses, why, and whether the turn ran without semantic scores."""

    turn_id: int
    selected: tuple[Selected, ...]
    degraded: bool


class Engine:
    """The memory engine of one character: recall before the reply, reflection after it."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None,
        config: MemoryConfig | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config or MemoryConfig()
        self.clock = clock
        self.vectors = VectorCache(store)

    async def recall(self, *, user_id: int, story_id: int, origin: str, text: str) -> Recall:
        """Select this user's memories for a message, record the turn, move the counters."""
        candidates = await memories.visible(self.store, user_id, story_id, origin)
        scores: dict[int, float] | None = None
        degraded = False
        if self.embedder is not None and text.strip():
            query = await embed_query(
                self.embedder, text, timeout=self.config.turn_embedding_timeout
            )
            if query is None:
                degraded = True
                log.warning("degraded turn: user %d, story %d", user_id, story_id)
            else:
                scores = await self.vectors.scores(
                    user_id, self.embedder.model, query, floor=self.config.threshold
                )
        chosen = selection.select(
            candidates,
            scores,
            limit=self.config.limit,
            threshold=self.config.threshold,
            semantic_slots=self.config.semantic_slots,
            quotas=self.config.quotas,
        )
        turn_id = await turns.record(
            self.store,
            turns.TurnRecord(user_id, story_id, origin),
            chosen,
            degraded=degraded,
            now=self.clock(),
        )
        return Recall(turn_id, tuple(chosen), degraded)
