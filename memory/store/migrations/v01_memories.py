"""Schema 1: memories and their vectors, turns and what each one selected, the reflection
outbox, counters: the first schema, which every later one builds on."""

from __future__ import annotations

# Where a row was learned: "dm", or the id of its Discord server (digits only).
_ORIGIN_OK = "(origin = 'dm' OR (origin <> '' AND origin NOT GLOB '*[^0-9]*'))"

SQL = f"""
        -- AUTOINCREMENT: an id a person saw (in /why, /forget) never names another memory later.
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER NOT NULL,
            scope TEXT NOT NULL CHECK (scope IN ('global', 'story')),
            story_id INTEGER,
            origin TEXT NOT NULL CHECK {_ORIGIN_OK},
            kind TEXT NOT NULL
                CHECK (kind IN ('fact', 'preference', 'promise', 'episode', 'rule')),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
            confidence REAL NOT NULL CHECK (confidence BETWEEN 0.0 AND 1.0),
            pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL CHECK (updated_at >= created_at),
            content_hash TEXT NOT NULL CHECK (length(content_hash) = 64),
            CHECK ((scope = 'story') = (story_id IS NOT NULL))
        );
        CREATE INDEX memories_by_user ON memories (user_id, scope, story_id);

        CREATE TABLE embeddings (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            model TEXT NOT NULL CHECK (length(model) > 0),
            content_hash TEXT NOT NULL CHECK (length(content_hash) = 64),
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL CHECK (length(vector) = dim * 4)
        );

        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            user_id INTEGER NOT NULL,
            story_id INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK {_ORIGIN_OK},
            degraded INTEGER NOT NULL CHECK (degraded IN (0, 1)),
            created_at REAL NOT NULL
        );
        CREATE INDEX turns_by_user_story ON turns (user_id, story_id, id);

        CREATE TABLE turn_selections (
            turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            reason TEXT NOT NULL
                CHECK (reason IN ('pinned', 'global', 'semantic', 'quota', 'fallback', 'rule')),
            score REAL CHECK (score IS NULL OR score BETWEEN -1.0 AND 1.0),
            PRIMARY KEY (turn_id, memory_id)
        );

        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            exchange_id TEXT NOT NULL UNIQUE CHECK (length(exchange_id) > 0),
            user_id INTEGER NOT NULL,
            story_id INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK {_ORIGIN_OK},
            user_name TEXT NOT NULL,
            user_message TEXT NOT NULL,
            reply TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'done', 'dropped')),
            attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            next_attempt_at REAL NOT NULL,
            last_error TEXT,
            created_at REAL NOT NULL
        );
        CREATE INDEX outbox_due ON outbox (status, next_attempt_at);

        CREATE TABLE counters (
            name TEXT PRIMARY KEY CHECK (length(name) > 0),
            value INTEGER NOT NULL DEFAULT 0 CHECK (value >= 0)
        );
        """
