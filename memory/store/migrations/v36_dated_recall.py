"""Schema 36: the days a memory means kept under its owner too, and 'dated', a memory's reason
for being selected."""

from __future__ import annotations

SQL = """
        -- The owner beside each memory's days, so the days a person's memories mean around a
        -- time they ask about ("what do I have tomorrow?") are one range of their own index
        -- (their days ending on the window's first or later), never everyone's. A memory's
        -- owner never changes; the rows still go with their memory.
        CREATE TABLE memory_dates_36 (
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL,
            first_day TEXT NOT NULL CHECK (first_day LIKE '____-__-__'),
            last_day TEXT NOT NULL CHECK (last_day LIKE '____-__-__'),
            CHECK (first_day <= last_day),
            PRIMARY KEY (memory_id, first_day, last_day)
        );
        INSERT INTO memory_dates_36 (memory_id, user_id, first_day, last_day)
            SELECT d.memory_id, m.user_id, d.first_day, d.last_day
            FROM memory_dates d JOIN memories m ON m.id = d.memory_id;
        DROP TABLE memory_dates;
        ALTER TABLE memory_dates_36 RENAME TO memory_dates;
        CREATE INDEX memory_dates_by_person ON memory_dates (user_id, last_day, first_day);

        -- A memory whose dates fall in the time to come the message asked about ("what do I
        -- have tomorrow?"): its own reason, so /why says so (SQLite cannot widen a CHECK in
        -- place: rebuilt).
        CREATE TABLE turn_selections_36 (
            turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            reason TEXT NOT NULL
                CHECK (reason IN ('pinned', 'global', 'semantic', 'conversation', 'time', 'dated',
                                  'quota', 'fallback', 'rule')),
            score REAL CHECK (score IS NULL OR score BETWEEN -1.0 AND 1.0),
            matched TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (turn_id, memory_id)
        );
        INSERT INTO turn_selections_36 (turn_id, memory_id, position, reason, score, matched)
            SELECT turn_id, memory_id, position, reason, score, matched FROM turn_selections;
        DROP TABLE turn_selections;
        ALTER TABLE turn_selections_36 RENAME TO turn_selections;
        """
