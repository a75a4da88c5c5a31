"""Schema 12: the exchange and the person each derived thing came from, and the erasures
asked for."""

from __future__ import annotations

SQL = """
        -- Provenance: the exchange (a person's message, by its source id) and the person each
        -- derived thing came from, so that forgetting a message or a person reaches it. In
        -- exchange_id, '' marks a row made before provenance was recorded (an erasure judges
        -- it by its date) and NULL one that no exchange made (written by a moderator).
        -- memory_events already links each memory to every exchange that created or confirmed it.
        CREATE INDEX memory_events_by_exchange ON memory_events (exchange_id);

        ALTER TABLE anchors ADD COLUMN exchange_id TEXT;
        ALTER TABLE anchors ADD COLUMN user_id INTEGER;
        UPDATE anchors SET exchange_id = '';
        CREATE INDEX anchors_by_exchange ON anchors (exchange_id);

        -- A position is created, reworded and re-anchored by several exchanges.
        CREATE TABLE position_sources (
            position_id INTEGER NOT NULL REFERENCES positions (id) ON DELETE CASCADE,
            exchange_id TEXT NOT NULL,
            user_id INTEGER,
            PRIMARY KEY (position_id, exchange_id)
        ) WITHOUT ROWID;
        CREATE INDEX position_sources_by_exchange ON position_sources (exchange_id);
        INSERT INTO position_sources (position_id, exchange_id) SELECT id, '' FROM positions;

        -- What each reflection moved the story's state by (after clamping).
        CREATE TABLE state_changes (
            id INTEGER PRIMARY KEY,
            story_id INTEGER NOT NULL,
            field TEXT NOT NULL,
            delta REAL NOT NULL,
            exchange_id TEXT NOT NULL CHECK (length(exchange_id) > 0),
            user_id INTEGER,
            at REAL NOT NULL
        );
        CREATE INDEX state_changes_by_exchange ON state_changes (exchange_id);

        -- Each rewrite of a story's rolling summary: each is written from the one before it,
        -- so forgetting an exchange takes the summary back to before that exchange.
        CREATE TABLE summary_revisions (
            id INTEGER PRIMARY KEY,
            story_id INTEGER NOT NULL,
            summary TEXT NOT NULL,
            exchange_id TEXT NOT NULL,
            user_id INTEGER,
            at REAL NOT NULL
        );
        CREATE INDEX summary_revisions_by_story ON summary_revisions (story_id, at);
        INSERT INTO summary_revisions (story_id, summary, exchange_id, at)
            SELECT story_id, summary, '', updated_at FROM story_summaries;

        -- The condensed history: the message each sentence was taken from (0: unknown).
        ALTER TABLE story_context ADD COLUMN summary_sources TEXT NOT NULL DEFAULT '[]'
            CHECK (json_valid(summary_sources) AND json_type(summary_sources) = 'array');

        -- Erasures asked for, and whether the files were cleaned yet (the WAL checkpointed):
        -- a reader holding an old snapshot delays it, and the scheduler completes it later.
        CREATE TABLE erasures (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('memory', 'message', 'person', 'member')),
            requested_at REAL NOT NULL,
            completed_at REAL CHECK (completed_at IS NULL OR completed_at >= requested_at)
        );
        CREATE INDEX erasures_pending ON erasures (id) WHERE completed_at IS NULL;

        -- The exchanges an erasure removed (ids only), for a while: a reflection or a reply
        -- already under way when it ran must not write them back.
        CREATE TABLE erased_exchanges (
            exchange_id TEXT PRIMARY KEY CHECK (length(exchange_id) > 0),
            erasure_id INTEGER NOT NULL REFERENCES erasures (id) ON DELETE CASCADE,
            story_id INTEGER NOT NULL
        );
        CREATE INDEX erased_exchanges_by_erasure ON erased_exchanges (erasure_id);
        CREATE INDEX erased_exchanges_by_story ON erased_exchanges (story_id);

        -- A finished reflection keeps no text: the exchange is in the history, or was forgotten.
        UPDATE outbox SET user_name = '', user_message = '', reply = '' WHERE status = 'done';
        """
