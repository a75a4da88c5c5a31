"""Schema 18: 'conversation', a memory's reason for being selected (the table rebuilt)."""

from __future__ import annotations

SQL = """
        -- A memory recalled by the person's messages just before this one: its own reason, so
        -- /why says so (SQLite cannot widen a CHECK in place: the table is rebuilt).
        CREATE TABLE turn_selections_18 (
            turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            reason TEXT NOT NULL
                CHECK (reason IN ('pinned', 'global', 'semantic', 'conversation', 'quota',
                                  'fallback', 'rule')),
            score REAL CHECK (score IS NULL OR score BETWEEN -1.0 AND 1.0),
            matched TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (turn_id, memory_id)
        );
        INSERT INTO turn_selections_18 (turn_id, memory_id, position, reason, score, matched)
            SELECT turn_id, memory_id, position, reason, score, matched FROM turn_selections;
        DROP TABLE turn_selections;
        ALTER TABLE turn_selections_18 RENAME TO turn_selections;
        """
