"""Schema 3: read-time counters, kept apart from the rows that hold text and vectors."""

from __future__ import annotations

SQL = """
        -- Read-time counters, kept apart from the rows that hold text and vectors (a measured 30x
        -- write penalty otherwise). A memory's candidate count is derived, not incremented: it is
        -- the number of non-degraded turns of its visibility bucket since its baseline, so a
        -- turn writes O(selected) rows however many memories were candidates.
        CREATE TABLE turn_buckets (
            user_id INTEGER NOT NULL,
            bucket TEXT NOT NULL CHECK (bucket IN ('all', 'dm') OR bucket GLOB 'story:*'),
            turns INTEGER NOT NULL DEFAULT 0 CHECK (turns >= 0),
            PRIMARY KEY (user_id, bucket)
        ) WITHOUT ROWID;

        CREATE TABLE memory_counters (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            bucket TEXT NOT NULL CHECK (bucket IN ('all', 'dm') OR bucket GLOB 'story:*'),
            candidate_base INTEGER NOT NULL DEFAULT 0,
            served INTEGER NOT NULL DEFAULT 0 CHECK (served >= 0),
            semantic INTEGER NOT NULL DEFAULT 0 CHECK (semantic BETWEEN 0 AND served)
        );

        INSERT INTO memory_counters (memory_id, bucket)
            SELECT id, CASE
                WHEN scope = 'story' THEN 'story:' || story_id
                WHEN origin = 'dm' THEN 'dm'
                ELSE 'all' END
            FROM memories;
        """
