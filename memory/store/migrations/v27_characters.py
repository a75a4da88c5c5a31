"""Schema 27: several characters. Which character plays in a channel or a person's DMs, the
ids a character other than the home one keeps its people and stories under, and which
character the ids as they are (every row written before this schema) belong to."""

from __future__ import annotations

SQL = """
        -- The character a moderator chose for a channel, or a person for their DMs.
        CREATE TABLE character_choices (
            place TEXT NOT NULL CHECK (place IN ('channel', 'person')),
            place_id INTEGER NOT NULL,
            character TEXT NOT NULL CHECK (length(character) BETWEEN 1 AND 32),
            chosen_by INTEGER,
            chosen_at REAL NOT NULL,
            PRIMARY KEY (place, place_id)
        );

        -- A derived id (memory.character.cast.derived_id, always negative) and what it stands
        -- for: a person or a story as one character knows them. Rows keyed on it are that
        -- character's; this row says whose they are, for erasure, export and the pages.
        CREATE TABLE character_ids (
            derived INTEGER PRIMARY KEY CHECK (derived < 0),
            kind TEXT NOT NULL CHECK (kind IN ('person', 'story')),
            real_id INTEGER NOT NULL,
            character TEXT NOT NULL CHECK (length(character) BETWEEN 1 AND 32),
            UNIQUE (kind, real_id, character)
        );

        -- The character whose ids are the real ones: recorded at the first start with this
        -- schema (the default character then), so the memories from before stay its own.
        CREATE TABLE character_home (
            one INTEGER PRIMARY KEY CHECK (one = 1),
            character TEXT NOT NULL CHECK (length(character) BETWEEN 1 AND 32)
        );
"""
