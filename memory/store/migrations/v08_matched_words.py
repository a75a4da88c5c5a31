"""Schema 8: the words that recalled a memory by keyword, for /why."""

from __future__ import annotations

SQL = """
        -- The words that recalled a memory by keyword, so /why can show them for the last turn.
        ALTER TABLE turn_selections ADD COLUMN matched TEXT NOT NULL DEFAULT '';
        """
