"""A turn's recall for one engine: which of the person's memories it uses, and what it keeps to
answer that fast. The caches are the engine's: each person's candidate pool per story and place
(rebuilt or patched as their memories change), their vectors (memory.recall.semantic), and what
calibration says of the embedding model per language."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import tzinfo

from memory import lexicon
from memory.backends.chat import Embedder
from memory.bulk import quiet
from memory.cache import (
    ENTRY_BYTES,
    POOL_BYTES,
    POOL_BYTES_PER_MEMORY,
    CacheBudget,
    SizedCache,
)
from memory.errors import StoreError
from memory.lexicon import dates
from memory.recall import conversation, lexical, scoring, selection
from memory.recall.semantic import VectorCache
from memory.store import Store
from memory.store.queries.story_snapshot import StorySnapshot
from memory.store.tables import memories, memory_dates, privacy, turns
from memory.text import words
from memory.turn.values import MemoryConfig, Recall
from memory.vectors import calibrate

log = logging.getLogger(__name__)

# Warmed at start-up: the (person, story, place) of the most recent turns of the last week, at
# most this many (the caches' bound in bytes may keep fewer: the first warmed go first).
WARM_PLACES = 64
WARM_DAYS = 7.0
# Seconds the embedding model's verdict per language is kept before it is read again: a
# calibration saved by another process (`echo calibrate` beside a running bot) reaches the
# turns within this, for one small read a minute.
UNFIT_TTL = 60.0


def _pool_bytes(entry: tuple[int, selection.RankedPool, bool]) -> int:
    pool = entry[1]
    return ENTRY_BYTES + POOL_BYTES + POOL_BYTES_PER_MEMORY * (len(pool.ordered) + len(pool.rules))


class Recaller:
    """Selects a person's memories for a message. `config` and `clock` are read at each use:
    the engine's, which may be replaced while it runs."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None,
        caches: CacheBudget,
        config: Callable[[], MemoryConfig],
        clock: Callable[[], float],
        zone: tzinfo | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.clock = clock
        # The time zone a message's times are read in ("yesterday"; None: the machine's).
        self.zone = zone
        self.vectors = VectorCache(store, budget=caches)
        # (user, story, origin) -> (generation, pool, whether the person's memories are
        # served everywhere): a change of their choice bumps the generation too.
        self._pools: SizedCache[tuple[int, int, str], tuple[int, selection.RankedPool, bool]] = (
            SizedCache(caches, _pool_bytes)
        )
        self._unfit: tuple[float, frozenset[str]] | None = None  # (read at, languages)
        self._warmed = False

    async def pool(
        self, user_id: int, story_id: int, origin: str
    ) -> tuple[selection.RankedPool, bool]:
        """The user's candidates here in rank order, and whether their memories are served
        everywhere: patched with the memories that changed since it was built (a forgotten one
        leaves it before the next turn), rebuilt only when the changes are no longer known (a
        change of the person's privacy choice names no memory: it rebuilds). The person's
        generation is read from the database first (one indexed read): another process's
        commit rebuilds it too, and the vector matrix checked after it in the turn."""
        generation = await self.store.sync_generation(user_id)
        key = (user_id, story_id, origin)
        cached = self._pools.peek(key)
        if cached is not None and cached[0] == generation:
            self._pools.get(key)  # just used
            return cached[1], cached[2]
        changed = None if cached is None else self.store.changed_since(user_id, cached[0])
        if cached is not None and changed is not None:
            everywhere = cached[2]
            current = await memories.visible_among(
                self.store, user_id, story_id, origin, changed, everywhere=everywhere
            )
            # O(N) copies: 30+ ms at 100k memories, off the loop like the build below.
            pool = (
                await asyncio.to_thread(quiet(cached[1].patched), changed, current)
                if changed
                else cached[1]
            )
        else:
            choice = await privacy.memories_served(self.store, user_id)
            everywhere = (choice or self.config().memories_served) == privacy.EVERYWHERE
            visible = await memories.visible(
                self.store, user_id, story_id, origin, counters=False, everywhere=everywhere
            )
            # A sort of every candidate (seconds at 100k memories): in a worker thread, so the
            # event loop serves everyone else meanwhile.
            pool = await asyncio.to_thread(quiet(selection.RankedPool.build), visible)
        # Another turn may have stored a newer pool while this one awaited the database.
        newer = self._pools.peek(key)
        if newer is not None and newer[0] > generation:
            return pool, everywhere
        self._pools.put(key, (generation, pool, everywhere))
        return pool, everywhere

    async def warm_up(self, *, places: int = WARM_PLACES, days: float = WARM_DAYS) -> int:
        """Build the pools and load the matrices of the most recently active people, one after
        another (start-up): their first turn finds them ready. Return the places warmed (0
        once done: the background started again at each login try finds the caches kept)."""
        if self._warmed:
            return 0
        try:
            recent = await turns.recent_places(
                self.store, since=self.clock() - days * 86_400, limit=places
            )
            for user_id, story_id, origin in recent:
                await self.pool(user_id, story_id, origin)
                if self.embedder is not None:
                    await self.vectors.matrix(user_id, self.embedder.model)
        except StoreError as exc:
            log.warning("caches not warmed at start-up: %s", exc)
            return 0
        self._warmed = True
        log.info("caches warmed for %d recent places", len(recent))
        return len(recent)

    def earlier(self, user_id: int, story: StorySnapshot) -> tuple[str, ...]:
        """The person's own messages just before this one (the conversation query's text);
        none when nothing would score them."""
        if self.embedder is None or self.config().conversation_slots <= 0:
            return ()
        return conversation.recent_messages(story.conversation, user_id)

    async def _unfit_for(self, text: str) -> bool:
        """Tell whether calibration found the embedding model unfit for the message's language."""
        if self.embedder is None:
            return False
        now = self.clock()
        if self._unfit is None or not 0 <= now - self._unfit[0] < UNFIT_TTL:
            self._unfit = (now, await calibrate.unfit_languages(self.store, self.embedder.model))
        language = lexicon.detect_language(words(text))
        return language is not None and language in self._unfit[1]

    async def recall(
        self,
        *,
        user_id: int,
        story_id: int,
        origin: str,
        text: str,
        record: bool = True,
        earlier: Sequence[str] = (),
        exchange_id: str = "",
        without: frozenset[int] = frozenset(),
    ) -> Recall:
        """Select this user's memories for a message, record the turn, move the counters.

        `earlier`: the person's own messages just before this one, oldest first; they recall
        by meaning too, as a second, weaker query (memory.recall.conversation). `exchange_id`: the
        message's, when it is stored; the turn is not recorded if it is erased meanwhile.
        `without`: memory ids this recall leaves out (rules too), as if they did not exist."""
        config = self.config()
        candidates, everywhere = await self.pool(user_id, story_id, origin)
        if without:
            candidates = candidates.patched(without, ())
        keywords = await lexical.keyword_recall(
            self.store,
            user_id=user_id,
            story_id=story_id,
            origin=origin,
            text=text,
            everywhere=everywhere,
        )
        scored = scoring.Scored(None, None, config.threshold)
        if self.embedder is not None and text.strip():
            scored = await scoring.score(
                self.vectors,
                self.embedder,
                config,
                user_id=user_id,
                story_id=story_id,
                candidates=candidates,
                text=text,
                earlier=earlier,
                unfit=lambda: self._unfit_for(text),
            )
        now = self.clock()
        zone = self.zone or dates.machine_zone(now)
        found = dates.window(text, now, zone)
        asked = (found.start, found.end) if found else None
        coming = dates.ahead(text, now, zone)
        dated = (
            await memory_dates.meeting(self.store, user_id, coming.span.first, coming.span.last)
            if coming is not None
            else None
        )
        chosen = selection.select(
            candidates,
            scored.scores,
            keywords=keywords.hits,
            decisive=keywords.decisive,
            limit=config.limit,
            threshold=scored.threshold,
            semantic_slots=config.semantic_slots,
            spare=scored.spare,
            quotas=config.quotas,
            conversation=scored.heard,
            conversation_slots=config.conversation_slots,
            window=asked,
            dated=dated,
            asked=coming.words if coming is not None else "",
        )
        degraded, why_degraded = bool(scored.degraded), scored.degraded
        if not record:
            return Recall(0, tuple(chosen), degraded, why_degraded, asked)
        try:
            turn_id = await turns.record(
                self.store,
                turns.TurnRecord(user_id, story_id, origin),
                chosen,
                degraded=degraded,
                now=self.clock(),
                exchange_id=exchange_id,
            )
        except StoreError as exc:
            # Counters and /why miss this turn; the reply does not wait for the database.
            log.warning("turn not recorded (%s)", exc)
            turn_id = 0
        return Recall(turn_id, tuple(chosen), degraded, why_degraded, asked)
