"""Schema 22: which word rules the keyword index was built with, so a change rebuilds it."""

from __future__ import annotations

SQL = """
        -- The index holds each word behind its owner's tag, a word as FTS5's tokenizer ends it
        -- (memory.store.fts5_words). Words split otherwise than FTS5 does leave untagged pieces
        -- in the index, and a SQLite of other tables ends words elsewhere: the signature of the
        -- rules in use is kept here, and a store opening with other rules rebuilds the index
        -- (memory.store.db). Empty until then: every database before 22 is rebuilt once.
        CREATE TABLE keyword_rules (
            signature TEXT NOT NULL,
            built_at REAL NOT NULL
        );
        """
