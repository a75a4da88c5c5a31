"""Queries on the memories table. Every query that reads or changes memories takes the user id,
so a user can only ever reach their own memories: isolation lives in the WHERE clauses.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Collection, Sequence

from memory.bulk import made, paused, quiet, yielding
from memory.model import DM_ORIGIN, Kind, Memory, Scope
from memory.store.db import Row, Store, Tx

# The columns `from_row` reads (by position), with their counters, and where they come from.
MEMORY_COLUMNS = (
    "m.id, m.user_id, m.text, m.kind, m.scope, m.story_id, m.origin, m.confidence,"
    " m.pinned, m.created_at, m.updated_at, m.content_hash,"
    " coalesce(b.turns, 0) - coalesce(c.candidate_base, 0) AS candidate_count,"
    " coalesce(c.served, 0) AS served_count, coalesce(c.semantic, 0) AS semantic_count"
)
MEMORY_FROM = (
    "FROM memories m"
    " LEFT JOIN memory_counters c ON c.memory_id = m.id"
    " LEFT JOIN turn_buckets b ON b.user_id = m.user_id AND b.bucket = c.bucket"
)
SELECT_MEMORY = f"SELECT {MEMORY_COLUMNS} {MEMORY_FROM}"


def text_hash(text: str) -> str:
    """Return the sha256 of a memory's text (what changes when its wording changes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bucket_of(scope: Scope, story_id: int | None, origin: str | None) -> str:
    """Return the turns that make a memory a candidate: its story's, DM turns, or every turn."""
    if scope is Scope.STORY:
        return f"story:{story_id}"
    return "dm" if origin == DM_ORIGIN else "all"


def turn_buckets(story_id: int, origin: str) -> list[str]:
    """Return the buckets a turn in this story counts for (the inverse of `bucket_of`)."""
    buckets = ["all", f"story:{story_id}"]
    if origin == DM_ORIGIN:
        buckets.append("dm")
    return buckets


# Candidate pools skip the counters: selection never reads them, and the joins cost a third of
# a pool rebuild at 100k memories.
SELECT_FOR_POOL = (
    "SELECT m.id, m.user_id, m.text, m.kind, m.scope, m.story_id, m.origin, m.confidence,"
    " m.pinned, m.created_at, m.updated_at, m.content_hash, 0, 0, 0 FROM memories m"
)

_KINDS = {k.value: k for k in Kind}
_SCOPES = {s.value: s for s in Scope}


def from_row(row: Row) -> Memory:
    """Build a Memory from a row of `SELECT_MEMORY` (or `SELECT_FOR_POOL`).

    Positional access and enum lookups by dict: a pool rebuild makes one per memory.
    """
    return Memory(
        id=row[0],
        user_id=row[1],
        text=row[2],
        kind=_KINDS[row[3]],
        scope=_SCOPES[row[4]],
        story_id=row[5],
        origin=row[6],
        confidence=row[7],
        pinned=bool(row[8]),
        created_at=row[9],
        updated_at=row[10],
        content_hash=row[11],
        candidate_count=row[12],
        served_count=row[13],
        semantic_count=row[14],
    )


def visible_where(origin: str, *, everywhere: bool = False) -> str:
    """The WHERE clause (on alias `m`, parameters user_id, story_id, origin) of what may be
    served here.

    A story memory is served only in its story, a memory learned in a DM only in DMs. Other
    memories are served only where they were learned (their server, or DMs), unless the person
    chose `everywhere`: then a server's memories are served in every server and in DMs.
    """
    if not everywhere:
        place = "m.origin = ?"
    elif origin == DM_ORIGIN:
        place = "(m.origin = ? OR 1 = 1)"
    else:
        place = "(m.origin = ? OR m.origin <> 'dm')"
    return f"m.user_id = ? AND (m.scope = 'global' OR m.story_id = ?) AND {place}"


async def visible(
    store: Store,
    user_id: int,
    story_id: int,
    origin: str,
    *,
    counters: bool = True,
    everywhere: bool = False,
) -> list[Memory]:
    """Return the user's memories that may be served in this story (counters left at 0 when
    `counters` is false)."""
    select = SELECT_MEMORY if counters else SELECT_FOR_POOL
    where = visible_where(origin, everywhere=everywhere)
    # The rows are objects the collector tracks: a full collection triggered while 100,000 of
    # them are read walks every object of the process, every thread waiting (22-41 ms beside a
    # cold turn at 100k memories, make bench-loop). Paused meanwhile, frozen after.
    with paused():
        rows = await store.fetchall(
            f"{select} WHERE {where} ORDER BY m.id", (user_id, story_id, origin)
        )
    # One object per memory (0.1 s and more at 100k): in a worker thread, off the event loop.
    return await asyncio.to_thread(quiet(from_rows), rows)


def from_rows(rows: Sequence[Row]) -> list[Memory]:
    """`from_row` of every row (in a worker thread: it lets go of the interpreter lock)."""
    return [from_row(r) for r in yielding(rows)]


# Ids per query (SQLite's default limit of bound parameters is 32,766; stay far below).
ID_BATCH = 500


async def visible_among(
    store: Store,
    user_id: int,
    story_id: int,
    origin: str,
    ids: Collection[int],
    *,
    everywhere: bool = False,
) -> list[Memory]:
    """Those of `ids` that are this user's memories and may be served in this story (for the
    pool, counters left at 0)."""
    found: list[Memory] = []
    wanted = sorted(ids)
    where = visible_where(origin, everywhere=everywhere)
    for start in range(0, len(wanted), ID_BATCH):
        batch = wanted[start : start + ID_BATCH]
        marks = ", ".join("?" * len(batch))
        rows = await store.fetchall(
            f"{SELECT_FOR_POOL} WHERE {where} AND m.id IN ({marks})",
            (user_id, story_id, origin, *batch),
        )
        found += [from_row(r) for r in rows]
    return found


_MERGE_POOL = (
    f"{SELECT_MEMORY} WHERE m.user_id = ? AND m.origin = ? AND m.kind <> 'rule'"
    " AND (m.scope = 'global' OR m.story_id = ?)"
)


async def merge_pool(db: Store | Tx, user_id: int, story_id: int, origin: str) -> list[Memory]:
    """Return the memories a new one from this story may merge with (learned in the same
    place, no rules), read in a transaction or outside any (the dedup index is built before
    the write transaction, then checked against the store's generation inside it).

    A candidate merges only with memories learned where it was (the same server, or DMs):
    otherwise a merge could carry one server's wording into another, or DM wording into a
    server, where the memory is served.
    """
    rows = await db.fetchall(f"{_MERGE_POOL} ORDER BY m.id", (user_id, origin, story_id))
    return await asyncio.to_thread(quiet(from_rows), rows)


class PoolRows:
    """The merge pool as read, a row made into a `Memory` only when asked: a dedup decision
    scores a handful of a person's memories, and making all 100,000 took seconds of the
    interpreter lock beside everyone's turns (a `memory.write.dedup_index.Source`)."""

    def __init__(self, rows: list[Row]) -> None:
        self.items = rows

    def __len__(self) -> int:
        return len(self.items)

    def memory(self, i: int) -> Memory:
        return from_row(self.items[i])

    def text(self, i: int) -> str:
        return str(self.items[i][2])

    def ids(self) -> list[int]:
        return [int(r[0]) for r in self.items]

    def texts(self) -> list[str]:
        return [str(r[2]) for r in self.items]


async def merge_rows(db: Store | Tx, user_id: int, story_id: int, origin: str) -> PoolRows:
    """`merge_pool`, its rows left as read (in ascending id order)."""
    with paused():  # as in `visible`
        rows = await db.fetchall(f"{_MERGE_POOL} ORDER BY m.id", (user_id, origin, story_id))
        made(len(rows))  # kept by the dedup index's cache
    return PoolRows(rows)


async def merge_pool_among(
    tx: Tx, user_id: int, story_id: int, origin: str, ids: Collection[int]
) -> list[Memory]:
    """Those of `ids` that are in the merge pool now (to patch an index built before)."""
    found: list[Memory] = []
    wanted = sorted(ids)
    for start in range(0, len(wanted), ID_BATCH):
        batch = wanted[start : start + ID_BATCH]
        rows = await tx.fetchall(
            f"{_MERGE_POOL} AND m.id IN ({', '.join('?' * len(batch))}) ORDER BY m.id",
            (user_id, origin, story_id, *batch),
        )
        found += [from_row(r) for r in rows]
    return found


async def _bucket_turns(tx: Tx, user_id: int, bucket: str) -> int:
    row = await tx.fetchone(
        "SELECT turns FROM turn_buckets WHERE user_id = ? AND bucket = ?", (user_id, bucket)
    )
    return int(row[0]) if row else 0


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
    """Insert a memory (and its counters, starting from now) and return it."""
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
    bucket = bucket_of(scope, story, origin)
    await tx.execute(
        "INSERT INTO memory_counters (memory_id, bucket, candidate_base) VALUES (?, ?, ?)",
        (memory_id, bucket, await _bucket_turns(tx, user_id, bucket)),
    )
    tx.touch(user_id, [memory_id])
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
    updated = max(now, memory.created_at)
    await tx.execute(
        "UPDATE memories SET text = ?, scope = ?, story_id = ?, confidence = ?, updated_at = ?,"
        " content_hash = ? WHERE id = ? AND user_id = ?",
        (text, scope.value, story, confidence, updated, digest, memory.id, memory.user_id),
    )
    if scope is not memory.scope:
        await _rebase(tx, memory, bucket_of(scope, story, memory.origin))
    tx.touch(memory.user_id, [memory.id])
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
        updated_at=updated,
        content_hash=digest,
    )


async def _rebase(tx: Tx, memory: Memory, new_bucket: str) -> None:
    # Keep the candidate count it has so far, counted from now on in its new bucket.
    row = await tx.fetchone(
        "SELECT c.bucket, c.candidate_base FROM memory_counters c WHERE c.memory_id = ?",
        (memory.id,),
    )
    if row is None:
        return
    so_far = await _bucket_turns(tx, memory.user_id, str(row[0])) - int(row[1])
    base = await _bucket_turns(tx, memory.user_id, new_bucket) - so_far
    await tx.execute(
        "UPDATE memory_counters SET bucket = ?, candidate_base = ? WHERE memory_id = ?",
        (new_bucket, base, memory.id),
    )


async def get(store: Store, user_id: int, memory_id: int) -> Memory | None:
    """Return the user's memory with this id, or None (also for another user's id)."""
    row = await store.fetchone(
        f"{SELECT_MEMORY} WHERE m.id = ? AND m.user_id = ?", (memory_id, user_id)
    )
    return from_row(row) if row else None


async def texts_of(tx: Store | Tx, user_id: int, ids: Sequence[int]) -> dict[int, str]:
    """The current wording of those of `ids` that are the user's memories (others left out)."""
    found: dict[int, str] = {}
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), ID_BATCH):
        batch = wanted[start : start + ID_BATCH]
        rows = await tx.fetchall(
            f"SELECT id, text FROM memories WHERE user_id = ? AND id IN"
            f" ({', '.join('?' * len(batch))})",
            (user_id, *batch),
        )
        found.update({int(r[0]): str(r[1]) for r in rows})
    return found


async def list_for_user(store: Store | Tx, user_id: int) -> list[Memory]:
    """Return all of a user's memories, newest first (in a transaction or outside any)."""
    rows = await store.fetchall(
        f"{SELECT_MEMORY} WHERE m.user_id = ? ORDER BY m.updated_at DESC, m.id DESC", (user_id,)
    )
    return [from_row(r) for r in rows]


async def set_pinned(tx: Tx, user_id: int, memory_id: int, pinned: bool) -> bool:
    """Pin or unpin the user's memory; return False when no such memory is theirs."""
    await tx.execute(
        "UPDATE memories SET pinned = ? WHERE id = ? AND user_id = ?",
        (int(pinned), memory_id, user_id),
    )
    tx.touch(user_id, [memory_id])
    return await tx.changes() > 0


async def delete(tx: Tx, user_id: int, memory_ids: Sequence[int]) -> int:
    """Erase the user's memories with these ids (vectors and traces cascade); return how many."""
    erased = 0
    for memory_id in memory_ids:
        await tx.execute("DELETE FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id))
        erased += await tx.changes()
    tx.touch(user_id, memory_ids)
    return erased
