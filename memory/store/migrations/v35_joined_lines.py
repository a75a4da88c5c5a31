"""Schema 35: quick lines answered as one turn."""

from __future__ import annotations

SQL = """
        -- A person's lines that one turn answered together with its own message (quick lines
        -- on Discord: « attends », « j'ai un truc à te dire », « j'ai eu le poste !! »): the
        -- reflection of that exchange read them, so forgetting one forgets what it learned.
        -- Ids only; the rows go with their exchange.
        CREATE TABLE joined_lines (
            source_id TEXT PRIMARY KEY CHECK (length(source_id) > 0),
            exchange_id TEXT NOT NULL CHECK (length(exchange_id) > 0)
        );
        CREATE INDEX joined_lines_exchange ON joined_lines (exchange_id);
        """
