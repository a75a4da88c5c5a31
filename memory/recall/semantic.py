"""Cosine scores of a user's memories against the message, from one float32 matrix per user.

The matrix is built from the embeddings table once, then kept in step with it: when the store
says that user's memories or vectors changed (its per-user generation), the next turn reads the
vector hashes (no vectors) and fetches only the rows whose hash changed. A memory the indexer
has just embedded is scored by the very next turn. A turn reads the matrix once.
Decoding, building, patching and scoring run in worker threads: the event loop is everyone's.
A turn waits for an update of at most WAIT_ROWS vectors; a larger one (a first turn at 100k
memories) goes on in the background and the turn is served without cosines, counted.
The query is the message text alone, after the model's own task prefix if it has one
(prefixes.py): measured on the original deployment, the story's title and scene added to the
query destroy recall (the scene dominates the vector and pulls every query to the same point).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.bulk import paused, quiet
from memory.cache import ENTRY_BYTES, HASH_BYTES, MATRIX_BYTES, CacheBudget, SizedCache
from memory.errors import BackendResponseError, unexpected
from memory.store import Store
from memory.store.db import Row
from memory.store.generations import UNKNOWN
from memory.store.tables import embeddings
from memory.vectors import cosines
from memory.vectors.cosines import Query
from memory.vectors.splice import spliced

log = logging.getLogger(__name__)

# The turn embeds its own query only: one attempt, 5 s, the whole wait bounded (a sleeping
# embedding server once cost the first turn two 120 s attempts; healthy latency is 0.2-0.8 s).
TURN_EMBEDDING_TIMEOUT = 5.0

# Eligible for recall by meaning: at least this many standard deviations above the mean of the
# query's scores over the user's memories. On all-MiniLM-L6-v2 the relevant memories rank first
# but score low, so a fixed 0.32 served 45% / 42% / 38% of them at 234 / 1k / 10k memories
# (English, bench/results/recall.md) and this relative threshold 88% / 82% / 47%.
RELATIVE_SD = 1.5
# The absolute floor under the relative threshold (configurable).
COSINE_FLOOR = 0.10

# Characters of the message that are embedded.
MAX_QUERY_CHARS = 2_000

# Vectors fetched per query when patching a matrix (under SQLite's 32,766 variables).
FETCH_CHUNK = 500

# A turn waits for its matrix only when the update fetches at most this many vectors (a patch
# after the indexer's batch, a small first load): 5,000 768-d vectors load in ~0.1 s here
# (bench/results/loop.md). A larger load (a first turn at 100k memories: seconds) runs in the
# background while the turn is served by keywords and the deterministic passes, counted.
WAIT_ROWS = 5_000


@dataclass(frozen=True, slots=True)
class UserMatrix:
    """One user's vectors for one model: ids and unit-normalised rows, and the hash of every
    stored vector read (rows left out of the matrix too), to tell what changed since."""

    generation: int
    model: str
    ids: npt.NDArray[np.int64]
    rows: npt.NDArray[np.float32]
    hashes: Mapping[int, str]

    @property
    def nbytes(self) -> int:
        """About what it holds in memory (memory.cache)."""
        held = int(self.ids.nbytes + self.rows.nbytes) + HASH_BYTES * len(self.hashes)
        return ENTRY_BYTES + MATRIX_BYTES + held


@dataclass(frozen=True, slots=True)
class VectorStatus:
    """What /stats shows of the matrices: turns served before theirs was loaded."""

    turns_before_vectors: int


@dataclass(slots=True)
class _Update:
    task: asyncio.Task[UserMatrix]
    # How many vectors the update fetches, known once it has read the hashes.
    rows: asyncio.Future[int]


class VectorCache:
    """Per-user matrices, brought up to date by the first turn after the user's data changed.

    Current as of the store's last known generation of the user: a caller that must see other
    processes' commits calls `Store.sync_generation` first (the engine does, once per turn).

    Concurrent turns of one user share one update (each waits for it, none cancels it). The
    bulk work (decoding rows, building, patching, scoring) runs in worker threads: a matrix of
    100k 768-d vectors is 300 MB, and the event loop serves everyone else meanwhile.
    """

    def __init__(
        self, store: Store, *, wait_rows: int = WAIT_ROWS, budget: CacheBudget | None = None
    ) -> None:
        self.store = store
        self.wait_rows = wait_rows
        self.turns_before_vectors = 0
        # Bounded in bytes with the engine's other per-person caches (memory.cache).
        self._matrices: SizedCache[int, UserMatrix] = SizedCache(
            budget or CacheBudget(), lambda m: m.nbytes
        )
        self._updating: dict[tuple[int, str, int], _Update] = {}

    def status(self) -> VectorStatus:
        return VectorStatus(self.turns_before_vectors)

    async def matrix(self, user_id: int, model: str) -> UserMatrix:
        """Return the user's vectors for `model` as the store holds them now."""
        cached = self._fresh(user_id, model)
        if cached is not None:
            return cached
        # A turn cancelled at its deadline leaves the update running for the next one.
        return await asyncio.shield(self._update_for(user_id, model).task)

    async def ready(self, user_id: int, model: str) -> UserMatrix | None:
        """The user's vectors as the store holds them now, or None while a load too large to
        wait for (over `wait_rows` vectors) runs in the background."""
        cached = self._fresh(user_id, model)
        if cached is not None:
            return cached
        update = self._update_for(user_id, model)
        if await asyncio.shield(update.rows) > self.wait_rows:
            return None
        return await asyncio.shield(update.task)

    def _fresh(self, user_id: int, model: str) -> UserMatrix | None:
        cached = self._matrices.peek(user_id)
        current = self.store.generation(user_id)
        if cached is not None and cached.model == model and cached.generation == current:
            self._matrices.get(user_id)  # just used
            return cached
        return None

    def _update_for(self, user_id: int, model: str) -> _Update:
        generation = self.store.generation(user_id)
        key = (user_id, model, generation)
        update = self._updating.get(key)
        if update is None:
            rows: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            cached = self._matrices.peek(user_id)
            task = asyncio.create_task(self._update(user_id, model, generation, cached, rows))
            update = self._updating[key] = _Update(task, rows)
            task.add_done_callback(lambda t: self._updated(key, t, rows))
        return update

    def _updated(
        self, key: tuple[int, str, int], task: asyncio.Task[UserMatrix], rows: asyncio.Future[int]
    ) -> None:
        self._updating.pop(key, None)
        failure = None if task.cancelled() else task.exception()
        if not rows.done():  # failed before it knew its size: the waiting turns see the failure
            if failure is None:
                rows.cancel()
            else:
                rows.set_exception(failure)
            # Retrieved here so an update nobody waits for leaves no "never retrieved" warning.
            rows.add_done_callback(lambda f: f.cancelled() or f.exception())
        if failure is not None:
            log.warning("vector matrix update failed: %s", unexpected(failure))

    async def _update(
        self,
        user_id: int,
        model: str,
        generation: int,
        cached: UserMatrix | None,
        size: asyncio.Future[int],
    ) -> UserMatrix:
        base = cached if cached is not None and cached.model == model else None
        if base is not None:
            patched = await self._patch_changed(user_id, model, generation, base, size)
            if patched is not None:
                return self._keep(user_id, model, generation, patched)
        with paused():  # 100,000 rows tracked by the collector: as memories.visible
            listed = await embeddings.hashes_of(self.store, user_id, model)
        hashes, changed = await asyncio.to_thread(quiet(_changes), listed, base)
        if not size.done():
            size.set_result(len(hashes) if changed is None else len(changed))
        if changed is None:
            rows = await self._fetch(user_id, model, None)
            built = await asyncio.to_thread(quiet(_build), generation, model, rows, hashes)
        else:
            assert base is not None
            fetched = await self._fetch(user_id, model, changed) if changed else []
            patched = await asyncio.to_thread(quiet(_patch), base, generation, fetched, hashes)
            if patched is None:
                rows = await self._fetch(user_id, model, None)
                patched = await asyncio.to_thread(quiet(_build), generation, model, rows, hashes)
            built = patched
        return self._keep(user_id, model, generation, built)

    async def _patch_changed(
        self,
        user_id: int,
        model: str,
        generation: int,
        base: UserMatrix,
        size: asyncio.Future[int],
    ) -> UserMatrix | None:
        """`base` patched with the memories the store says changed since it was built (their
        text or vector): the person's other vectors are not read again. None when the store
        no longer knows what changed (the full comparison of hashes decides then)."""
        changed = self.store.embedded_since(user_id, base.generation)
        if changed is None:
            return None
        size.set_result(len(changed))
        fetched = await self._fetch(user_id, model, sorted(changed)) if changed else []
        hashes, fresh = await asyncio.to_thread(quiet(_hashes_after), base, changed, fetched)
        return await asyncio.to_thread(quiet(_patch), base, generation, fresh, hashes)

    def _keep(self, user_id: int, model: str, generation: int, built: UserMatrix) -> UserMatrix:
        # Another update may have stored a newer matrix while this one read the database. One
        # built while the person's generation was not known here is served, not kept.
        newer = self._matrices.peek(user_id)
        if generation == UNKNOWN:
            return built
        if newer is None or newer.model != model or newer.generation <= generation:
            self._matrices.put(user_id, built)
        return built

    async def _fetch(
        self, user_id: int, model: str, ids: list[int] | None
    ) -> list[tuple[int, str, int, bytes]]:
        """The user's stored vectors for `model`: all of them, or those of `ids`."""
        chunks: list[list[int]] | list[None] = (
            [None]
            if ids is None
            else [ids[i : i + FETCH_CHUNK] for i in range(0, len(ids), FETCH_CHUNK)]
        )
        out = []
        for chunk in chunks:
            with paused():  # 100,000 rows tracked by the collector: as memories.visible
                rows = await embeddings.vectors_of(self.store, user_id, model, chunk)
            out += await asyncio.to_thread(quiet(_vector_rows), rows)
        return out

    async def scores(
        self,
        user_id: int,
        model: str,
        query: Sequence[float],
        *,
        floor: float = -1.0,
        relative_sd: float | None = None,
        places: int = 0,
    ) -> tuple[dict[int, float] | None, float]:
        """Return the cosines of the user's memories with `query` that are eligible, and the
        cutoff used: `floor`, or (relative) the mean of this query's scores plus `relative_sd`
        standard deviations when that is higher, lowered to the `places`-th best score so that
        nothing the model ranks among the recall places is cut (selection.eligibility_cutoff).
        None instead of the cosines while the user's matrix loads in the background (see
        `ready`): counted in `turns_before_vectors`."""
        found = await self.scores_of(user_id, model, [Query(query, floor, relative_sd, places)])
        return (None, floor) if found is None else found[0]

    async def scores_of(
        self, user_id: int, model: str, queries: Sequence[Query]
    ) -> list[tuple[dict[int, float], float]] | None:
        """`scores` of several queries against the same matrix, read once (memory.vectors.cosines);
        None while the user's matrix loads in the background, counted once."""
        matrix = await self.ready(user_id, model)
        if matrix is None:
            self.turns_before_vectors += 1
            log.info("user %d served before their vectors were loaded", user_id)
            return None
        asked = [_query_vector(q.vector, model) for q in queries]
        for q in asked:
            if matrix.ids.size and q.shape[0] != matrix.rows.shape[1]:
                # The model behind the name changed (re-pulled, or another server): no score is
                # meaningful until the indexer re-embeds. Raised: the turn is counted degraded.
                raise BackendResponseError(
                    f"{model} answered {q.shape[0]} dimensions, its stored vectors have "
                    f"{matrix.rows.shape[1]}"
                )
        norms = [float(np.linalg.norm(q)) for q in asked]
        scored = [i for i, norm in enumerate(norms) if matrix.ids.size and norm != 0.0]
        out: list[tuple[dict[int, float], float]] = [({}, q.floor) for q in queries]
        if scored:
            # One pass over the whole matrix (15+ ms at 100k 768-d rows): off the loop.
            found = await asyncio.to_thread(
                cosines.eligible,
                matrix.ids,
                matrix.rows,
                [queries[i] for i in scored],
                [asked[i] / norms[i] for i in scored],
            )
            for i, result in zip(scored, found, strict=True):
                out[i] = result
        return out


def _changes(
    listed: Sequence[Row], base: UserMatrix | None
) -> tuple[dict[int, str], list[int] | None]:
    """The stored hashes, and the ids whose vector differs from `base` (None: no base)."""
    hashes = {int(r[0]): str(r[1]) for r in listed}
    if base is None:
        return hashes, None
    return hashes, [i for i, h in hashes.items() if base.hashes.get(i) != h]


def _hashes_after(
    base: UserMatrix, changed: frozenset[int], fetched: list[tuple[int, str, int, bytes]]
) -> tuple[dict[int, str], list[tuple[int, str, int, bytes]]]:
    """Every stored hash once `changed` is applied to `base` (a changed memory without a vector
    now is gone), and the fetched vectors that differ from the ones `base` holds."""
    hashes = {i: h for i, h in base.hashes.items() if i not in changed}
    hashes |= {i: h for i, h, _, _ in fetched}
    return hashes, [row for row in fetched if base.hashes.get(row[0]) != row[1]]


def _vector_rows(rows: Sequence[Row]) -> list[tuple[int, str, int, bytes]]:
    return [(int(r[0]), str(r[1]), int(r[2]), bytes(r[3])) for r in rows]


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


def _build(
    generation: int, model: str, rows: list[tuple[int, str, int, bytes]], hashes: Mapping[int, str]
) -> UserMatrix:
    """A matrix from every stored vector of the user (`hashes`: what was read at the start)."""
    known = dict(hashes) | {i: h for i, h, _, _ in rows}
    if not rows:
        empty = np.empty((0, 0), np.float32)
        return UserMatrix(generation, model, np.empty(0, np.int64), empty, known)
    rows = sorted(rows)
    # Same model name, different dimensions (a re-pulled model): keep the commonest one.
    dim = Counter(d for _, _, d, _ in rows).most_common(1)[0][0]
    kept = [(i, blob) for i, _, d, blob in rows if d == dim]
    ids, matrix = _unit_rows(kept, dim, model)
    return UserMatrix(generation, model, ids, matrix, known)


def _patch(
    cached: UserMatrix,
    generation: int,
    fetched: list[tuple[int, str, int, bytes]],
    hashes: Mapping[int, str],
) -> UserMatrix | None:
    """`cached` with the vectors that changed replaced, added or dropped; None when a fetched
    vector has another dimension (a full build decides which dimension stays)."""
    dim = cached.rows.shape[1] if cached.ids.size else None
    if dim is None or any(d != dim for _, _, d, _ in fetched):
        return None
    fresh_ids, fresh_rows = _unit_rows([(i, blob) for i, _, _, blob in fetched], dim, cached.model)
    changed = {i for i, h in hashes.items() if cached.hashes.get(i) != h}
    keep = np.fromiter(
        (i in hashes and i not in changed for i in cached.ids.tolist()),
        dtype=bool,
        count=cached.ids.size,
    )
    ids, rows = spliced(cached.ids, cached.rows, keep, fresh_ids, fresh_rows)
    known = dict(hashes) | {i: h for i, h, _, _ in fetched}
    return UserMatrix(generation, cached.model, ids, rows, known)


def _unit_rows(
    kept: list[tuple[int, bytes]], dim: int, model: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
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
    return ids, (matrix / norms).astype(np.float32)
