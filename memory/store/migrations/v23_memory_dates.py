"""Schema 23: the dates a memory means, and 'time', a memory's reason for being selected."""

from __future__ import annotations

SQL = """
        -- The days a memory's relative dates mean ("tomorrow" said on 7 Dec 2026: 2026-12-08),
        -- resolved by memory.lexicon.dates when it was written; none when it names no date
        -- the code could resolve (it then means the day it was said). Gone with its memory.
        CREATE TABLE memory_dates (
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            first_day TEXT NOT NULL CHECK (first_day LIKE '____-__-__'),
            last_day TEXT NOT NULL CHECK (last_day LIKE '____-__-__'),
            CHECK (first_day <= last_day),
            PRIMARY KEY (memory_id, first_day, last_day)
        );
        CREATE INDEX memory_dates_by_day ON memory_dates (first_day);

        -- A memory said in the time the message asked about ("what did I say yesterday?"): its
        -- own reason, so /why says so (SQLite cannot widen a CHECK in place: rebuilt).
        CREATE TABLE turn_selections_23 (
            turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            reason TEXT NOT NULL
                CHECK (reason IN ('pinned', 'global', 'semantic', 'conversation', 'time', 'quota',
                                  'fallback', 'rule')),
            score REAL CHECK (score IS NULL OR score BETWEEN -1.0 AND 1.0),
            matched TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (turn_id, memory_id)
        );
        INSERT INTO turn_selections_23 (turn_id, memory_id, position, reason, score, matched)
            SELECT turn_id, memory_id, position, reason, score, matched FROM turn_selections;
        DROP TABLE turn_selections;
        ALTER TABLE turn_selections_23 RENAME TO turn_selections;
        """
