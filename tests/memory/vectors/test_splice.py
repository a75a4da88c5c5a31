"""A vector matrix patched in slices equals the sorted concatenation it replaces."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory.vectors.splice import spliced


@given(
    st.sets(st.integers(1, 60), max_size=30),
    st.data(),
)
def test_a_spliced_matrix_equals_a_sorted_concatenation(
    cached: set[int], data: st.DataObject
) -> None:
    ids = np.array(sorted(cached), dtype=np.int64)
    rows = np.arange(len(ids) * 3, dtype=np.float32).reshape(len(ids), 3)
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(ids), max_size=len(ids))),
                    dtype=bool)  # fmt: skip
    # Fresh ids: new ones, or the dropped ones coming back (a memory re-embedded).
    dropped = sorted(set(ids[~keep].tolist()))
    fresh = data.draw(st.lists(st.sampled_from(dropped) | st.integers(61, 90), unique=True)
                      if dropped else st.lists(st.integers(61, 90), unique=True))  # fmt: skip
    fresh_ids = np.array(fresh, dtype=np.int64)
    fresh_rows = -np.arange(1, len(fresh) * 3 + 1, dtype=np.float32).reshape(len(fresh), 3)
    got_ids, got_rows = spliced(ids, rows, keep, fresh_ids, fresh_rows)
    all_ids = np.concatenate([ids[keep], fresh_ids])
    order = np.argsort(all_ids, kind="stable")
    assert got_ids.tolist() == all_ids[order].tolist()
    assert np.array_equal(got_rows, np.concatenate([rows[keep], fresh_rows])[order])
