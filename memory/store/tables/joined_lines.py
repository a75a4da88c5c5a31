"""A person's quick lines answered by one turn with its own message (schema 35): which exchange
read each. Ids only; the rows go with their exchange (memory/store/queries/erasure.py)."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.db import Store, Tx


async def record(tx: Tx, exchange_id: str, source_ids: Sequence[str]) -> None:
    """Record that this exchange's turn read these earlier lines of the person's."""
    await tx.executemany(
        "INSERT INTO joined_lines (source_id, exchange_id) VALUES (?, ?)"
        " ON CONFLICT (source_id) DO UPDATE SET exchange_id = excluded.exchange_id",
        [(source_id, exchange_id) for source_id in source_ids],
    )


async def reader_of(store: Store | Tx, source_id: str) -> str | None:
    """The exchange whose turn read this line with its own message, or None."""
    row = await store.fetchone(
        "SELECT exchange_id FROM joined_lines WHERE source_id = ?", (source_id,)
    )
    return str(row[0]) if row else None
