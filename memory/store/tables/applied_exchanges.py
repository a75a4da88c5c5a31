"""Which exchanges a reflection has been applied for, and what it did to each memory."""

from __future__ import annotations

from memory.store.db import Tx


async def was_applied(tx: Tx, exchange_id: str) -> bool:
    """Whether a reflection of this exchange was already written (applying is idempotent)."""
    row = await tx.fetchone("SELECT 1 FROM applied_exchanges WHERE exchange_id = ?", (exchange_id,))
    return row is not None


async def record_applied(tx: Tx, exchange_id: str, report_json: str, *, now: float) -> None:
    """Record that the exchange's reflection was written, with its report (ids, no text)."""
    await tx.execute(
        "INSERT INTO applied_exchanges (exchange_id, applied_at, report) VALUES (?, ?, ?)",
        (exchange_id, now, report_json),
    )


async def record_event(
    tx: Tx, memory_id: int, exchange_id: str, action: str, score: float | None, *, now: float
) -> None:
    """Record what an exchange's reflection did to a memory (created, merged, absorbed)."""
    await tx.execute(
        "INSERT INTO memory_events (memory_id, exchange_id, action, score, at)"
        " VALUES (?, ?, ?, ?, ?)",
        (memory_id, exchange_id, action, score, now),
    )
