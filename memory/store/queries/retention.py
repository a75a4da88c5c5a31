"""How long texts stay: the outbox of reflections that failed, and the conversation history.

A finished reflection keeps no text at all (outbox.mark_done). A dropped one keeps its exchange
for DROPPED_TEXT_SECONDS, then only its ids and error. Messages older than `[privacy]
history_days` leave the history with the condensed sentences taken from them; what the
reflections learned from them (memories, anchors, positions, the rolling summary) stays until
someone forgets it.
"""

from __future__ import annotations

from memory.store.db import Tx
from memory.store.tables import story_context

# A reflection dropped after its retries keeps the exchange a week: long enough for an operator
# who saw the failure in /stats to reproduce it against the same text, then only ids remain.
DROPPED_TEXT_SECONDS = 7 * 86_400

# Messages removed per transaction when pruning: a first prune of a long history must not hold
# the write lock for seconds while people talk.
PRUNE_BATCH = 500


async def purge_dropped(tx: Tx, *, now: float) -> int:
    """Blank the texts of reflections dropped more than DROPPED_TEXT_SECONDS ago (and of any
    finished one that still holds some); return how many rows."""
    await tx.execute(
        "UPDATE outbox SET user_name = '', user_message = '', reply = ''"
        " WHERE (user_message <> '' OR reply <> '' OR user_name <> '')"
        " AND (status = 'done' OR (status = 'dropped' AND created_at < ?))",
        (now - DROPPED_TEXT_SECONDS,),
    )
    return await tx.changes()


async def prune_history(tx: Tx, *, before: float) -> int:
    """Remove up to PRUNE_BATCH messages older than `before`, and the condensed sentences taken
    from them; return how many messages went (PRUNE_BATCH: call again).

    Alone, as an erasure (erasure.erase): a turn condensing the history in another process
    checked its messages were still stored before this commit, and wrote their sentences back
    after it (PostgreSQL; tests/pg/test_pg_erasure.py)."""
    await tx.serialize("erasure")
    rows = await tx.fetchall(
        "SELECT id, story_id, source_id FROM messages WHERE created_at < ? ORDER BY id LIMIT ?",
        (before, PRUNE_BATCH),
    )
    by_story: dict[int, set[int]] = {}
    for r in rows:
        by_story.setdefault(int(r[1]), set()).add(int(r[0]))
    for story_id, ids in by_story.items():
        await story_context.drop_sentences(tx, story_id, ids, before=min(ids))
    removed = [int(r[0]) for r in rows]
    if removed:
        marks = ", ".join("?" * len(removed))
        await tx.execute(f"DELETE FROM messages WHERE id IN ({marks})", removed)
    # The records of a pruned reply's posts point at nothing any more.
    replies = [str(r[2]).removesuffix(":reply") for r in rows if str(r[2]).endswith(":reply")]
    if replies:
        marks = ", ".join("?" * len(replies))
        await tx.execute(f"DELETE FROM sent_messages WHERE exchange_id IN ({marks})", replies)
    return len(removed)
