"""Schema 10: a person's waiting reflections, oldest first (an index)."""

from __future__ import annotations

SQL = """
        -- A person's waiting reflections, oldest first: the per-person backlog bound and the
        -- round-robin drain read them at every enqueue.
        CREATE INDEX outbox_pending_by_user ON outbox (user_id, next_attempt_at, id)
            WHERE status = 'pending';
        """
