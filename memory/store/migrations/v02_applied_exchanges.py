"""Schema 2: the write path's idempotency (one row per applied exchange) and what each
exchange did to each memory."""

from __future__ import annotations

SQL = """
        -- Idempotency of the write path: one row per exchange whose reflection was applied.
        CREATE TABLE applied_exchanges (
            exchange_id TEXT PRIMARY KEY CHECK (length(exchange_id) > 0),
            applied_at REAL NOT NULL,
            report TEXT NOT NULL CHECK (json_valid(report))
        );

        -- What each exchange did to each memory (ids only, no text): the audit trail of merges.
        CREATE TABLE memory_events (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            exchange_id TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('created', 'merged', 'absorbed')),
            score REAL NOT NULL CHECK (score BETWEEN 0.0 AND 1.0),
            at REAL NOT NULL
        );
        CREATE INDEX memory_events_by_memory ON memory_events (memory_id);
        """
