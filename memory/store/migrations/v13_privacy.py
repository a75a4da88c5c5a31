"""Schema 13: where each person's memories are served."""

from __future__ import annotations

SQL = """
        -- Where a person's memories are served: where each was learned (its server, or DMs), or
        -- everywhere. No row: the owner's default ([privacy] memories_served).
        CREATE TABLE privacy (
            user_id INTEGER PRIMARY KEY,
            memories_served TEXT NOT NULL
                CHECK (memories_served IN ('where_learned', 'everywhere')),
            updated_at REAL NOT NULL
        );
        """
