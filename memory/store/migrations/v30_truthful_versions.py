"""Schema 30: a dedup merge ends a version like a replacement does, and how many of a memory's
oldest versions were dropped to keep its history bounded."""

from __future__ import annotations

SQL = """
        -- memory_versions again, its ended_by admitting 'merge' (a reworded copy of the memory
        -- took its place); SQLite cannot change a CHECK in place.
        CREATE TABLE memory_versions_v30 (
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
            ended_by TEXT NOT NULL CHECK (ended_by IN ('reflection', 'edit', 'restore', 'merge')),
            ended_exchange TEXT NOT NULL DEFAULT '',
            CHECK ((scope = 'story') = (story_id IS NOT NULL))
        );
        INSERT INTO memory_versions_v30 SELECT id, memory_id, user_id, text, kind, scope,
            story_id, confidence, valid_from, valid_until, came_from, ended_by, ended_exchange
            FROM memory_versions;
        DROP TABLE memory_versions;
        ALTER TABLE memory_versions_v30 RENAME TO memory_versions;
        CREATE INDEX memory_versions_by_memory ON memory_versions (memory_id, valid_until);
        CREATE INDEX memory_versions_by_source ON memory_versions (came_from);

        -- How many of a memory's oldest versions were dropped (only the newest are kept); the
        -- row goes with its memory.
        CREATE TABLE memory_versions_dropped (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL,
            dropped INTEGER NOT NULL CHECK (dropped > 0)
        );
        """

# PostgreSQL changes the CHECK in place (its name is the one PostgreSQL gave the column's).
POSTGRES = """
        ALTER TABLE memory_versions DROP CONSTRAINT memory_versions_ended_by_check;
        ALTER TABLE memory_versions ADD CONSTRAINT memory_versions_ended_by_check
            CHECK (ended_by IN ('reflection', 'edit', 'restore', 'merge'));
        CREATE TABLE memory_versions_dropped (
            memory_id BIGINT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            user_id BIGINT NOT NULL,
            dropped BIGINT NOT NULL CHECK (dropped > 0)
        );
        """
