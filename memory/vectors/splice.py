"""A user's vector matrix patched in place of a full sort: the rows kept and the fresh ones,
each in its sorted place, copied once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def spliced(
    ids: npt.NDArray[np.int64],
    rows: npt.NDArray[np.float32],
    keep: npt.NDArray[np.bool_],
    fresh_ids: npt.NDArray[np.int64],
    fresh_rows: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The kept rows (`ids` ascending) with the fresh ones in their sorted places, in one copy
    made of slices between the changes. A sort of the whole concatenation (a gather of 300 MB
    at 100k memories of 768 floats) took 0.85-3.2 s on two shared cores: the wait of the turn
    after a /forget (make bench-loop)."""
    order = np.argsort(fresh_ids, kind="stable")
    fresh_ids, fresh_rows = fresh_ids[order], fresh_rows[order]
    # (position among the cached rows, 0: insert a fresh row before it / 1: skip it, which)
    inserts = np.searchsorted(ids, fresh_ids, side="right").tolist()
    changes = sorted(
        [(p, 0, k) for k, p in enumerate(inserts)]
        + [(p, 1, 0) for p in np.flatnonzero(~keep).tolist()]
    )
    size = int(keep.sum()) + len(fresh_ids)
    out_ids = np.empty(size, dtype=np.int64)
    out_rows = np.empty((size, rows.shape[1]), dtype=np.float32)
    read = written = 0
    for position, skip, k in changes:
        run = position - read
        out_ids[written : written + run] = ids[read:position]
        out_rows[written : written + run] = rows[read:position]
        written, read = written + run, position
        if skip:
            read += 1
        else:
            out_ids[written], out_rows[written] = fresh_ids[k], fresh_rows[k]
            written += 1
    out_ids[written:] = ids[read:]
    out_rows[written:] = rows[read:]
    return out_ids, out_rows
