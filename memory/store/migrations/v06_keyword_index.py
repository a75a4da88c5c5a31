"""Schema 6: the FTS5 keyword index over memory texts, kept in step by triggers."""

from __future__ import annotations

SQL = """
        -- Keyword recall: an FTS5 index over memory texts (accents folded), kept in step by
        -- triggers, so by the very transactions that write memories.
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, content = 'memories', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        INSERT INTO memories_fts (rowid, text) SELECT id, text FROM memories;

        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        """
