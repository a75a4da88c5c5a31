"""Schema 20: a message's id is never given again once its message is erased (the table
rebuilt with AUTOINCREMENT)."""

from __future__ import annotations

SQL = """
        -- Without AUTOINCREMENT, SQLite gives the next message max(id) + 1: erasing the newest
        -- messages handed their ids to the next exchange, and an id typed later
        -- (/forget-message, /exclude) reached another message. SQLite cannot add AUTOINCREMENT
        -- in place: the table is rebuilt, rows and ids kept (nothing references it: no foreign
        -- key, trigger or full-text index), and its indexes made again. The copy sets
        -- sqlite_sequence to the highest id kept; ids erased before this migration above it
        -- are not known any more. Memories, anchors, positions and lore entries had
        -- AUTOINCREMENT from the start; PostgreSQL's identity sequences never give an id twice.
        CREATE TABLE messages_20 (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
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
        INSERT INTO messages_20 (id, source_id, story_id, user_id, role, author_name, content,
                                 excluded, created_at)
            SELECT id, source_id, story_id, user_id, role, author_name, content, excluded,
                   created_at FROM messages;
        DROP TABLE messages;
        ALTER TABLE messages_20 RENAME TO messages;
        CREATE INDEX messages_by_story ON messages (story_id, id);
        CREATE INDEX messages_by_user ON messages (user_id, id) WHERE user_id IS NOT NULL;
        """
