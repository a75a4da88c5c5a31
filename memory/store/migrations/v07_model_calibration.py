"""Schema 7: what `echo-bot calibrate` read for an embedding model, per language."""

from __future__ import annotations

SQL = """
        -- What `echo-bot calibrate` read for an embedding model, per language: an unfit model's
        -- cosines are not used for that language (keyword recall carries it).
        CREATE TABLE model_calibration (
            model TEXT NOT NULL,
            language TEXT NOT NULL CHECK (language IN ('fr', 'en')),
            fit INTEGER NOT NULL CHECK (fit IN (0, 1)),
            margin REAL NOT NULL,
            threshold REAL NOT NULL,
            measured_at REAL NOT NULL,
            PRIMARY KEY (model, language)
        );
        """
