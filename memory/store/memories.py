"""Queries on the memories table. Every query that reads or changes memories takes the user id,
so a user can only ever reach their own memories: isolation lives in the WHERE clauses.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence

from memory.model import DM_ORIGIN, Kind, Memory, Scope
from memory.store.db import Store, Tx

_COLUMNS = (
    "id, user_id, text, kind, scope, story_id, origin, confidence, pinned, created_at,"
    " updated_at, content_hash"
)


def text_hash(text: str) -> str:
    """Return the sha256 of a memory's text (what changes when its wording changes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def from_row(row: sqlite3.Row) -> Memory:
    """Build a Memory from a row of `_COLUMNS`."""
    return Memory(
        id=int(row["id"]),
        user_id=int(row["user_id"]),
        text=str(row["text"]),
        kind=Kind(row["kind"]),
        scope=Scope(row["scope"]),
        story_id=None if row["story_id"] is None else int(row["story_id"]),
        origin=str(row["origin"]),
        confidence=float(row["confidence"]),
        pinned=bool(row["pinned"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        content_hash=str(row["content_hash"]),
    )


def _visible_sql(story_id: int, origin: str) -> tuple[str, list[object]]:
    # A memory learned in a DM is served only in DMs; story memories only in their story.
    where = "user_id = ? AND (scope = 'global' OR story_id = ?)"
    params: list[object] = [story_id]
    if origin != DM_ORIGIN:
        where += " AND origin <> 'dm'"
    return where, params


async def visible(store: Store, user_id: int, story_id: int, origin: str) -> list[Memory]:
    """Return the user's memories that may be served in this story."""
    where, params = _visible_sql(story_id, origin)
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM memories WHERE {where} ORDER BY id", [user_id, *params]
    )
    return [from_row(r) for r in rows]


async def merge_pool(tx: Tx, user_id: int, story_id: int, origin: str) -> list[Memory]:
    """Return the memories a new one from this story may merge with (same privacy side, no rules).

    A DM-learned candidate merges only with DM memories and a guild one only with guild memories:
    otherwise a merge could carry DM wording into guilds, or hide a public fact in DMs.
    """
    side = "origin = 'dm'" if origin == DM_ORIGIN else "origin <> 'dm'"
    rows = await tx.fetchall(
        f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? AND {side} AND kind <> 'rule'"
        " AND (scope = 'global' OR story_id = ?) ORDER BY id",
        (user_id, story_id),
    )
    return [from_row(r) for r in rows]


async def insert(
    tx: Tx,
    *,
    user_id: int,
    text: str,
    kind: Kind,
    scope: Scope,
    story_id: int | None,
    origin: str,
    confidence: float,
    now: float,
    pinned: bool = False,
) -> Memory:
    """Insert a memory and return it."""
    story = story_id if scope is Scope.STORY else None
    digest = text_hash(text)
    memory_id = await tx.execute(
        "INSERT INTO memories (user_id, text, kind, scope, story_id, origin, confidence, pinned,"
        " created_at, updated_at, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            user_id,
            text,
            kind.value,
            scope.value,
            story,
            origin,
            confidence,
            int(pinned),
            now,
            now,
            digest,
        ),
    )
    return Memory(
        id=memory_id,
        user_id=user_id,
        text=text,
        kind=kind,
        scope=scope,
        story_id=story,
        origin=origin,
        confidence=confidence,
        pinned=pinned,
        created_at=now,
        updated_at=now,
        content_hash=digest,
    )


async def rewrite(
    tx: Tx, memory: Memory, *, text: str, scope: Scope, confidence: float, now: float
) -> Memory:
    """Replace a memory's wording (a richer variant arrived); its date moves to `now`."""
    story = memory.story_id if scope is Scope.STORY else None
    digest = text_hash(text)
    await tx.execute(
        "UPDATE memories SET text = ?, scope = ?, story_id = ?, confidence = ?, updated_at = ?,"
        " content_hash = ? WHERE id = ? AND user_id = ?",
        (
            text,
            scope.value,
            story,
            confidence,
            max(now, memory.created_at),
            digest,
            memory.id,
            memory.user_id,
        ),
    )
    return Memory(
        id=memory.id,
        user_id=memory.user_id,
        text=text,
        kind=memory.kind,
        scope=scope,
        story_id=story,
        origin=memory.origin,
        confidence=confidence,
        pinned=memory.pinned,
        created_at=memory.created_at,
        updated_at=max(now, memory.created_at),
        content_hash=digest,
    )


async def get(store: Store, user_id: int, memory_id: int) -> Memory | None:
    """Return the user's memory with this id, or None (also for another user's id)."""
    row = await store.fetchone(
        f"SELECT {_COLUMNS} FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
    )
    return from_row(row) if row else None


async def list_for_user(store: Store, user_id: int) -> list[Memory]:
    """Return all of a user's memories, newest first."""
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? ORDER BY updated_at DESC, id DESC",
        (user_id,),
    )
    return [from_row(r) for r in rows]


async def set_pinned(tx: Tx, user_id: int, memory_id: int, pinned: bool) -> bool:
    """Pin or unpin the user's memory; return False when no such memory is theirs."""
    await tx.execute(
        "UPDATE memories SET pinned = ? WHERE id = ? AND user_id = ?",
        (int(pinned), memory_id, user_id),
    )
    return await tx.changes() > 0


async def delete(tx: Tx, user_id: int, memory_ids: Sequence[int]) -> int:
    """Erase the user's memories with these ids (vectors and traces cascade); return how many."""
    erased = 0
    for memory_id in memory_ids:
        await tx.execute("DELETE FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id))
        erased += await tx.changes()
    return erased
