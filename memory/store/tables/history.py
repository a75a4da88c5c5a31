"""The conversation history of each story, and its rolling summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.model import Source
from memory.store.db import Row, Store, Tx


@dataclass(frozen=True, slots=True)
class HistoryMessage:
    """One stored message of a story."""

    id: int
    role: str
    author_name: str
    content: str
    user_id: int | None = None
    excluded: bool = False
    source_id: str = ""
    story_id: int = 0
    created_at: float = 0.0


async def add_user_message(
    tx: Tx,
    *,
    source_id: str,
    story_id: int,
    user_id: int,
    author_name: str,
    content: str,
    now: float,
) -> int | None:
    """Store a user's message; return its row id, or None if this source id was already stored
    or an erasure removed it (erasure.was_erased, asked in the same statement)."""
    row_id = await tx.execute(
        "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
        " created_at) SELECT ?1, ?2, ?3, 'user', ?4, ?5, ?6"
        " WHERE NOT EXISTS (SELECT 1 FROM erased_exchanges WHERE exchange_id = ?1)"
        " ON CONFLICT (source_id) DO NOTHING",
        (source_id, story_id, user_id, author_name, content, now),
    )
    if await tx.changes() == 0:
        return None
    return row_id


async def has_spoken(tx: Tx, story_id: int, user_id: int) -> bool:
    """Tell whether this person already has a message in this story."""
    row = await tx.fetchone(
        "SELECT 1 FROM messages WHERE story_id = ? AND user_id = ? LIMIT 1", (story_id, user_id)
    )
    return row is not None


async def add_reply(
    tx: Tx,
    *,
    source_id: str,
    story_id: int,
    author_name: str,
    content: str,
    now: float,
    unless_erased: str = "",
) -> bool:
    """Store the character's reply; return whether it was added (False: this source id was
    already stored, or the exchange `unless_erased` names was erased, asked in the same
    statement)."""
    await tx.execute(
        "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
        " created_at) SELECT ?1, ?2, NULL, 'assistant', ?3, ?4, ?5"
        " WHERE NOT EXISTS (SELECT 1 FROM erased_exchanges WHERE exchange_id = ?6)"
        " ON CONFLICT (source_id) DO NOTHING",
        (source_id, story_id, author_name, content, now, unless_erased),
    )
    return bool(await tx.changes())


async def move_source(tx: Tx, old: str, new: str) -> None:
    """Give a stored message another source id (a greeting sent with a later message than the
    one it was stored with); nothing changes when `new` is taken."""
    await tx.execute(
        "UPDATE messages SET source_id = ?1 WHERE source_id = ?2"
        " AND NOT EXISTS (SELECT 1 FROM messages WHERE source_id = ?1)",
        (new, old),
    )


_MESSAGE = (
    "SELECT id, role, author_name, content, user_id, excluded, source_id, story_id, created_at"
    " FROM messages"
)


def _message(r: Row) -> HistoryMessage:
    return HistoryMessage(
        int(r[0]),
        str(r[1]),
        str(r[2]),
        str(r[3]),
        r[4],
        bool(r[5]),
        str(r[6]),
        int(r[7]),
        float(r[8]),
    )


async def recent(
    store: Store,
    story_id: int,
    *,
    limit: int,
    before_id: int | None = None,
    include_excluded: bool = False,
) -> list[HistoryMessage]:
    """Return the story's last `limit` messages, oldest first; those people excluded from the
    context only when asked (they stay in history, marked)."""
    rows = await store.fetchall(
        f"{_MESSAGE} WHERE story_id = ? AND id < ? AND (excluded = 0 OR ?)"
        " ORDER BY id DESC LIMIT ?",
        (story_id, before_id if before_id is not None else 2**62, include_excluded, limit),
    )
    return [_message(r) for r in reversed(rows)]


async def said_at(db: Store | Tx, source_id: str) -> float | None:
    """When a person's stored message was said (stored by its turn), or None."""
    row = await db.fetchone(
        "SELECT created_at FROM messages WHERE source_id = ? AND role = 'user'", (source_id,)
    )
    return float(row[0]) if row else None


async def by_source(store: Store, source_id: str) -> HistoryMessage | None:
    """The stored message with this source id ("discord:<id>", "discord:<id>:reply")."""
    row = await store.fetchone(f"{_MESSAGE} WHERE source_id = ?", (source_id,))
    return _message(row) if row else None


async def among(store: Store, source_ids: Sequence[str]) -> list[HistoryMessage]:
    """The stored messages among these source ids (one read per 500; most are not stored)."""
    wanted = sorted(set(source_ids))
    found: list[HistoryMessage] = []
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        rows = await store.fetchall(
            f"{_MESSAGE} WHERE source_id IN ({', '.join('?' * len(batch))})", batch
        )
        found += [_message(r) for r in rows]
    return found


async def in_story(store: Store, story_id: int, message_id: int) -> HistoryMessage | None:
    """The stored message with this id, if it belongs to the story."""
    row = await store.fetchone(f"{_MESSAGE} WHERE id = ? AND story_id = ?", (message_id, story_id))
    return _message(row) if row else None


async def set_excluded(tx: Tx, message_id: int, excluded: bool) -> None:
    """Keep a message out of the context (or let it back in); it stays in history."""
    await tx.execute("UPDATE messages SET excluded = ? WHERE id = ?", (int(excluded), message_id))


async def summary(store: Store, story_id: int) -> str:
    """Return the story's rolling summary ('' when there is none yet)."""
    row = await store.fetchone(
        "SELECT summary FROM story_summaries WHERE story_id = ?", (story_id,)
    )
    return str(row[0]) if row else ""


async def summary_dated(store: Store, story_id: int) -> tuple[str, float | None]:
    """Return the story's rolling summary and when it was written ('' and None: none yet)."""
    row = await store.fetchone(
        "SELECT summary, updated_at FROM story_summaries WHERE story_id = ?", (story_id,)
    )
    return (str(row[0]), float(row[1])) if row else ("", None)


# Revisions of a story's rolling summary kept: forgetting an exchange takes the summary back to
# the last one written before it. Every reflection rewrites it, so 64 is an evening of a busy
# channel (a few KB each); forgetting an older message clears the summary instead, until the
# next reflection writes one.
KEPT_REVISIONS = 64


async def set_summary(tx: Tx, story_id: int, text: str, now: float, *, source: Source) -> None:
    """Replace the story's rolling summary, keeping the revision and the exchange it came from."""
    await tx.execute(
        "INSERT INTO story_summaries (story_id, summary, updated_at) VALUES (?, ?, ?)"
        " ON CONFLICT (story_id) DO UPDATE SET summary = excluded.summary,"
        " updated_at = excluded.updated_at",
        (story_id, text, now),
    )
    await tx.execute(
        "INSERT INTO summary_revisions (story_id, summary, exchange_id, user_id, at)"
        " VALUES (?, ?, ?, ?, ?)",
        (story_id, text, source.exchange_id, source.user_id, now),
    )
    await tx.execute(
        "DELETE FROM summary_revisions WHERE story_id = ?1 AND id NOT IN (SELECT id FROM"
        " summary_revisions WHERE story_id = ?1 ORDER BY at DESC, id DESC LIMIT ?2)",
        (story_id, KEPT_REVISIONS),
    )
