"""Per-story context settings and state, and the token estimator's calibration per model."""

from __future__ import annotations

import json

from memory.model import CondensedHistory
from memory.store.db import Store, Tx


async def strategy(store: Store, story_id: int) -> str | None:
    """The strategy chosen for a story, or None for the configured default."""
    row = await store.fetchone("SELECT strategy FROM story_context WHERE story_id = ?", (story_id,))
    return str(row[0]) if row and row[0] is not None else None


async def set_strategy(tx: Tx, story_id: int, name: str | None, *, now: float) -> None:
    """Choose a story's strategy (None: back to the default)."""
    await tx.execute(
        "INSERT INTO story_context (story_id, strategy, updated_at) VALUES (?, ?, ?)"
        " ON CONFLICT (story_id) DO UPDATE SET strategy = excluded.strategy,"
        " updated_at = excluded.updated_at",
        (story_id, name, now),
    )


async def condensed(store: Store, story_id: int) -> CondensedHistory:
    """The story's condensed history (empty when nothing was condensed yet)."""
    row = await store.fetchone(
        "SELECT summary, summary_through, summary_omitted, summary_sources FROM story_context"
        " WHERE story_id = ?",
        (story_id,),
    )
    if row is None:
        return CondensedHistory()
    return CondensedHistory(
        tuple(str(s) for s in json.loads(row[0])),
        int(row[1]),
        tuple(int(i) for i in json.loads(row[2])),
        tuple(int(i) for i in json.loads(row[3])),
    )


async def set_condensed(tx: Tx, story_id: int, value: CondensedHistory, *, now: float) -> None:
    """Store the condensed history; an older one (a slower concurrent turn) never wins. A
    sentence whose message is no longer stored (forgotten, or pruned while this turn ran) is
    left out."""
    await tx.serialize("erasure", shared=True)  # an erasure running commits first: erasure.erase
    gone = await _gone(tx, {value.source_of(i) for i in range(len(value.sentences))} - {0})
    kept = [i for i in range(len(value.sentences)) if value.source_of(i) not in gone]
    await tx.execute(
        "INSERT INTO story_context (story_id, summary, summary_through, summary_omitted,"
        " summary_sources, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (story_id) DO UPDATE"
        " SET summary = excluded.summary, summary_through = excluded.summary_through,"
        " summary_omitted = excluded.summary_omitted, summary_sources = excluded.summary_sources,"
        " updated_at = excluded.updated_at"
        " WHERE excluded.summary_through > story_context.summary_through",
        (
            story_id,
            json.dumps([value.sentences[i] for i in kept], ensure_ascii=False),
            value.through_id,
            json.dumps(list(value.omitted)),
            json.dumps([value.source_of(i) for i in kept]),
            now,
        ),
    )


async def drop_sentences(tx: Tx, story_id: int, message_ids: set[int], *, before: int) -> int:
    """Take out of the story's condensed history the sentences of these messages, and those of
    unknown origin when a message at or below `before` is among them (any could be one of its
    sentences); return how many went."""
    row = await tx.fetchone(
        "SELECT summary, summary_sources, summary_through FROM story_context WHERE story_id = ?",
        (story_id,),
    )
    if row is None:
        return 0
    value = CondensedHistory(
        tuple(json.loads(row[0])), int(row[2]), sources=tuple(json.loads(row[1]))
    )
    unknown_too = before <= value.through_id
    kept = [
        i
        for i in range(len(value.sentences))
        if value.source_of(i) not in message_ids and (value.source_of(i) or not unknown_too)
    ]
    if len(kept) == len(value.sentences):
        return 0
    await tx.execute(
        "UPDATE story_context SET summary = ?, summary_sources = ? WHERE story_id = ?",
        (
            json.dumps([value.sentences[i] for i in kept], ensure_ascii=False),
            json.dumps([value.source_of(i) for i in kept]),
            story_id,
        ),
    )
    return len(value.sentences) - len(kept)


async def _gone(tx: Tx, message_ids: set[int]) -> set[int]:
    """Those of these message ids that are no longer stored."""
    if not message_ids:
        return set()
    wanted = sorted(message_ids)
    marks = ", ".join("?" * len(wanted))
    rows = await tx.fetchall(f"SELECT id FROM messages WHERE id IN ({marks})", wanted)
    return message_ids - {int(r[0]) for r in rows}


Calibration = tuple[float, tuple[float, ...], int, int]


async def calibration(store: Store | Tx, model: str) -> Calibration | None:
    """(factor, recent ratios, samples, rejected) for a chat model, or None before any report;
    read in a write transaction, what every process learned so far."""
    # In a write transaction, what this read returns stays current until the commit that saves
    # what it learns on top of it: two processes never both learn from the same value. A lock
    # on the job, not on the row: before the first save there is no row to lock, and two
    # first samples at once lost one (PostgreSQL; SQLite has one writer at a time).
    # The row locked too: a process that saves with `advance_calibration` waits for this
    # transaction, then finds the row moved on.
    locked = ""
    if isinstance(store, Tx):
        await store.serialize("calibration")
        locked = store.for_update()
    row = await store.fetchone(
        "SELECT factor, recent, samples, rejected FROM token_calibration WHERE model = ?" + locked,
        (model,),
    )
    if row is None:
        return None
    recent = tuple(float(r) for r in json.loads(row[1]))
    return float(row[0]), recent, int(row[2]), int(row[3])


async def save_calibration(tx: Tx, model: str, value: Calibration, *, now: float) -> None:
    factor, recent, samples, rejected = value
    await tx.execute(
        "INSERT INTO token_calibration (model, factor, recent, samples, rejected, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model) DO UPDATE SET factor = excluded.factor,"
        " recent = excluded.recent, samples = excluded.samples,"
        " rejected = excluded.rejected, updated_at = excluded.updated_at",
        (model, factor, json.dumps(list(recent)), samples, rejected, now),
    )


async def advance_calibration(
    tx: Tx, model: str, value: Calibration, *, was: tuple[int, int], now: float
) -> bool:
    """Save what was learned on top of the stored calibration whose (samples, rejected) are
    `was`, in one statement; False (nothing saved) when the row is not that one: another
    process learned since, or nothing was saved yet (then `calibration` and
    `save_calibration`). Each save adds one to samples or to rejected, so the pair names the
    row's version."""
    factor, recent, samples, rejected = value
    await tx.execute(
        "UPDATE token_calibration SET factor = ?, recent = ?, samples = ?, rejected = ?,"
        " updated_at = ? WHERE model = ? AND samples = ? AND rejected = ?",
        (factor, json.dumps(list(recent)), samples, rejected, now, model, *was),
    )
    return bool(await tx.changes())
