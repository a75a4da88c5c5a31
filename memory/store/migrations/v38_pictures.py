"""Schema 38: pictures people posted: whether each chat server's model sees images, and which
exchanges had pictures (counts only: a picture is never stored)."""

from __future__ import annotations

SQL = """
        -- Whether each chat server's model sees images (1) or not (0), learned from what the
        -- server says of the model or from its answer to the first picture sent.
        CREATE TABLE chat_vision (
            server TEXT NOT NULL CHECK (length(server) > 0),
            model TEXT NOT NULL CHECK (length(model) > 0),
            sees INTEGER NOT NULL CHECK (sees IN (0, 1)),
            learned_at REAL NOT NULL,
            PRIMARY KEY (server, model)
        );
        -- The exchanges whose message brought pictures: how many, and whether the reflection
        -- was shown them (then /why marks what it learned as learned from an image). Ids and
        -- counts only; the rows go with their exchange.
        CREATE TABLE exchange_pictures (
            exchange_id TEXT PRIMARY KEY CHECK (length(exchange_id) > 0),
            pictures INTEGER NOT NULL CHECK (pictures BETWEEN 1 AND 64),
            seen INTEGER NOT NULL DEFAULT 0 CHECK (seen IN (0, 1))
        );
        """
