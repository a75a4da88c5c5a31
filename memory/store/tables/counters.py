"""Named monotonic counters (degraded turns, rejections by reason, dropped reflections...)."""

from __future__ import annotations

from collections.abc import Mapping

from memory.store.db import Store, Tx


async def bump(tx: Tx, name: str, by: int = 1) -> None:
    """Add `by` to the counter `name`, creating it at zero first."""
    if by:
        await tx.execute(
            "INSERT INTO counters (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value",
            (name, by),
        )


async def bump_many(tx: Tx, amounts: Mapping[str, int]) -> None:
    """Add each amount to its counter."""
    for name, by in sorted(amounts.items()):
        await bump(tx, name, by)


async def read_all(store: Store, prefix: str = "") -> dict[str, int]:
    """Return the counters whose name starts with `prefix`."""
    rows = await store.fetchall(
        "SELECT name, value FROM counters WHERE substr(name, 1, ?) = ? ORDER BY name",
        (len(prefix), prefix),
    )
    return {str(r["name"]): int(r["value"]) for r in rows}
