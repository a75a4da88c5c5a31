"""Queries on the embeddings and on what needs a vector (the indexer's side of the store).

A memory needs a vector when it is written (inserted, reworded): triggers mark it in
`vectors_due` in the same transaction, and the indexer clears the mark when it writes the
vector of that very text. When the embedding model or its document prefix changes, every
memory is checked once (`checked_against` says against what they were last checked).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory.store.db import Row, Store, Tx


@dataclass(frozen=True, slots=True)
class Due:
    """A memory marked as needing a vector, with the hash of the vector it has (or None)."""

    memory_id: int
    user_id: int
    text: str
    text_hash: str
    vector_hash: str | None


_USERS_VECTORS = (
    " FROM embeddings e JOIN memories m ON m.id = e.memory_id WHERE m.user_id = ? AND e.model = ?"
)


async def hashes_of(store: Store, user_id: int, model: str) -> list[Row]:
    """(memory id, content hash) of every vector the user has for `model`."""
    return await store.fetchall(
        f"SELECT e.memory_id, e.content_hash{_USERS_VECTORS}", (user_id, model)
    )


async def vectors_of(
    store: Store, user_id: int, model: str, ids: Sequence[int] | None
) -> list[Row]:
    """(memory id, content hash, dimension, vector bytes) of the user's vectors for `model`:
    all of them, or those of `ids` (callers keep `ids` short: one bound parameter each)."""
    where = f" AND e.memory_id IN ({', '.join('?' * len(ids))})" if ids else ""
    return await store.fetchall(
        f"SELECT e.memory_id, e.content_hash, e.dim, e.vector{_USERS_VECTORS}{where}",
        (user_id, model, *(ids or ())),
    )


async def checked_against(store: Store) -> tuple[str, str] | None:
    """The model and document prefix every memory was last checked against, if any."""
    row = await store.fetchone("SELECT model, document_prefix FROM vectors_checked")
    return (str(row[0]), str(row[1])) if row else None


async def set_checked(tx: Tx, model: str, prefix: str, *, now: float) -> None:
    await tx.execute(
        "INSERT INTO vectors_checked (id, model, document_prefix, checked_at) VALUES (1, ?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET model = excluded.model,"
        " document_prefix = excluded.document_prefix, checked_at = excluded.checked_at",
        (model, prefix, now),
    )


async def memories_after(store: Store, after: int, limit: int) -> list[tuple[int, str, str | None]]:
    """A page of every memory by id: (id, text, hash of its vector or None)."""
    rows = await store.fetchall(
        "SELECT m.id, m.text, e.content_hash FROM memories m"
        " LEFT JOIN embeddings e ON e.memory_id = m.id WHERE m.id > ? ORDER BY m.id LIMIT ?",
        (after, limit),
    )
    return [(int(r[0]), str(r[1]), None if r[2] is None else str(r[2])) for r in rows]


async def mark_due(tx: Tx, memory_ids: Iterable[int]) -> None:
    await tx.executemany(
        "INSERT OR IGNORE INTO vectors_due (memory_id) SELECT CAST(? AS BIGINT) WHERE EXISTS"
        " (SELECT 1 FROM memories WHERE id = ?)",
        [(i, i) for i in memory_ids],
    )


async def due_after(store: Store, after: int, limit: int) -> list[Due]:
    """A page of the memories marked as needing a vector, by id."""
    rows = await store.fetchall(
        "SELECT d.memory_id, m.user_id, m.text, m.content_hash, e.content_hash FROM vectors_due d"
        " JOIN memories m ON m.id = d.memory_id LEFT JOIN embeddings e ON e.memory_id = m.id"
        " WHERE d.memory_id > ? ORDER BY d.memory_id LIMIT ?",
        (after, limit),
    )
    return [
        Due(int(r[0]), int(r[1]), str(r[2]), str(r[3]), None if r[4] is None else str(r[4]))
        for r in rows
    ]


async def due_count(store: Store) -> int:
    row = await store.fetchone("SELECT count(*) FROM vectors_due")
    return int(row[0]) if row else 0


async def clear_due(tx: Tx, done: Iterable[tuple[int, str]]) -> None:
    """Clear the marks of (memory id, text hash) whose vector is current: only while the memory
    still has that text (reworded meanwhile, it stays marked)."""
    await tx.executemany(
        "DELETE FROM vectors_due WHERE memory_id = ? AND EXISTS"
        " (SELECT 1 FROM memories WHERE id = ? AND content_hash = ?)",
        [(i, i, h) for i, h in done],
    )


async def write(tx: Tx, due: Due, *, model: str, vector_hash: str, dim: int, blob: bytes) -> bool:
    """Store the vector of `due` and clear its mark, only if the memory still exists with the
    text embedded: a memory forgotten (or reworded) meanwhile is never resurrected."""
    await tx.execute(
        "INSERT INTO embeddings (memory_id, model, content_hash, dim, vector)"
        " SELECT ?, ?, ?, ?, ? WHERE EXISTS"
        " (SELECT 1 FROM memories WHERE id = ? AND content_hash = ?)"
        " ON CONFLICT (memory_id) DO UPDATE SET model = excluded.model,"
        " content_hash = excluded.content_hash, dim = excluded.dim, vector = excluded.vector",
        (due.memory_id, model, vector_hash, dim, blob, due.memory_id, due.text_hash),
    )
    if not await tx.changes():
        return False
    await tx.execute("DELETE FROM vectors_due WHERE memory_id = ?", (due.memory_id,))
    return True
