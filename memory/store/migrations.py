"""Numbered schema migrations, applied in order and recorded in `schema_migrations`.

Never edit a published migration: add the next number. CHECK constraints hold every enum and
range, so an invalid row cannot exist whatever the code above does.
"""

from __future__ import annotations

_ORIGIN_OK = "(origin = 'dm' OR (origin <> '' AND origin NOT GLOB '*[^0-9]*'))"

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        f"""
        -- AUTOINCREMENT: an id a person saw (in /why, /forget) never names another memory later.
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER NOT NULL,
            scope TEXT NOT NULL CHECK (scope IN ('global', 'story')),
            story_id INTEGER,
            origin TEXT NOT NULL CHECK {_ORIGIN_OK},
            kind TEXT NOT NULL
                CHECK (kind IN ('fact', 'preference', 'promise', 'episode', 'rule')),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
            confidence REAL NOT NULL CHECK (confidence BETWEEN 0.0 AND 1.0),
            pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL CHECK (updated_at >= created_at),
            content_hash TEXT NOT NULL CHECK (length(content_hash) = 64),
            CHECK ((scope = 'story') = (story_id IS NOT NULL))
        );
        CREATE INDEX memories_by_user ON memories (user_id, scope, story_id);

        CREATE TABLE embeddings (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            model TEXT NOT NULL CHECK (length(model) > 0),
            content_hash TEXT NOT NULL CHECK (length(content_hash) = 64),
            dim INTEGER NOT NULL CHECK (dim > 0),
            vector BLOB NOT NULL CHECK (length(vector) = dim * 4)
        );

        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            user_id INTEGER NOT NULL,
            story_id INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK {_ORIGIN_OK},
            degraded INTEGER NOT NULL CHECK (degraded IN (0, 1)),
            created_at REAL NOT NULL
        );
        CREATE INDEX turns_by_user_story ON turns (user_id, story_id, id);

        CREATE TABLE turn_selections (
            turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            reason TEXT NOT NULL
                CHECK (reason IN ('pinned', 'global', 'semantic', 'quota', 'fallback', 'rule')),
            score REAL CHECK (score IS NULL OR score BETWEEN -1.0 AND 1.0),
            PRIMARY KEY (turn_id, memory_id)
        );

        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            exchange_id TEXT NOT NULL UNIQUE CHECK (length(exchange_id) > 0),
            user_id INTEGER NOT NULL,
            story_id INTEGER NOT NULL,
            origin TEXT NOT NULL CHECK {_ORIGIN_OK},
            user_name TEXT NOT NULL,
            user_message TEXT NOT NULL,
            reply TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'done', 'dropped')),
            attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            next_attempt_at REAL NOT NULL,
            last_error TEXT,
            created_at REAL NOT NULL
        );
        CREATE INDEX outbox_due ON outbox (status, next_attempt_at);

        CREATE TABLE counters (
            name TEXT PRIMARY KEY CHECK (length(name) > 0),
            value INTEGER NOT NULL DEFAULT 0 CHECK (value >= 0)
        );
        """,
    ),
    (
        2,
        """
        -- Idempotency of the write path: one row per exchange whose reflection was applied.
        CREATE TABLE applied_exchanges (
            exchange_id TEXT PRIMARY KEY CHECK (length(exchange_id) > 0),
            applied_at REAL NOT NULL,
            report TEXT NOT NULL CHECK (json_valid(report))
        );

        -- What each exchange did to each memory (ids only, no text): the audit trail of merges.
        CREATE TABLE memory_events (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            exchange_id TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('created', 'merged', 'absorbed')),
            score REAL NOT NULL CHECK (score BETWEEN 0.0 AND 1.0),
            at REAL NOT NULL
        );
        CREATE INDEX memory_events_by_memory ON memory_events (memory_id);
        """,
    ),
    (
        3,
        """
        -- Read-time counters, kept apart from the rows that hold text and vectors (a measured 30x
        -- write penalty otherwise). A memory's candidate count is derived, not incremented: it is
        -- the number of non-degraded turns of its visibility bucket since its baseline, so a
        -- turn writes O(selected) rows however many memories were candidates.
        CREATE TABLE turn_buckets (
            user_id INTEGER NOT NULL,
            bucket TEXT NOT NULL CHECK (bucket IN ('all', 'dm') OR bucket GLOB 'story:*'),
            turns INTEGER NOT NULL DEFAULT 0 CHECK (turns >= 0),
            PRIMARY KEY (user_id, bucket)
        ) WITHOUT ROWID;

        CREATE TABLE memory_counters (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            bucket TEXT NOT NULL CHECK (bucket IN ('all', 'dm') OR bucket GLOB 'story:*'),
            candidate_base INTEGER NOT NULL DEFAULT 0,
            served INTEGER NOT NULL DEFAULT 0 CHECK (served >= 0),
            semantic INTEGER NOT NULL DEFAULT 0 CHECK (semantic BETWEEN 0 AND served)
        );

        INSERT INTO memory_counters (memory_id, bucket)
            SELECT id, CASE
                WHEN scope = 'story' THEN 'story:' || story_id
                WHEN origin = 'dm' THEN 'dm'
                ELSE 'all' END
            FROM memories;
        """,
    ),
    (
        4,
        """
        -- The conversation of each story, for the prompt and later context strategies. A message
        -- is stored once per source id: a gateway RESUME that replays an event is answered once.
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            source_id TEXT NOT NULL UNIQUE CHECK (length(source_id) > 0),
            story_id INTEGER NOT NULL,
            user_id INTEGER,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            author_name TEXT NOT NULL,
            content TEXT NOT NULL,
            excluded INTEGER NOT NULL DEFAULT 0 CHECK (excluded IN (0, 1)),
            created_at REAL NOT NULL,
            CHECK ((role = 'user') = (user_id IS NOT NULL))
        );
        CREATE INDEX messages_by_story ON messages (story_id, id);

        CREATE TABLE story_summaries (
            story_id INTEGER PRIMARY KEY,
            summary TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
        """,
    ),
    (
        5,
        """
        -- The character's positions, per story (a position formed in a DM stays in that DM).
        CREATE TABLE positions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            story_id INTEGER NOT NULL,
            topic TEXT NOT NULL CHECK (length(topic) BETWEEN 1 AND 200),
            idea TEXT NOT NULL CHECK (length(idea) BETWEEN 1 AND 1000),
            justification TEXT NOT NULL CHECK (length(justification) <= 1000),
            created_at REAL NOT NULL,
            anchored_at REAL NOT NULL CHECK (anchored_at >= created_at),
            UNIQUE (story_id, topic)
        );

        -- Key facts of a story held by the code. Dropped only by id with a reason, kept as history.
        CREATE TABLE anchors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            story_id INTEGER NOT NULL,
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 500),
            created_at REAL NOT NULL,
            dropped_at REAL,
            drop_reason TEXT,
            CHECK ((dropped_at IS NULL) = (drop_reason IS NULL)),
            CHECK (drop_reason IS NULL OR length(trim(drop_reason)) > 0)
        );
        CREATE INDEX anchors_by_story ON anchors (story_id) WHERE dropped_at IS NULL;

        -- Bounded numeric state of the character in a story (mood, closeness...).
        CREATE TABLE story_state (
            story_id INTEGER NOT NULL,
            field TEXT NOT NULL,
            value REAL NOT NULL CHECK (value BETWEEN -1000.0 AND 1000.0),
            updated_at REAL NOT NULL,
            PRIMARY KEY (story_id, field)
        );
        """,
    ),
    (
        6,
        """
        -- Keyword recall: an FTS5 index over memory texts (accents folded), kept in step by
        -- triggers, so by the very transactions that write memories.
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, content = 'memories', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        INSERT INTO memories_fts (rowid, text) SELECT id, text FROM memories;

        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
            INSERT INTO memories_fts (rowid, text) VALUES (new.id, new.text);
        END;
        """,
    ),
    (
        7,
        """
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
        """,
    ),
    (
        8,
        """
        -- The words that recalled a memory by keyword, so /why can show them for the last turn.
        ALTER TABLE turn_selections ADD COLUMN matched TEXT NOT NULL DEFAULT '';
        """,
    ),
    (
        9,
        """
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
        """,
    ),
    (
        10,
        """
        -- A person's waiting reflections, oldest first: the per-person backlog bound and the
        -- round-robin drain read them at every enqueue.
        CREATE INDEX outbox_pending_by_user ON outbox (user_id, next_attempt_at, id)
            WHERE status = 'pending';
        """,
    ),
    (
        11,
        """
        -- The structured-output mode each chat server accepts, learned from its answers, so that
        -- a restart sends it at once instead of probing the server again.
        CREATE TABLE structured_output (
            server TEXT NOT NULL CHECK (length(server) > 0),
            model TEXT NOT NULL CHECK (length(model) > 0),
            mode TEXT NOT NULL
                CHECK (mode IN ('json_schema', 'json_object_schema', 'json_object', 'none')),
            learned_at REAL NOT NULL,
            PRIMARY KEY (server, model)
        );
        """,
    ),
    (
        12,
        """
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
        """,
    ),
    (
        13,
        """
        -- Where a person's memories are served: where each was learned (its server, or DMs), or
        -- everywhere. No row: the owner's default ([privacy] memories_served).
        CREATE TABLE privacy (
            user_id INTEGER PRIMARY KEY,
            memories_served TEXT NOT NULL
                CHECK (memories_served IN ('where_learned', 'everywhere')),
            updated_at REAL NOT NULL
        );
        """,
    ),
    (
        14,
        """
        -- Who added an anchor (NULL: a reflection) and who dropped it (NULL: a reflection). A
        -- reflection may drop only the anchors a reflection added.
        ALTER TABLE anchors ADD COLUMN added_by INTEGER;
        ALTER TABLE anchors ADD COLUMN dropped_by INTEGER;

        -- Positions a moderator dropped: the position goes, the topic and the reason stay.
        CREATE TABLE position_drops (
            id INTEGER PRIMARY KEY,
            story_id INTEGER NOT NULL,
            topic TEXT NOT NULL CHECK (length(topic) BETWEEN 1 AND 200),
            reason TEXT NOT NULL CHECK (length(trim(reason)) BETWEEN 1 AND 500),
            dropped_by INTEGER NOT NULL,
            dropped_at REAL NOT NULL
        );
        CREATE INDEX position_drops_by_story ON position_drops (story_id, id);
        """,
    ),
    (
        15,
        """
        -- Memories whose vector must be computed again, marked by the transactions that write
        -- them (these triggers), so an idle indexer pass reads an empty table instead of
        -- hashing every memory. Erasing a memory erases its mark (cascade).
        CREATE TABLE vectors_due (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE
        );
        CREATE TRIGGER vectors_due_insert AFTER INSERT ON memories BEGIN
            INSERT OR IGNORE INTO vectors_due (memory_id) VALUES (new.id);
        END;
        CREATE TRIGGER vectors_due_update AFTER UPDATE OF text ON memories BEGIN
            INSERT OR IGNORE INTO vectors_due (memory_id) VALUES (new.id);
        END;
        -- What the vectors were last checked against (the embedding model and its document
        -- prefix): another one makes the indexer check every memory once. No row yet: the
        -- first pass checks every memory written before this migration.
        CREATE TABLE vectors_checked (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            model TEXT NOT NULL CHECK (length(model) > 0),
            document_prefix TEXT NOT NULL,
            checked_at REAL NOT NULL
        );
        """,
    ),
    (
        16,
        """
        -- Answered turns per UTC day (a Unix day number), by why they ran degraded and by
        -- reply latency bucket (bucket b: from 1.05^b ms to 1.05^(b+1) ms): the operator's page
        -- reads turns per day and latency percentiles from a few hundred rows whatever the
        -- traffic. No person, no text; kept TIMING_DAYS days.
        CREATE TABLE turn_days (
            day INTEGER NOT NULL,
            degraded TEXT NOT NULL CHECK (degraded IN ('', 'embedding', 'vectors')),
            bucket INTEGER NOT NULL CHECK (bucket >= 0),
            turns INTEGER NOT NULL CHECK (turns > 0),
            PRIMARY KEY (day, degraded, bucket)
        ) WITHOUT ROWID;

        -- What reflections did with their candidate memories per UTC day (a Unix day number):
        -- created, merged, absorbed, or rejected (with the reason). Filled from the reports of
        -- the reflections applied so far, then counted as each one is applied.
        CREATE TABLE reflection_days (
            day INTEGER NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('created', 'merged', 'absorbed', 'rejected')),
            reason TEXT NOT NULL,
            candidates INTEGER NOT NULL CHECK (candidates > 0),
            PRIMARY KEY (day, action, reason)
        ) WITHOUT ROWID;
        INSERT INTO reflection_days (day, action, reason, candidates)
            SELECT CAST(a.applied_at / 86400 AS INTEGER), json_extract(o.value, '$.action'),
                coalesce(json_extract(o.value, '$.reason'), ''), count(*)
            FROM applied_exchanges a, json_each(a.report, '$.outcomes') o
            WHERE json_extract(o.value, '$.action')
                IN ('created', 'merged', 'absorbed', 'rejected')
            GROUP BY 1, 2, 3;

        -- The context plan of a recorded turn: each block's kind, key, status, reason and
        -- tokens (ids only, no text); it goes with its turn.
        CREATE TABLE turn_plans (
            turn_id INTEGER PRIMARY KEY REFERENCES turns (id) ON DELETE CASCADE,
            latency_ms REAL NOT NULL CHECK (latency_ms >= 0),
            strategy TEXT NOT NULL,
            tokens INTEGER NOT NULL CHECK (tokens >= 0),
            budget INTEGER NOT NULL CHECK (budget >= 0),
            decisions TEXT NOT NULL CHECK (json_valid(decisions) AND json_type(decisions) = 'array')
        );

        -- The operator's page at 100k memories: a person's last name seen, the never-served
        -- memories oldest first.
        CREATE INDEX messages_by_user ON messages (user_id, id) WHERE user_id IS NOT NULL;
        CREATE INDEX memories_by_created ON memories (created_at, id);
        """,
    ),
    (
        17,
        """
        -- Several processes drain one outbox: a process claims a due row by writing who holds
        -- it (one claim's token) and until when; a row whose holder died returns when its lease
        -- ends. Cleared when the row is done, failed or given back.
        ALTER TABLE outbox ADD COLUMN leased_by TEXT
            CHECK (leased_by IS NULL OR length(leased_by) BETWEEN 1 AND 200);
        ALTER TABLE outbox ADD COLUMN lease_until REAL
            CHECK (lease_until IS NULL OR lease_until > 0);
        CREATE INDEX outbox_leased ON outbox (lease_until) WHERE lease_until IS NOT NULL;

        -- A number per person that every commit changing their memories, vectors or privacy
        -- choice raises by one, in the same transaction: another process's cached pools,
        -- matrices and dedup indexes compare it with the one they were built at. And the last
        -- generation that changed more than vectors: a pool needs no rebuild after the
        -- indexer's commits.
        CREATE TABLE person_generations (
            user_id INTEGER PRIMARY KEY,
            generation INTEGER NOT NULL CHECK (generation > 0),
            rows_generation INTEGER NOT NULL CHECK (rows_generation BETWEEN 0 AND generation)
        );
        """,
    ),
    (
        18,
        """
        -- A memory recalled by the person's messages just before this one: its own reason, so
        -- /why says so (SQLite cannot widen a CHECK in place: the table is rebuilt).
        CREATE TABLE turn_selections_18 (
            turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            reason TEXT NOT NULL
                CHECK (reason IN ('pinned', 'global', 'semantic', 'conversation', 'quota',
                                  'fallback', 'rule')),
            score REAL CHECK (score IS NULL OR score BETWEEN -1.0 AND 1.0),
            matched TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (turn_id, memory_id)
        );
        INSERT INTO turn_selections_18 (turn_id, memory_id, position, reason, score, matched)
            SELECT turn_id, memory_id, position, reason, score, matched FROM turn_selections;
        DROP TABLE turn_selections;
        ALTER TABLE turn_selections_18 RENAME TO turn_selections;
        """,
    ),
)

LATEST = MIGRATIONS[-1][0]
