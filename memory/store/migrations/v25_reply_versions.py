"""Schema 25: the versions of the character's reply to one message ("Another answer", ◀ ▶)."""

from __future__ import annotations

SQL = """
        -- One answer to a message (its exchange: the message's source id). The messages row
        -- of the reply holds the text of the version shown (shown = 1, one per exchange);
        -- the others are kept a bounded time and count, and go with the exchange.
        -- turn_id: the turn whose selection produced it (turns may be pruned: no reference);
        -- cut: characters cut off the end of the model's answer.
        CREATE TABLE reply_versions (
            id INTEGER PRIMARY KEY,
            exchange_id TEXT NOT NULL CHECK (length(exchange_id) > 0),
            user_id INTEGER NOT NULL,
            position INTEGER NOT NULL CHECK (position >= 0),
            text TEXT NOT NULL CHECK (length(text) > 0),
            turn_id INTEGER NOT NULL DEFAULT 0 CHECK (turn_id >= 0),
            cut INTEGER NOT NULL DEFAULT 0 CHECK (cut >= 0),
            shown INTEGER NOT NULL DEFAULT 0 CHECK (shown IN (0, 1)),
            created_at REAL NOT NULL,
            UNIQUE (exchange_id, position)
        );
        CREATE INDEX reply_versions_by_user ON reply_versions (user_id);
        CREATE INDEX reply_versions_by_age ON reply_versions (created_at);
        """
