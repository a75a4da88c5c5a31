"""Schema 32: the context each chat server takes, once learned."""

from __future__ import annotations

SQL = """
        -- The context a chat server (and model) takes, in tokens: said by the server (Ollama's
        -- /api/show, llama.cpp's /props, vLLM's /v1/models) or read in its refusal of a longer
        -- prompt (llama-cpp-python says it nowhere else), so that a restart caps the prompts
        -- at once.
        CREATE TABLE chat_context (
            server TEXT NOT NULL CHECK (length(server) > 0),
            model TEXT NOT NULL CHECK (length(model) > 0),
            tokens INTEGER NOT NULL CHECK (tokens > 0),
            source TEXT NOT NULL CHECK (source IN ('server', 'refusal')),
            learned_at REAL NOT NULL,
            PRIMARY KEY (server, model)
        );
        """
