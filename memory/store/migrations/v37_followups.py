"""Schema 37: follow-ups, the character coming back to a dated event a person mentioned."""

from __future__ import annotations

# Where a row was learned: "dm", or the id of its Discord server (digits only).
_ORIGIN_OK = "(origin = 'dm' OR (origin <> '' AND origin NOT GLOB '*[^0-9]*'))"

SQL = f"""
        -- A person's own choice (/followups on|off, the terminal's too). No row: the default of
        -- the place ([followups] in the settings, off unless the operator says otherwise).
        CREATE TABLE followup_choices (
            user_id INTEGER PRIMARY KEY,
            enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
            updated_at REAL NOT NULL
        );

        -- One follow-up per memory (never two for one event), planned from its dates
        -- (memory_dates) by memory.followups.choose; ids and dates only, never the text it was
        -- written with. It goes with its memory: forgetting the memory (or the message it came
        -- from, or the person) cancels it, one being written too (its writer's lease no
        -- longer holds). The lease is the outbox's: several processes never send one twice.
        CREATE TABLE followups (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL UNIQUE REFERENCES memories (id) ON DELETE CASCADE,
            user_id INTEGER NOT NULL,
            person_id INTEGER NOT NULL,
            story_id INTEGER NOT NULL,
            channel_id INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK {_ORIGIN_OK},
            character TEXT NOT NULL CHECK (length(character) > 0),
            event_day TEXT NOT NULL CHECK (event_day LIKE '____-__-__'),
            said_at REAL NOT NULL,
            due_at REAL NOT NULL,
            status TEXT NOT NULL DEFAULT 'planned'
                CHECK (status IN ('planned', 'posting', 'sent', 'dropped', 'blocked')),
            reason TEXT NOT NULL DEFAULT '',
            attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            leased_by TEXT,
            lease_until REAL,
            sent_day TEXT CHECK (sent_day IS NULL OR sent_day LIKE '____-__-__'),
            sent_at REAL,
            created_at REAL NOT NULL,
            CHECK ((status IN ('posting', 'sent')) = (sent_day IS NOT NULL))
        );
        CREATE INDEX followups_due ON followups (status, due_at);
        CREATE INDEX followups_by_user ON followups (user_id, status);
        """
