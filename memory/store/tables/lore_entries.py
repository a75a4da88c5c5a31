"""Lore entries in SQLite: add, list where they apply, remove, replace a card's set."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory.model import LoreEntry, LoreScope
from memory.store.db import Row, Store, Tx

_COLUMNS = (
    "id, guild_id, scope, character, keywords, secondary_keywords, selective, constant,"
    " case_sensitive, priority, scan_depth, content, source, extra"
)


def _entry(row: Row) -> LoreEntry:
    return LoreEntry(
        id=int(row[0]),
        guild_id=row[1],
        scope=LoreScope(row[2]),
        character=row[3],
        keywords=tuple(json.loads(row[4])),
        secondary_keywords=tuple(json.loads(row[5])),
        selective=bool(row[6]),
        constant=bool(row[7]),
        case_sensitive=bool(row[8]),
        priority=int(row[9]),
        scan_depth=row[10],
        content=str(row[11]),
        source=str(row[12]),
        extra=json.loads(row[13]),
    )


async def insert(tx: Tx, entry: LoreEntry, *, created_by: int | None, now: float) -> int:
    """Store an entry (its id is ignored); return the new id."""
    return await tx.execute(
        f"INSERT INTO lore_entries ({_COLUMNS.removeprefix('id, ')}, created_by, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.guild_id,
            entry.scope.value,
            entry.character,
            json.dumps(list(entry.keywords), ensure_ascii=False),
            json.dumps(list(entry.secondary_keywords), ensure_ascii=False),
            int(entry.selective),
            int(entry.constant),
            int(entry.case_sensitive),
            entry.priority,
            entry.scan_depth,
            entry.content,
            entry.source,
            json.dumps(entry.extra, ensure_ascii=False),
            created_by,
            now,
        ),
    )


async def applicable(store: Store, guild_id: int | None) -> list[LoreEntry]:
    """The entries that apply in a server (its own and the owner's), or in DMs (the owner's)."""
    rows = await store.fetchall(
        f"SELECT {_COLUMNS} FROM lore_entries WHERE guild_id IS NULL OR guild_id IS ? ORDER BY id",
        (guild_id,),
    )
    return [_entry(r) for r in rows]


async def remove(tx: Tx, entry_id: int, *, guild_id: int | None) -> bool:
    """Delete an entry of this server (None: an owner's entry); False when there is none."""
    await tx.execute(
        "DELETE FROM lore_entries WHERE id = ? AND guild_id IS ?", (entry_id, guild_id)
    )
    return await tx.changes() > 0


async def replace_source(
    tx: Tx, source: str, entries: Sequence[LoreEntry], *, now: float
) -> list[int]:
    """Replace every owner's entry from `source` (a character card) with `entries`."""
    await tx.execute("DELETE FROM lore_entries WHERE source = ? AND guild_id IS NULL", (source,))
    return [await insert(tx, e, created_by=None, now=now) for e in entries]
