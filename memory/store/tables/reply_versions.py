"""The versions of the character's reply to one message: each "Another answer" is one more,
◀ ▶ choose the one shown. The reply's row in `messages` always holds the text of the version
shown, and so does the exchange's pending outbox row: the reflection reads what was kept.

A version is the text, the turn whose selection produced it, and when. The first answer becomes
version 0 when a second one is asked for (a reply nobody asked again for costs no row). Versions
are kept `keep` at most per exchange (the oldest not shown goes first) and a bounded time
(`prune`, by the retention job); they go with the exchange when it is erased.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.store.db import Store, Tx
from memory.store.tables import outbox


@dataclass(frozen=True, slots=True)
class Asked:
    """The stored message an exchange answered, where it was said, and the reply shown."""

    exchange_id: str
    user_id: int
    story_id: int
    origin: str
    user_name: str
    text: str
    message_row: int  # the message's row in history: the story "as it was before it" ends there
    said_at: float
    reply: str
    # Whether its reflection is still to come: the versions may change (otherwise they settled).
    pending: bool


@dataclass(frozen=True, slots=True)
class Stored:
    """One stored version, in order."""

    text: str
    turn_id: int
    cut: int
    created_at: float
    shown: bool


async def asked(db: Store | Tx, exchange_id: str) -> Asked | None:
    """The message of this exchange and its reply as stored, or None when either is gone (erased,
    pruned, or never stored) or nothing says where it was said."""
    rows = await db.fetchall(
        "SELECT source_id, id, story_id, user_id, author_name, content, created_at FROM messages"
        " WHERE source_id IN (?, ?)",
        (exchange_id, f"{exchange_id}:reply"),
    )
    message = next((r for r in rows if r[0] == exchange_id), None)
    reply = next((r for r in rows if r[0] != exchange_id), None)
    # A reply an edit took back (it carried the old wording) leaves the message answerable.
    if message is None or message[3] is None:
        return None
    place = await db.fetchone(
        "SELECT origin, status = 'pending' FROM outbox WHERE exchange_id = ?", (exchange_id,)
    )
    if place is None:
        place = await db.fetchone(
            "SELECT origin, 0 FROM turns WHERE exchange_id = ? ORDER BY id LIMIT 1", (exchange_id,)
        )
    if place is None:
        return None
    return Asked(
        exchange_id,
        int(message[3]),
        int(message[2]),
        str(place[0]),
        str(message[4]),
        str(message[5]),
        int(message[1]),
        float(message[6]),
        str(reply[5]) if reply else "",
        bool(place[1]),
    )


async def unanswered(db: Store | Tx, exchange_id: str) -> Asked | None:
    """The stored message of a turn that failed before its reply (the server down, an empty
    answer): not erased, no reply in the history, nothing queued for it; None otherwise."""
    if await db.fetchone("SELECT 1 FROM erased_exchanges WHERE exchange_id = ?", (exchange_id,)):
        return None
    if await db.fetchone("SELECT 1 FROM outbox WHERE exchange_id = ?", (exchange_id,)):
        return None
    found = await asked(db, exchange_id)
    return found if found is not None and not found.reply else None


async def listed(db: Store | Tx, exchange_id: str) -> list[Stored]:
    """The versions of this exchange's reply, oldest first (none: only the first answer)."""
    rows = await db.fetchall(
        "SELECT text, turn_id, cut, created_at, shown FROM reply_versions WHERE exchange_id = ?"
        " ORDER BY position",
        (exchange_id,),
    )
    return [Stored(str(r[0]), int(r[1]), int(r[2]), float(r[3]), bool(r[4])) for r in rows]


async def shown_turn(db: Store | Tx, exchange_id: str) -> int | None:
    """The turn behind the version shown, when versions were recorded and it is known."""
    row = await db.fetchone(
        "SELECT turn_id FROM reply_versions WHERE exchange_id = ? AND shown = 1 AND turn_id > 0",
        (exchange_id,),
    )
    return int(row[0]) if row else None


async def add(
    tx: Tx,
    exchange_id: str,
    *,
    text: str,
    turn_id: int,
    cut: int,
    now: float,
    keep: int,
    due: float,
) -> list[Stored] | None:
    """Record a new version and show it; return the versions, or None when the exchange is gone
    or settled meanwhile (erased, its reflection done: nothing changes)."""
    found = await _open(tx, exchange_id)
    if found is None:
        return None
    if found.reply and not await listed(tx, exchange_id):  # the first answer: version 0
        first = await tx.fetchone("SELECT min(id) FROM turns WHERE exchange_id = ?", (exchange_id,))
        reply_at = await tx.fetchone(
            "SELECT created_at FROM messages WHERE source_id = ?", (f"{exchange_id}:reply",)
        )
        await _insert(
            tx,
            exchange_id,
            found.user_id,
            0,
            found.reply,
            int(first[0] or 0) if first else 0,
            0,
            float(reply_at[0]) if reply_at else now,
        )
    row = await tx.fetchone(
        "SELECT max(position) FROM reply_versions WHERE exchange_id = ?", (exchange_id,)
    )
    position = int(row[0]) + 1 if row and row[0] is not None else 0
    await _insert(tx, exchange_id, found.user_id, position, text, turn_id, cut, now)
    # Past the bound, the oldest the person is not looking at go.
    await tx.execute(
        "DELETE FROM reply_versions WHERE id IN (SELECT id FROM reply_versions"
        " WHERE exchange_id = ?1 AND position <> ?2 ORDER BY position DESC LIMIT -1 OFFSET ?3)",
        (exchange_id, position, max(0, keep - 1)),
    )
    await _show(tx, exchange_id, position, text, due=due)
    return await listed(tx, exchange_id)


async def choose(
    tx: Tx, exchange_id: str, index: int, *, due: float
) -> tuple[list[Stored], int] | None:
    """Show version `index` (0-based, in order); return the versions and the index shown, or
    None when the exchange is gone or settled. IndexError when there is no such version."""
    if await _open(tx, exchange_id) is None:
        return None
    rows = await tx.fetchall(
        "SELECT position, text FROM reply_versions WHERE exchange_id = ? ORDER BY position",
        (exchange_id,),
    )
    if not 0 <= index < max(1, len(rows)):
        raise IndexError(index)
    if rows:
        await _show(tx, exchange_id, int(rows[index][0]), str(rows[index][1]), due=due)
    return await listed(tx, exchange_id), index


async def _open(tx: Tx, exchange_id: str) -> Asked | None:
    """The exchange, if its versions may still change: stored, not erased, not yet reflected."""
    # After an erasure's commit, or before it and erased with it (as turns.record).
    await tx.serialize("erasure", shared=True)
    if await tx.fetchone("SELECT 1 FROM erased_exchanges WHERE exchange_id = ?", (exchange_id,)):
        return None
    found = await asked(tx, exchange_id)
    return found if found is not None and found.pending else None


async def _insert(
    tx: Tx,
    exchange_id: str,
    user_id: int,
    position: int,
    text: str,
    turn_id: int,
    cut: int,
    at: float,
) -> None:
    await tx.execute(
        "INSERT INTO reply_versions (exchange_id, user_id, position, text, turn_id, cut,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (exchange_id, user_id, position, text, turn_id, cut, at),
    )


async def _show(tx: Tx, exchange_id: str, position: int, text: str, *, due: float) -> None:
    """Make one version the shown one: in the versions, the history and the outbox."""
    await tx.execute(
        "UPDATE reply_versions SET shown = CASE WHEN position = ? THEN 1 ELSE 0 END"
        " WHERE exchange_id = ?",
        (position, exchange_id),
    )
    await tx.execute(
        "UPDATE messages SET content = ? WHERE source_id = ?", (text, f"{exchange_id}:reply")
    )
    if not await tx.changes():  # the reply had left the history (an edit took it back)
        await tx.execute(
            "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
            " created_at) SELECT m.source_id || ':reply', m.story_id, NULL, 'assistant',"
            " COALESCE((SELECT a.author_name FROM messages a WHERE a.story_id = m.story_id"
            " AND a.role = 'assistant' ORDER BY a.id DESC LIMIT 1), ''), ?, m.created_at"
            " FROM messages m WHERE m.source_id = ?",
            (text, exchange_id),
        )
    await outbox.replace_reply(tx, exchange_id, text, due=due)


async def prune(tx: Tx, *, before: float) -> int:
    """Take out the versions of exchanges whose last version is older than `before` (the
    history keeps the one shown); return how many rows went."""
    await tx.execute(
        "DELETE FROM reply_versions WHERE exchange_id IN (SELECT exchange_id FROM reply_versions"
        " GROUP BY exchange_id HAVING max(created_at) < ?)",
        (before,),
    )
    return await tx.changes()


async def erase(tx: Tx, erasure_id: int, *, user_id: int | None) -> int:
    """Take out every version of the exchanges an erasure removes (and of the person's, for a
    person's erasure everywhere); return how many."""
    await tx.execute(
        "DELETE FROM reply_versions WHERE exchange_id IN"
        " (SELECT exchange_id FROM erased_exchanges WHERE erasure_id = ?) OR user_id = ?",
        (erasure_id, -1 if user_id is None else user_id),
    )
    return await tx.changes()
