"""What the scale runner and its reports share: where the results go, how many people talk at
once per process, how many idle indexer passes are timed."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "results"
# People in conversation at once in each process.
CONCURRENCY = 8
IDLE_PASSES = 7
