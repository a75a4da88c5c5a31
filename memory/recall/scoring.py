"""What the embedding model says of a turn: the message's eligible cosines, the recent
conversation's, and how many places recall holds.

The message and the person's messages just before it are embedded in one request
(memory.recall.conversation) and scored against the same matrix in one pass over it
(memory.vectors.cosines). Recall lets the message's cosine top 24 take the rank fallback's places
when every candidate has a vector (selection.spare_places): those places wait for a memory written
a moment ago, and none waits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from memory.backends.chat import Embedder
from memory.bulk import quiet
from memory.errors import BackendResponseError
from memory.recall import conversation, selection
from memory.recall.semantic import VectorCache
from memory.store.tables import timings
from memory.turn.values import MemoryConfig
from memory.vectors.cosines import Query

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Scored:
    """A turn's cosines: the message's eligible ones (None: none, keywords carry the turn), the
    recent conversation's (None: no conversation), the cutoff, the places past recall's that
    the cosine top may take (selection.spare_places), and why the turn is degraded ("" if not)."""

    scores: dict[int, float] | None
    heard: dict[int, float] | None
    threshold: float
    spare: int = 0
    degraded: str = ""


async def score(
    vectors: VectorCache,
    embedder: Embedder,
    config: MemoryConfig,
    *,
    user_id: int,
    story_id: int,
    candidates: selection.RankedPool,
    text: str,
    earlier: Sequence[str],
    unfit: Callable[[], Awaitable[bool]],
) -> Scored:
    """Embed the message (and the conversation before it) and score the user's memories."""
    said = conversation.query_text(earlier, text) if config.conversation_slots > 0 else ""
    embedded = await conversation.embed_with_conversation(
        embedder, text, said, timeout=config.turn_embedding_timeout
    )
    if embedded is None:
        log.warning("degraded turn: user %d, story %d", user_id, story_id)
        return Scored(None, None, config.threshold, degraded=timings.EMBEDDING)
    if await unfit():
        # The model cannot rank this language: keyword recall carries the turn.
        return Scored(None, None, config.threshold)
    query, heard_query = embedded
    relative = config.relative_sd
    floor = config.threshold if relative is None else config.cosine_floor
    model = embedder.model
    try:
        matrix = await vectors.ready(user_id, model)
        # Up to 1.2 ms at 100k memories (np.isin, when the matrix is not the pool): off the loop.
        every = matrix is not None and await asyncio.to_thread(
            quiet(candidates.all_among), matrix.ids
        )
        spare = selection.spare_places(
            config.limit, config.semantic_slots, every_memory_scored=every
        )
        places = selection.recall_places(config.limit, config.semantic_slots) + spare
        asks = [Query(query, floor, relative, places)]
        if heard_query is not None and config.conversation_slots > 0:
            # The weaker query: only what it points at far above the rest, never lowered.
            asks.append(Query(heard_query, config.cosine_floor, conversation.CONVERSATION_SD))
        found = await vectors.scores_of(user_id, model, asks)
        scores, threshold = (None, floor) if found is None else found[0]
        heard = found[1][0] if found is not None and len(found) > 1 else None
    except BackendResponseError as exc:
        # The query cannot be scored against the stored vectors (another dimension).
        log.warning("degraded turn: user %d, story %d (%s)", user_id, story_id, type(exc).__name__)
        return Scored(None, None, config.threshold, degraded=timings.VECTORS)
    return Scored(scores, heard, threshold, spare)
