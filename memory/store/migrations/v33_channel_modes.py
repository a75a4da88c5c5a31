"""Schema 33: how the characters answer in a channel, chosen by its moderators."""

from __future__ import annotations

SQL = """
        -- A channel's mode (/channel mode): 'open' answers every message, 'mention' only the
        -- mentions and the replies, 'thread' opens a thread for each mention and answers every
        -- message there. A channel without a row keeps the configured default.
        CREATE TABLE channel_modes (
            channel_id INTEGER PRIMARY KEY,
            mode TEXT NOT NULL CHECK (mode IN ('open', 'mention', 'thread')),
            set_by INTEGER,
            set_at REAL NOT NULL
        );
        """
