"""Cosine scores of a user's memories against the message, from one float32 matrix per user.

The matrix is built from the embeddings table once and cached until that user's memories or
vectors change (the store's per-user generation). A turn costs one matrix-vector product.
The query is the message text alone, after the model's own task prefix if it has one
(prefixes.py): the spec measured that the story's title and scene added to the query destroy
recall (the scene dominates the vector and pulls every query to the same point).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.errors import BackendResponseError, EchoError
from memory.llm import Embedder
from memory.read.prefixes import prefixes_of
from memory.store.db import Store

log = logging.getLogger(__name__)

# The turn embeds its own query only: one attempt, 5 s, the whole wait bounded (spec: a sleeping
# embedding server once cost the first turn two 120 s attempts; healthy latency is 0.2-0.8 s).
TURN_EMBEDDING_TIMEOUT = 5.0

# Eligible for recall by meaning: at least this many standard deviations above the mean of the
# query's scores over the user's memories. On all-MiniLM-L6-v2 the relevant memories rank first
# but score low, so a fixed 0.32 served 45% / 42% / 38% of them at 234 / 1k / 10k memories
# (English, bench/results/recall.md) and this relative threshold 88% / 82% / 47%.
RELATIVE_SD = 1.5
# The absolute floor under the relative threshold (configurable).
COSINE_FLOOR = 0.10

# Users whose vector matrix stays in memory (least recently used evicted).
MATRIX_CACHE_SIZE = 64

# Characters of the message that are embedded.
MAX_QUERY_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class UserMatrix:
    """One user's vectors for one model: ids and unit-normalised rows."""

    generation: int
    model: str
    ids: npt.NDArray[np.int64]
    rows: npt.NDArray[np.float32]


class VectorCache:
    """Per-user matrices, rebuilt when the store says that user's data changed.

    A turn never waits for a rebuild once a matrix exists: it scores with the previous one while
    a background task loads the new one. That is safe: a forgotten memory's score is ignored (it
    is no longer a candidate) and a new memory has no vector before the indexer runs anyway.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._matrices: OrderedDict[int, UserMatrix] = OrderedDict()
        self._refreshing: dict[int, asyncio.Task[UserMatrix]] = {}

    async def matrix(self, user_id: int, model: str, *, wait: bool = False) -> UserMatrix:
        """Return the user's vectors for `model`: the cached matrix (refreshed in the background
        when stale), or a fresh one when there is none or `wait` is true."""
        generation = self.store.generation(user_id)
        cached = self._matrices.get(user_id)
        if cached is not None and cached.model == model:
            self._matrices.move_to_end(user_id)
            if cached.generation == generation:
                return cached
            if not wait:
                self._refresh(user_id, model)
                return cached
        return await self._load(user_id, model)

    def _refresh(self, user_id: int, model: str) -> None:
        if user_id in self._refreshing:
            return
        task = asyncio.create_task(self._load(user_id, model))
        self._refreshing[user_id] = task
        task.add_done_callback(lambda t: self._refreshed(user_id, t))

    def _refreshed(self, user_id: int, task: asyncio.Task[UserMatrix]) -> None:
        self._refreshing.pop(user_id, None)
        if not task.cancelled() and task.exception() is not None:
            log.warning("vector matrix refresh failed: %r", task.exception())

    async def _load(self, user_id: int, model: str) -> UserMatrix:
        generation = self.store.generation(user_id)
        rows = await self.store.fetchall(
            "SELECT e.memory_id, e.dim, e.vector FROM embeddings e"
            " JOIN memories m ON m.id = e.memory_id WHERE m.user_id = ? AND e.model = ?"
            " ORDER BY e.memory_id",
            (user_id, model),
        )
        built = _build(generation, model, [(int(r[0]), int(r[1]), bytes(r[2])) for r in rows])
        self._matrices[user_id] = built
        if len(self._matrices) > MATRIX_CACHE_SIZE:
            self._matrices.popitem(last=False)
        return built

    async def scores(
        self,
        user_id: int,
        model: str,
        query: Sequence[float],
        *,
        floor: float = -1.0,
        relative_sd: float | None = None,
    ) -> tuple[dict[int, float], float]:
        """Return the cosines of the user's memories with `query` that are eligible, and the
        cutoff used: `floor`, or (relative) the mean of this query's scores plus `relative_sd`
        standard deviations when that is higher."""
        matrix = await self.matrix(user_id, model)
        q = _query_vector(query, model)
        if matrix.ids.size and q.shape[0] != matrix.rows.shape[1]:
            # The model behind the name changed (re-pulled, or another server): no score is
            # meaningful until the indexer re-embeds. Raised so the turn is counted as degraded.
            raise BackendResponseError(
                f"{model} answered {q.shape[0]} dimensions, its stored vectors have "
                f"{matrix.rows.shape[1]}"
            )
        norm = float(np.linalg.norm(q))
        if not matrix.ids.size or norm == 0.0:
            return {}, floor
        sims = matrix.rows @ (q / norm)
        cutoff = floor
        if relative_sd is not None and sims.size > 1:
            cutoff = max(floor, float(sims.mean() + relative_sd * sims.std()))
        keep = np.flatnonzero(sims >= cutoff)
        return dict(zip(matrix.ids[keep].tolist(), sims[keep].tolist(), strict=True)), cutoff


def _query_vector(query: Sequence[float], model: str) -> npt.NDArray[np.float32]:
    """The query as float32, or BackendResponseError when it is not a finite flat vector."""
    try:
        with np.errstate(over="ignore"):  # an overflow is reported just below, as infinity
            q = np.asarray(query, dtype=np.float32)
    except (TypeError, ValueError, OverflowError):
        raise BackendResponseError(f"{model} answered a query vector of numbers") from None
    if q.ndim != 1 or not q.size or not np.isfinite(q).all():
        raise BackendResponseError(f"{model} answered a query vector that float32 cannot hold")
    return q


def _build(generation: int, model: str, rows: list[tuple[int, int, bytes]]) -> UserMatrix:
    if not rows:
        return UserMatrix(generation, model, np.empty(0, np.int64), np.empty((0, 0), np.float32))
    # Same model name, different dimensions (a re-pulled model): keep the commonest one.
    dim = Counter(d for _, d, _ in rows).most_common(1)[0][0]
    kept = [(i, blob) for i, d, blob in rows if d == dim]
    ids = np.fromiter((i for i, _ in kept), dtype=np.int64, count=len(kept))
    matrix = np.frombuffer(b"".join(blob for _, blob in kept), dtype=np.float32)
    matrix = matrix.reshape(len(kept), dim)
    # A vector stored before embeddings were checked may hold infinity: it would turn every
    # statistic of the query's scores into NaN. Left out until the indexer replaces it.
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        log.warning("%d stored vectors of %s are not finite: left out", int((~finite).sum()), model)
        ids, matrix = ids[finite], matrix[finite]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return UserMatrix(generation, model, ids, (matrix / norms).astype(np.float32))


async def embed_query(
    embedder: Embedder, text: str, *, timeout: float = TURN_EMBEDDING_TIMEOUT
) -> list[float] | None:
    """Embed the message for this turn, after the model's query prefix: one attempt, `timeout`
    for everything; None on failure."""
    query = text.strip()[:MAX_QUERY_CHARS]
    if not query:
        return None
    query = prefixes_of(embedder).query + query
    try:
        # wait_for bounds the whole operation, including the lock the indexer may hold for
        # minutes; the deadline given to the client only bounds the HTTP request.
        vectors = await asyncio.wait_for(embedder.embed([query], deadline=timeout), timeout)
    except TimeoutError:
        log.warning("turn embedding timed out after %.1f s: degraded turn", timeout)
        return None
    except EchoError as exc:
        log.warning("turn embedding failed (%s): degraded turn", type(exc).__name__)
        return None
    return vectors[0]
