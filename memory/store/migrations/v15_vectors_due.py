"""Schema 15: the memories whose vector must be computed again, marked by triggers."""

from __future__ import annotations

SQL = """
        -- Memories whose vector must be computed again, marked by the transactions that write
        -- them (these triggers), so an idle indexer pass reads an empty table instead of
        -- hashing every memory. Erasing a memory erases its mark (cascade).
        CREATE TABLE vectors_due (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE
        );
        CREATE TRIGGER vectors_due_insert AFTER INSERT ON memories BEGIN
            INSERT OR IGNORE INTO vectors_due (memory_id) VALUES (new.id);
        END;
        CREATE TRIGGER vectors_due_update AFTER UPDATE OF text ON memories BEGIN
            INSERT OR IGNORE INTO vectors_due (memory_id) VALUES (new.id);
        END;
        -- What the vectors were last checked against (the embedding model and its document
        -- prefix): another one makes the indexer check every memory once. No row yet: the
        -- first pass checks every memory written before this migration.
        CREATE TABLE vectors_checked (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            model TEXT NOT NULL CHECK (length(model) > 0),
            document_prefix TEXT NOT NULL,
            checked_at REAL NOT NULL
        );
        """
