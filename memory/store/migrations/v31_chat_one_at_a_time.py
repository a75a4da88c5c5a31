"""Schema 31: the chat servers learned to take one request at a time."""

from __future__ import annotations

SQL = """
        -- A chat server (and model) that stopped a reply when another request came
        -- (llama-cpp-python's server by default): Écho sends it one request at a time, and a
        -- restart remembers it.
        CREATE TABLE chat_one_at_a_time (
            server TEXT NOT NULL CHECK (length(server) > 0),
            model TEXT NOT NULL CHECK (length(model) > 0),
            learned_at REAL NOT NULL,
            PRIMARY KEY (server, model)
        );
        """
