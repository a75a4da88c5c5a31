"""Schema 26: the messages a front end posted for each reply (each chunk), so that an action on
one of them (a deletion, a button) finds the exchange it belongs to."""

from __future__ import annotations

SQL = """
        -- One row per message posted (a Discord message id); exchange_id is the exchange's
        -- source id ('discord:<id>' of the person's message), part the chunk's place in the
        -- reply (0 first). Ids only, no text; the rows go when their exchange is erased.
        CREATE TABLE sent_messages (
            message_id INTEGER PRIMARY KEY,
            exchange_id TEXT NOT NULL CHECK (length(exchange_id) > 0),
            part INTEGER NOT NULL CHECK (part >= 0),
            sent_at REAL NOT NULL
        );
        CREATE INDEX sent_messages_by_exchange ON sent_messages (exchange_id, part);
        """
