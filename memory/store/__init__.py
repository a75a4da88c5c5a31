"""The database, in four rooms: the backends (sqlite/, postgres/), the numbered migrations
(migrations/), the modules that each own a table or a few (tables/), and the queries that span
tables (queries/: erasure, provenance, the dashboard's reads...). At the top, the seam both
backends implement (db.py: `Store`, `Tx`), what they share (writes.py, generations.py) and
opening one (opening.py). The store imports nothing of memory above it (tests/test_imports.py).

This face: the two Protocols and `open_store`.
"""

from memory.store.db import Store, Tx
from memory.store.opening import open_store

__all__ = ["Store", "Tx", "open_store"]
