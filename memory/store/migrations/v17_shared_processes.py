"""Schema 17: outbox leases and per-person generations: several processes on one
database."""

from __future__ import annotations

SQL = """
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
        """
