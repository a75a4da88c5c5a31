"""Schema 4: each story's conversation, and its rolling summary."""

from __future__ import annotations

SQL = """
        -- The conversation of each story, for the prompt and later context strategies. A message
        -- is stored once per source id: a gateway RESUME that replays an event is answered once.
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            source_id TEXT NOT NULL UNIQUE CHECK (length(source_id) > 0),
            story_id INTEGER NOT NULL,
            user_id INTEGER,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            author_name TEXT NOT NULL,
            content TEXT NOT NULL,
            excluded INTEGER NOT NULL DEFAULT 0 CHECK (excluded IN (0, 1)),
            created_at REAL NOT NULL,
            CHECK ((role = 'user') = (user_id IS NOT NULL))
        );
        CREATE INDEX messages_by_story ON messages (story_id, id);

        CREATE TABLE story_summaries (
            story_id INTEGER PRIMARY KEY,
            summary TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
        """
