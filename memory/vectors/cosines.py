"""Several queries scored against one user's matrix in a single pass over it.

A turn scores two queries: the message, and the recent conversation (memory.recall.conversation).
Two matrix-vector products read the whole matrix twice, and at 100k 768-d rows (300 MB, ten
times this machine's L3 cache) each read costs what the product does: 11 ms here. Scoring the
matrix in blocks of CHUNK_BYTES, every query on a block while it is still in the cache, reads it
once: 100k x 768, 22 -> 15 ms; 100k x 384, 12 -> 9 ms (numpy's OpenBLAS on 2 cores,
`python -m bench.cosines`). A matrix that fits in the cache is scored by plain products. One
product of the matrix with a two-column matrix was slower than either (13-28 ms): OpenBLAS's gemm
does not pay at 2 columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.recall.selection import eligibility_cutoff

# A block of rows this large stays in cache while every query reads it.
CHUNK_BYTES = 4 << 20
# A matrix this small stays in cache (this machine's L3) from one product to the next: read in
# blocks, 10k x 384 took 0.40 ms against 0.28 for two products.
BLOCKS_FROM = 32 << 20


@dataclass(frozen=True, slots=True)
class Query:
    """A query vector as the embedder answered it, and its eligibility rule
    (semantic.VectorCache.scores)."""

    vector: Sequence[float]
    floor: float = -1.0
    relative_sd: float | None = None
    places: int = 0


def similarities(
    rows: npt.NDArray[np.float32],
    units: Sequence[npt.NDArray[np.float32]],
    *,
    block_bytes: int = CHUNK_BYTES,
    blocks_from: int = BLOCKS_FROM,
) -> npt.NDArray[np.float32]:
    """The cosines of every row with every unit query: shape (len(units), len(rows))."""
    out = np.empty((len(units), rows.shape[0]), np.float32)
    # Rows and queries are finite (semantic.py leaves out any other), so a floating-point flag
    # raised here is the BLAS kernel's own: OpenBLAS on this machine raised "invalid value
    # encountered in matmul" once for a 54 x 5 product of finite numbers (not reproducible).
    with np.errstate(all="ignore"):
        if len(units) == 1 or rows.nbytes < blocks_from:
            for k, unit in enumerate(units):
                np.matmul(rows, unit, out=out[k])
            return out
        step = max(1, block_bytes // max(1, rows.shape[1] * rows.itemsize))
        for start in range(0, rows.shape[0], step):
            block = rows[start : start + step]
            for k, unit in enumerate(units):
                np.matmul(block, unit, out=out[k, start : start + step])
    return out


def eligible(
    ids: npt.NDArray[np.int64],
    rows: npt.NDArray[np.float32],
    queries: Sequence[Query],
    units: Sequence[npt.NDArray[np.float32]],
    **blocks: int,
) -> list[tuple[dict[int, float], float]]:
    """For each query (`units`: its vector of norm 1), its eligible memories' cosines by id
    and the cutoff it used (`blocks`: `similarities`' sizes)."""
    sims = similarities(rows, units, **blocks)
    out = []
    for query, row in zip(queries, sims, strict=True):
        cutoff = query.floor
        if query.relative_sd is not None and row.size > 1:
            cutoff = eligibility_cutoff(
                row, floor=query.floor, relative_sd=query.relative_sd, places=query.places
            )
        keep = np.flatnonzero(row >= cutoff)
        out.append((dict(zip(ids[keep].tolist(), row[keep].tolist(), strict=True)), cutoff))
    return out
