"""Schema 21: what each reflection was shown of its story's notes, so that forgetting an
exchange reaches what other exchanges' reflections made from its words."""

from __future__ import annotations

SQL = """
        -- The story's notes in one reflection's prompt: the revision of the rolling summary
        -- (its updated_at; NULL: none yet) and the anchors and positions by id. A reflection
        -- applied before this table has no row: an erasure judges it by its date.
        CREATE TABLE reflection_inputs (
            exchange_id TEXT PRIMARY KEY CHECK (length(exchange_id) > 0),
            story_id INTEGER NOT NULL,
            summary_at REAL,
            anchors TEXT NOT NULL DEFAULT '[]'
                CHECK (json_valid(anchors) AND json_type(anchors) = 'array'),
            positions TEXT NOT NULL DEFAULT '[]'
                CHECK (json_valid(positions) AND json_type(positions) = 'array'),
            at REAL NOT NULL
        );
        CREATE INDEX reflection_inputs_by_story ON reflection_inputs (story_id, at);
        """
