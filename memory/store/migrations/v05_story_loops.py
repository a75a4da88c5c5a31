"""Schema 5: the character's positions, a story's anchors and its bounded state."""

from __future__ import annotations

SQL = """
        -- The character's positions, per story (a position formed in a DM stays in that DM).
        CREATE TABLE positions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            story_id INTEGER NOT NULL,
            topic TEXT NOT NULL CHECK (length(topic) BETWEEN 1 AND 200),
            idea TEXT NOT NULL CHECK (length(idea) BETWEEN 1 AND 1000),
            justification TEXT NOT NULL CHECK (length(justification) <= 1000),
            created_at REAL NOT NULL,
            anchored_at REAL NOT NULL CHECK (anchored_at >= created_at),
            UNIQUE (story_id, topic)
        );

        -- Key facts of a story held by the code. Dropped only by id with a reason, kept as history.
        CREATE TABLE anchors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            story_id INTEGER NOT NULL,
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 500),
            created_at REAL NOT NULL,
            dropped_at REAL,
            drop_reason TEXT,
            CHECK ((dropped_at IS NULL) = (drop_reason IS NULL)),
            CHECK (drop_reason IS NULL OR length(trim(drop_reason)) > 0)
        );
        CREATE INDEX anchors_by_story ON anchors (story_id) WHERE dropped_at IS NULL;

        -- Bounded numeric state of the character in a story (mood, closeness...).
        CREATE TABLE story_state (
            story_id INTEGER NOT NULL,
            field TEXT NOT NULL,
            value REAL NOT NULL CHECK (value BETWEEN -1000.0 AND 1000.0),
            updated_at REAL NOT NULL,
            PRIMARY KEY (story_id, field)
        );
        """
