"""Schema 29: whether each chat server streams its replies, once learned."""

from __future__ import annotations

SQL = """
        -- Whether each chat server streams a reply (1) or answers it whole (0: it refused to
        -- stream or answered in one block), learned from its first answer, so that a restart
        -- does not ask a server that cannot stream again.
        CREATE TABLE chat_streaming (
            server TEXT NOT NULL CHECK (length(server) > 0),
            model TEXT NOT NULL CHECK (length(model) > 0),
            streams INTEGER NOT NULL CHECK (streams IN (0, 1)),
            learned_at REAL NOT NULL,
            PRIMARY KEY (server, model)
        );
        """
