"""Schema 9: lore entries, the token estimator's calibration, each story's context
strategy and condensed history."""

from __future__ import annotations

SQL = """
        -- Lore entries: world knowledge activated by keywords. guild_id NULL: everywhere (the
        -- owner's, from the terminal, the CLI or a character card); else only in that server.
        CREATE TABLE lore_entries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,
            scope TEXT NOT NULL CHECK (scope IN ('global', 'character')),
            character TEXT,
            keywords TEXT NOT NULL CHECK (json_valid(keywords) AND json_type(keywords) = 'array'),
            secondary_keywords TEXT NOT NULL DEFAULT '[]'
                CHECK (json_valid(secondary_keywords) AND json_type(secondary_keywords) = 'array'),
            selective INTEGER NOT NULL DEFAULT 0 CHECK (selective IN (0, 1)),
            constant INTEGER NOT NULL DEFAULT 0 CHECK (constant IN (0, 1)),
            case_sensitive INTEGER NOT NULL DEFAULT 0 CHECK (case_sensitive IN (0, 1)),
            priority INTEGER NOT NULL DEFAULT 0,
            scan_depth INTEGER CHECK (scan_depth IS NULL OR scan_depth BETWEEN 0 AND 1000),
            content TEXT NOT NULL CHECK (length(content) BETWEEN 1 AND 8000),
            source TEXT NOT NULL DEFAULT 'manual' CHECK (length(source) BETWEEN 1 AND 200),
            extra TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(extra)),
            created_by INTEGER,
            created_at REAL NOT NULL,
            CHECK ((scope = 'character') = (character IS NOT NULL)),
            CHECK (constant = 1 OR json_array_length(keywords) > 0)
        );
        CREATE INDEX lore_by_guild ON lore_entries (guild_id);

        -- The token estimator's calibration per chat model, from the counts the backend reports.
        CREATE TABLE token_calibration (
            model TEXT PRIMARY KEY CHECK (length(model) > 0),
            factor REAL NOT NULL CHECK (factor > 0),
            recent TEXT NOT NULL CHECK (json_valid(recent) AND json_type(recent) = 'array'),
            samples INTEGER NOT NULL CHECK (samples >= 0),
            rejected INTEGER NOT NULL CHECK (rejected >= 0),
            updated_at REAL NOT NULL
        );

        -- Per story: the context strategy chosen, and the condensed history (summarize) with
        -- the last message id it covers.
        CREATE TABLE story_context (
            story_id INTEGER PRIMARY KEY,
            strategy TEXT CHECK (strategy IS NULL OR length(strategy) BETWEEN 1 AND 64),
            summary TEXT NOT NULL DEFAULT '[]'
                CHECK (json_valid(summary) AND json_type(summary) = 'array'),
            summary_through INTEGER NOT NULL DEFAULT 0 CHECK (summary_through >= 0),
            summary_omitted TEXT NOT NULL DEFAULT '[]'
                CHECK (json_valid(summary_omitted) AND json_type(summary_omitted) = 'array'),
            updated_at REAL NOT NULL
        );
        """
