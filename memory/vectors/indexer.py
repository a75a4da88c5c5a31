"""Background re-indexing: embed memories whose text or model changed since their vector.

A vector is current when its stored hash equals sha256(model + the text embedded), the text
embedded being the memory after the model's document prefix (prefixes.py). The transactions
that write a memory mark it as needing a vector (store/tables/embeddings.py), so a pass reads
only the marked ones (an idle pass costs one empty query, whatever the number of memories); when the
model or its document prefix changes, the next pass checks every memory once, page by page,
hashing in a worker thread, and marks the stale ones. The job embeds the marked ones in
batches and writes a vector back only if its memory still exists with the same text: a memory
forgotten (or reworded) while its batch was in flight is never resurrected. Each write moves
the user's store generation: the next turn's matrix fetches the new vectors (semantic.py).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from memory.backends.chat import Embedder
from memory.errors import BackendError
from memory.store import Store, Tx
from memory.store.tables import embeddings
from memory.vectors.prefixes import prefixes_of

log = logging.getLogger(__name__)

# As on the original deployment: the background loop passes every 45 s (memory.jobs).
REINDEX_INTERVAL = 45.0
BATCH_SIZE = 32
BATCH_DEADLINE = 120.0
# Marked memories read per query; memories per page when every one is checked.
DUE_PAGE = 256
CHECK_PAGE = 5_000


def vector_hash(model: str, text: str, prefix: str = "") -> str:
    """Return the hash that says whether a vector is current for this model and the text
    embedded (`prefix` + `text`; without a prefix, the hash of every vector stored before)."""
    return hashlib.sha256(f"{model}\n{prefix}{text}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class IndexerStatus:
    """What the bot shows of the indexer."""

    pending: int
    last_run: float | None
    last_error: str | None
    embedded_total: int


class Indexer:
    """Keeps the embeddings table in step with the memories table."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        batch_size: int = BATCH_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.batch_size = batch_size
        self.clock = clock
        self._last_run: float | None = None
        self._last_error: str | None = None
        self._embedded_total = 0
        self._pending = 0
        self._lock = asyncio.Lock()

    def status(self) -> IndexerStatus:
        return IndexerStatus(self._pending, self._last_run, self._last_error, self._embedded_total)

    async def run_once(self) -> int:
        """Embed every stale memory, batch by batch; return how many vectors were written.

        One pass at a time: a call while a pass runs waits for it, then finds what is still
        stale (nothing is embedded twice by two passes at once). Processes sharing a
        PostgreSQL database take turns too: a pass while another process runs one does nothing
        (that process embeds what is due)."""
        async with self._lock, self.store.exclusive("indexer") as ours:
            if not ours:
                log.debug("re-indexing left to the process running it now")
                return 0
            return await self._pass()

    async def _pass(self) -> int:
        written = 0
        try:
            await self._check_all_if_needed()
            self._pending = await embeddings.due_count(self.store)
            after = 0
            while page := await embeddings.due_after(self.store, after, DUE_PAGE):
                after = page[-1].memory_id
                written += await self._embed(page)
                self._pending = max(0, self._pending - len(page))
            self._last_error = None
        except BackendError as exc:
            self._last_error = f"{type(exc).__name__}: {exc}"
            log.warning("re-indexing stopped: %s", self._last_error)
        finally:
            self._last_run = self.clock()
            self._embedded_total += written
        if written:
            log.info("re-indexing embedded %d memories", written)
        return written

    async def _embed(self, page: list[embeddings.Due]) -> int:
        """Embed the marked memories of `page` whose vector is not current; clear the others."""
        model, prefix = self.embedder.model, prefixes_of(self.embedder).document
        stale: list[embeddings.Due] = []
        current: list[embeddings.Due] = []
        for due in page:
            fresh = due.vector_hash == vector_hash(model, due.text, prefix)
            (current if fresh else stale).append(due)
        if current:
            done = [(d.memory_id, d.text_hash) for d in current]
            await self.store.transact(lambda tx: embeddings.clear_due(tx, done))
        written = 0
        for start in range(0, len(stale), self.batch_size):
            batch = stale[start : start + self.batch_size]
            embedded = await self.embedder.embed(
                [prefix + d.text for d in batch], deadline=BATCH_DEADLINE
            )
            written += await self.store.transact(
                functools.partial(self._write, batch=batch, embedded=embedded)
            )
        return written

    async def _check_all_if_needed(self) -> None:
        """Check every memory once when the model or document prefix differs from the one they
        were last checked against: mark those whose vector is not current."""
        model, prefix = self.embedder.model, prefixes_of(self.embedder).document
        if await embeddings.checked_against(self.store) == (model, prefix):
            return
        after, marked = 0, 0
        while page := await embeddings.memories_after(self.store, after, CHECK_PAGE):
            after = page[-1][0]
            # sha256 of every text of the page: in a worker thread, off the event loop.
            stale = await asyncio.to_thread(_stale_ids, page, model, prefix)
            if stale:
                await self.store.transact(functools.partial(embeddings.mark_due, memory_ids=stale))
                marked += len(stale)
        now = self.clock()
        await self.store.transact(lambda tx: embeddings.set_checked(tx, model, prefix, now=now))
        log.info("every memory checked against %s: %d need a vector", model, marked)

    async def _write(
        self, tx: Tx, *, batch: list[embeddings.Due], embedded: list[list[float]]
    ) -> int:
        model, prefix = self.embedder.model, prefixes_of(self.embedder).document
        written = 0
        for due, vector in zip(batch, embedded, strict=True):
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            digest = vector_hash(model, due.text, prefix)
            if await embeddings.write(
                tx, due, model=model, vector_hash=digest, dim=len(vector), blob=blob
            ):
                written += 1
                tx.touch(due.user_id, [due.memory_id], vectors_only=True)
        return written


def _stale_ids(page: list[tuple[int, str, str | None]], model: str, prefix: str) -> list[int]:
    return [i for i, text, have in page if have != vector_hash(model, text, prefix)]
