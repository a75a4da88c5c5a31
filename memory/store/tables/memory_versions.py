"""Memories that change: the earlier versions of a memory, kept as history.

A memory keeps its id through its versions: the memories row holds the current wording (so its
pin, its counters, its events and the turns that served it follow it), `memory_versions` the
earlier ones, each valid from one date until another. Only the current wording is recalled
(keyword and vector indexes are built from the memories row); an earlier one is shown by
`/history`, exported, and goes with its memory however it is erased (ON DELETE CASCADE), or
alone when the exchange its words came from is forgotten (`erase_from`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from memory.model import MANUAL_EXCHANGE, Kind, Memory, Scope
from memory.store.db import Row, Store, Tx
from memory.store.queries.provenance import Carries, Copied
from memory.store.tables import applied_exchanges, memories

# What ends a version: a reflection's proposal the code accepted (a replacement), the person's
# edit, a restore, a dedup merge (a reworded copy saying more took its place).
ENDED_BY = ("reflection", "edit", "restore", "merge")

# The earlier versions kept per memory, newest first: one reflection of 20 candidates each
# replacing the same memory wrote 20 versions in 0.1 s, and nothing pruned them. Older ones are
# dropped and counted (`dropped`); erasure takes the kept ones as before.
MAX_VERSIONS = 20

_COLUMNS = (
    "id, memory_id, user_id, text, kind, scope, story_id, confidence, valid_from, valid_until,"
    " came_from, ended_by, ended_exchange"
)


@dataclass(frozen=True, slots=True)
class Revision:
    """One earlier wording of a memory, and where it came from and what ended it."""

    id: int
    memory_id: int
    user_id: int
    text: str
    kind: Kind
    scope: Scope
    story_id: int | None
    confidence: float
    valid_from: float
    valid_until: float
    came_from: str  # exchange id; MANUAL_EXCHANGE...: the person's own; '': not known
    ended_by: str
    ended_exchange: str

    @property
    def by_person(self) -> bool:
        return self.came_from.startswith(MANUAL_EXCHANGE)


def _revision(row: Row) -> Revision:
    return Revision(
        int(row[0]),
        int(row[1]),
        int(row[2]),
        str(row[3]),
        Kind(row[4]),
        Scope(row[5]),
        None if row[6] is None else int(row[6]),
        float(row[7]),
        float(row[8]),
        float(row[9]),
        str(row[10]),
        str(row[11]),
        str(row[12]),
    )


async def wording_source(db: Store | Tx, memory_id: int) -> str:
    """The exchange whose words a memory's current wording is (its last event that wrote it);
    '' when none was recorded."""
    row = await db.fetchone(
        "SELECT exchange_id FROM memory_events WHERE memory_id = ? AND action <> 'absorbed'"
        " ORDER BY id DESC LIMIT 1",
        (memory_id,),
    )
    return "" if row is None else str(row[0])


async def current_since(db: Store | Tx, memory: Memory) -> float:
    """Since when the current wording holds: the end of the version before, or its creation."""
    row = await db.fetchone(
        "SELECT max(valid_until) FROM memory_versions WHERE memory_id = ? AND user_id = ?",
        (memory.id, memory.user_id),
    )
    return memory.created_at if row is None or row[0] is None else float(row[0])


async def supersede(
    tx: Tx,
    memory: Memory,
    *,
    text: str,
    scope: Scope,
    confidence: float,
    ended_by: str,
    exchange_id: str,
    now: float,
    score: float = 1.0,
) -> Memory:
    """Make `text` the current wording of `memory`, keeping the wording it had as an earlier
    version, valid until `now`; `exchange_id` (a conversation's, or the person's manual one)
    is recorded as the new wording's source (with `score`, the dedup's for a merge). The only
    way a memory's wording changes; every wording it had keeps its span in the history (a
    restored one too: it held then, and holds again from now). Return the memory as it is
    now."""
    if ended_by not in ENDED_BY:
        raise ValueError(f"unknown change of a memory: {ended_by!r}")
    valid_from = await current_since(tx, memory)
    came_from = await wording_source(tx, memory.id)
    await tx.execute(
        "INSERT INTO memory_versions (memory_id, user_id, text, kind, scope, story_id,"
        " confidence, valid_from, valid_until, came_from, ended_by, ended_exchange)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            memory.id,
            memory.user_id,
            memory.text,
            memory.kind.value,
            memory.scope.value,
            memory.story_id,
            memory.confidence,
            min(valid_from, now),
            max(now, valid_from),
            came_from,
            ended_by,
            exchange_id,
        ),
    )
    current = await memories.rewrite(
        tx, memory, text=text, scope=scope, confidence=confidence, now=now
    )
    # The new wording is this exchange's words: forgetting it takes them out (erasure's rule).
    await applied_exchanges.record_event(tx, memory.id, exchange_id, "merged", score, now=now)
    await bound(tx, current)
    return current


async def bound(tx: Tx, memory: Memory, *, dropped: int = 0) -> None:
    """Drop the memory's versions past MAX_VERSIONS, counting them, and `dropped` more (those
    an imported memory's first database had dropped). The first to go are the oldest spans of
    a wording held again later (restores back and forth), then the oldest: a restore on a full
    history costs a span of a wording still there, never the person's first wording."""
    rows = await tx.fetchall(
        "SELECT id, text FROM memory_versions WHERE memory_id = ? AND user_id = ?"
        " ORDER BY valid_until, id",
        (memory.id, memory.user_id),
    )
    extra: list[int] = []
    if len(rows) > MAX_VERSIONS:
        held_after = {memory.text}  # the wordings held after a row: the current one, then back
        repeated: set[int] = set()
        for row in reversed(rows):
            if str(row[1]) in held_after:
                repeated.add(int(row[0]))
            held_after.add(str(row[1]))
        # Oldest first within each group (the sort is stable): repeated wordings go first.
        order = sorted((int(r[0]) for r in rows), key=lambda i: i not in repeated)
        extra = order[: len(rows) - MAX_VERSIONS]
    if extra:
        await tx.execute(
            f"DELETE FROM memory_versions WHERE id IN ({', '.join('?' * len(extra))})", extra
        )
    if not extra and dropped <= 0:
        return
    await tx.execute(
        "INSERT INTO memory_versions_dropped (memory_id, user_id, dropped) VALUES (?, ?, ?)"
        " ON CONFLICT (memory_id) DO UPDATE SET dropped = memory_versions_dropped.dropped"
        " + excluded.dropped",
        (memory.id, memory.user_id, len(extra) + max(dropped, 0)),
    )


async def dropped(db: Store | Tx, user_id: int, memory_id: int) -> int:
    """How many of the user's memory's oldest versions were dropped (MAX_VERSIONS)."""
    row = await db.fetchone(
        "SELECT dropped FROM memory_versions_dropped WHERE memory_id = ? AND user_id = ?",
        (memory_id, user_id),
    )
    return 0 if row is None else int(row[0])


async def dropped_for_user(db: Store | Tx, user_id: int) -> dict[int, int]:
    """Of the user's memories, those that had versions dropped, and how many (the export)."""
    rows = await db.fetchall(
        "SELECT memory_id, dropped FROM memory_versions_dropped WHERE user_id = ?", (user_id,)
    )
    return {int(r[0]): int(r[1]) for r in rows}


async def history(db: Store | Tx, user_id: int, memory_id: int) -> list[Revision]:
    """The earlier versions of the user's memory, oldest first (none for another's id)."""
    rows = await db.fetchall(
        f"SELECT {_COLUMNS} FROM memory_versions WHERE memory_id = ? AND user_id = ?"
        " ORDER BY valid_until, id",
        (memory_id, user_id),
    )
    return [_revision(r) for r in rows]


async def restore(tx: Tx, user_id: int, memory_id: int, *, now: float) -> Memory | None:
    """Undo the last replacement of the user's memory: its version before comes back as the
    current wording, the current one is kept as history (ended by the restore). None when the
    memory is not theirs or has no earlier version."""
    memory = await get_in(tx, user_id, memory_id)
    earlier = await history(tx, user_id, memory_id)
    if memory is None or not earlier:
        return None
    back = earlier[-1]
    source = back.came_from or f"{MANUAL_EXCHANGE}{user_id}:restore:{now}"
    current = await supersede(
        tx,
        memory,
        text=back.text,
        scope=back.scope,
        confidence=back.confidence,
        ended_by="restore",
        exchange_id=source,
        now=now,
    )
    return current


async def get_in(tx: Tx, user_id: int, memory_id: int) -> Memory | None:
    """The user's memory with this id as it is inside this transaction, or None."""
    row = await tx.fetchone(
        f"{memories.SELECT_MEMORY} WHERE m.id = ? AND m.user_id = ?", (memory_id, user_id)
    )
    return memories.from_row(row) if row else None


async def replaced_until(db: Store | Tx, user_id: int, ids: Collection[int]) -> dict[int, float]:
    """Of the user's memories `ids`, those that replaced an earlier version: when it ended."""
    found: dict[int, float] = {}
    wanted = sorted(ids)
    for start in range(0, len(wanted), memories.ID_BATCH):
        batch = wanted[start : start + memories.ID_BATCH]
        rows = await db.fetchall(
            "SELECT memory_id, max(valid_until) FROM memory_versions WHERE user_id = ? AND"
            f" memory_id IN ({', '.join('?' * len(batch))}) GROUP BY memory_id",
            (user_id, *batch),
        )
        found.update({int(r[0]): float(r[1]) for r in rows})
    return found


async def shown_for(db: Store | Tx, user_id: int, exchange_id: str) -> list[Memory]:
    """The user's memories the reply to this exchange was given (its turn's selection; of the
    version shown, when it was answered more than once), as they are now; none when the turn
    was not recorded or was pruned."""
    if not exchange_id:
        return []
    rows = await db.fetchall(
        f"{memories.SELECT_FOR_POOL} JOIN turn_selections s ON s.memory_id = m.id"
        " JOIN turns t ON t.id = s.turn_id WHERE t.exchange_id = ?1 AND t.user_id = ?2"
        " AND m.user_id = ?2 AND (t.id = (SELECT turn_id FROM reply_versions WHERE"
        " exchange_id = ?1 AND shown = 1) OR NOT EXISTS (SELECT 1 FROM reply_versions"
        " WHERE exchange_id = ?1 AND shown = 1 AND turn_id > 0)) ORDER BY s.position",
        (exchange_id, user_id),
    )
    return [memories.from_row(r) for r in rows]


async def erase_from(tx: Tx, erasure_id: int) -> int:
    """Take out the earlier versions whose words came from the exchanges an erasure removes;
    return how many."""
    await tx.execute(
        "DELETE FROM memory_versions WHERE came_from IN"
        " (SELECT exchange_id FROM erased_exchanges WHERE erasure_id = ?)",
        (erasure_id,),
    )
    return await tx.changes()


async def erase_copied(tx: Tx, copied: Copied, carries: Carries) -> int:
    """Take out the earlier versions worded by reflections shown what an erasure took out that
    carry its words (as erasure._copied_memories judges current wordings); return how many."""
    wanted = sorted(copied.exchanges)
    doomed: list[int] = []
    for start in range(0, len(wanted), memories.ID_BATCH):
        batch = wanted[start : start + memories.ID_BATCH]
        rows = await tx.fetchall(
            "SELECT id, came_from, text FROM memory_versions WHERE came_from IN"
            f" ({', '.join('?' * len(batch))})",
            batch,
        )
        for version_id, came_from, text in rows:
            said = copied.exchanges[str(came_from)]
            if carries(str(text), said[1], copied.taint.get(str(came_from), frozenset())):
                doomed.append(int(version_id))
    for start in range(0, len(doomed), memories.ID_BATCH):
        ids = doomed[start : start + memories.ID_BATCH]
        await tx.execute(
            f"DELETE FROM memory_versions WHERE id IN ({', '.join('?' * len(ids))})", ids
        )
    return len(doomed)


async def for_user(db: Store | Tx, user_id: int) -> list[Revision]:
    """Every earlier version of the user's memories (for the export), by memory, oldest first."""
    rows = await db.fetchall(
        f"SELECT {_COLUMNS} FROM memory_versions WHERE user_id = ?"
        " ORDER BY memory_id, valid_until, id",
        (user_id,),
    )
    return [_revision(r) for r in rows]


async def insert_version(tx: Tx, memory_id: int, version: Revision) -> None:
    """Put back an earlier version of the memory `memory_id` (an import)."""
    await tx.execute(
        "INSERT INTO memory_versions (memory_id, user_id, text, kind, scope, story_id,"
        " confidence, valid_from, valid_until, came_from, ended_by, ended_exchange)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            memory_id,
            version.user_id,
            version.text,
            version.kind.value,
            version.scope.value,
            version.story_id,
            version.confidence,
            version.valid_from,
            version.valid_until,
            version.came_from,
            version.ended_by,
            version.ended_exchange,
        ),
    )
