"""Schema 14: who added and dropped an anchor, and the positions moderators dropped."""

from __future__ import annotations

SQL = """
        -- Who added an anchor (NULL: a reflection) and who dropped it (NULL: a reflection). A
        -- reflection may drop only the anchors a reflection added.
        ALTER TABLE anchors ADD COLUMN added_by INTEGER;
        ALTER TABLE anchors ADD COLUMN dropped_by INTEGER;

        -- Positions a moderator dropped: the position goes, the topic and the reason stay.
        CREATE TABLE position_drops (
            id INTEGER PRIMARY KEY,
            story_id INTEGER NOT NULL,
            topic TEXT NOT NULL CHECK (length(topic) BETWEEN 1 AND 200),
            reason TEXT NOT NULL CHECK (length(trim(reason)) BETWEEN 1 AND 500),
            dropped_by INTEGER NOT NULL,
            dropped_at REAL NOT NULL
        );
        CREATE INDEX position_drops_by_story ON position_drops (story_id, id);
        """
