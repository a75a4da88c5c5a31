"""Schema 24: the earlier versions of memories that changed (moved, a new job, a correction),
and which exchange each turn answered, so a reflection knows which memories its reply used."""

from __future__ import annotations

SQL = """
        -- The exchange (its message's source id) a turn answered; '' for a preview, a turn
        -- whose message was not stored, or one recorded before this column.
        ALTER TABLE turns ADD COLUMN exchange_id TEXT NOT NULL DEFAULT '';
        CREATE INDEX turns_by_exchange ON turns (exchange_id);

        -- An earlier version of a memory: the memories row holds the current one (same id, so
        -- its pin, counters and links follow it), this one the words it had from valid_from
        -- until valid_until. It is never served nor recalled, and goes with its memory.
        -- came_from: the exchange whose words it was ('manual:...' the person's own, '' not
        -- known); ended_by: what replaced it, and ended_exchange the exchange that did.
        CREATE TABLE memory_versions (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL,
            text TEXT NOT NULL CHECK (length(text) > 0),
            kind TEXT NOT NULL
                CHECK (kind IN ('fact', 'preference', 'promise', 'episode', 'rule')),
            scope TEXT NOT NULL CHECK (scope IN ('global', 'story')),
            story_id INTEGER,
            confidence REAL NOT NULL CHECK (confidence BETWEEN 0.0 AND 1.0),
            valid_from REAL NOT NULL,
            valid_until REAL NOT NULL CHECK (valid_until >= valid_from),
            came_from TEXT NOT NULL DEFAULT '',
            ended_by TEXT NOT NULL CHECK (ended_by IN ('reflection', 'edit', 'restore')),
            ended_exchange TEXT NOT NULL DEFAULT '',
            CHECK ((scope = 'story') = (story_id IS NOT NULL))
        );
        CREATE INDEX memory_versions_by_memory ON memory_versions (memory_id, valid_until);
        CREATE INDEX memory_versions_by_source ON memory_versions (came_from);
        """
