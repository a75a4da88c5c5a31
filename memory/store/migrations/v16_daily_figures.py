"""Schema 16: turns and reflection outcomes per day, each turn's context plan: the
operator's page."""

from __future__ import annotations

SQL = """
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
        """
