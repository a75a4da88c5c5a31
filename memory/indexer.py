"""Background re-indexing: embed memories whose text or model changed since their vector.

A vector is current when its stored hash equals sha256(model + the text embedded), the text
embedded being the memory after the model's document prefix (prefixes.py). The job embeds only
the stale ones, in batches, and writes a vector back only if its memory still exists with the
same text: a memory forgotten (or reworded) while its batch was in flight is never resurrected.
Changing the embedding model or its document prefix makes every hash stale, so everything is
re-embedded. Each write moves the user's store generation: the next turn's matrix fetches the
new vectors (semantic.py).
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from memory.errors import BackendError
from memory.llm import Embedder
from memory.read.prefixes import prefixes_of
from memory.store.db import Store, Tx

log = logging.getLogger(__name__)

# As on the original deployment: the background loop passes every 45 s.
REINDEX_INTERVAL = 45.0
BATCH_SIZE = 32
BATCH_DEADLINE = 120.0


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


@dataclass(frozen=True, slots=True)
class _Stale:
    memory_id: int
    user_id: int
    text: str
    text_hash: str


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

    async def stale(self) -> list[_Stale]:
        """Return the memories whose vector is missing or out of date."""
        model, prefix = self.embedder.model, prefixes_of(self.embedder).document
        rows = await self.store.fetchall(
            "SELECT m.id, m.user_id, m.text, m.content_hash, e.content_hash AS vector_hash"
            " FROM memories m LEFT JOIN embeddings e ON e.memory_id = m.id ORDER BY m.id"
        )
        return [
            _Stale(int(r["id"]), int(r["user_id"]), str(r["text"]), str(r["content_hash"]))
            for r in rows
            if r["vector_hash"] != vector_hash(model, str(r["text"]), prefix)
        ]

    async def run_once(self) -> int:
        """Embed every stale memory, batch by batch; return how many vectors were written.

        One pass at a time: a call while a pass runs waits for it, then finds what is still
        stale (nothing is embedded twice by two passes at once)."""
        async with self._lock:
            return await self._pass()

    async def _pass(self) -> int:
        written = 0
        try:
            todo = await self.stale()
            self._pending = len(todo)
            for start in range(0, len(todo), self.batch_size):
                batch = todo[start : start + self.batch_size]
                prefix = prefixes_of(self.embedder).document
                vectors = await self.embedder.embed(
                    [prefix + s.text for s in batch], deadline=BATCH_DEADLINE
                )
                written += await self.store.transact(
                    functools.partial(self._write, batch=batch, vectors=vectors)
                )
                self._pending = max(0, len(todo) - start - len(batch))
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

    async def _write(self, tx: Tx, *, batch: list[_Stale], vectors: list[list[float]]) -> int:
        model, prefix = self.embedder.model, prefixes_of(self.embedder).document
        written = 0
        for stale, vector in zip(batch, vectors, strict=True):
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            await tx.execute(
                "INSERT INTO embeddings (memory_id, model, content_hash, dim, vector)"
                " SELECT ?, ?, ?, ?, ? WHERE EXISTS"
                " (SELECT 1 FROM memories WHERE id = ? AND content_hash = ?)"
                " ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model,"
                " content_hash = excluded.content_hash, dim = excluded.dim,"
                " vector = excluded.vector",
                (
                    stale.memory_id, model, vector_hash(model, stale.text, prefix), len(vector),
                    blob,
                    stale.memory_id, stale.text_hash,
                ),
            )  # fmt: skip
            changed = await tx.changes()
            written += changed
            if changed:
                tx.touch(stale.user_id, vectors_only=True)
        return written


def start_scheduler(indexer: Indexer, *, interval: float = REINDEX_INTERVAL) -> AsyncIOScheduler:
    """Start the re-indexing job in the running event loop; the caller shuts it down."""
    scheduler = AsyncIOScheduler()
    scheduler.add_job(
        indexer.run_once,
        "interval",
        seconds=interval,
        id="reindex",
        max_instances=1,
        coalesce=True,
        # A sleeping laptop or a long batch must not make runs pile up or be skipped silently.
        misfire_grace_time=int(max(60, interval * 10)),
        next_run_time=datetime.datetime.now(datetime.UTC),  # a first pass at start-up
    )
    scheduler.start()
    return scheduler
