"""Schema 34: messages kept off the record, and who asked for receipts."""

from __future__ import annotations

SQL = """
        -- A person's message kept out of memory ("Don't remember this", or the 🤐 reaction):
        -- answered and kept in the history, never reflected. Ids only. A reflection checks it
        -- in the transaction that would write what it learned.
        CREATE TABLE off_record (
            exchange_id TEXT PRIMARY KEY CHECK (length(exchange_id) > 0),
            user_id INTEGER NOT NULL,
            marked_at REAL NOT NULL
        );
        CREATE INDEX off_record_by_user ON off_record (user_id);
        -- The people who asked for a receipt (a DM) when a reflection stores something from
        -- one of their messages (/privacy receipts:on). No row: no receipts (the default).
        CREATE TABLE receipts (
            user_id INTEGER PRIMARY KEY,
            updated_at REAL NOT NULL
        );
        """
