"""Schema 11: the structured-output mode each chat server accepts, once learned."""

from __future__ import annotations

SQL = """
        -- The structured-output mode each chat server accepts, learned from its answers, so that
        -- a restart sends it at once instead of probing the server again.
        CREATE TABLE structured_output (
            server TEXT NOT NULL CHECK (length(server) > 0),
            model TEXT NOT NULL CHECK (length(model) > 0),
            mode TEXT NOT NULL
                CHECK (mode IN ('json_schema', 'json_object_schema', 'json_object', 'none')),
            learned_at REAL NOT NULL,
            PRIMARY KEY (server, model)
        );
        """
