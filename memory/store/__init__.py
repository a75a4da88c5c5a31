"""The database, in four rooms: the backends (sqlite/, postgres/), the numbered migrations
(migrations/), the modules that each own a table or a few (tables/), and the queries that span
tables (queries/: erasure, provenance, the dashboard's reads...). At the top, the seam (db.py:
the one `Store` over a small `Backend` each database implements, and `Tx`), the generations
(generations.py) and opening a store (opening.py). The store imports nothing of memory above it
(tests/test_imports.py).

This face: `Store`, the `Tx` Protocol, `open_store` and `Rewrite` (when an erasure rewrites
an SQLite file).
"""

from memory.store.db import Rewrite, Store, Tx
from memory.store.opening import open_store

__all__ = ["Rewrite", "Store", "Tx", "open_store"]
