"""Channel modes in the store (table `channel_modes`): how the characters answer in each
channel a moderator set one for (memory/character/modes.py says what each mode means)."""

from __future__ import annotations

from memory.store.db import Store, Tx


async def modes(store: Store) -> list[tuple[int, str, int | None, float]]:
    """Every mode set: (channel id, mode, who set it, when), by channel."""
    rows = await store.fetchall(
        "SELECT channel_id, mode, set_by, set_at FROM channel_modes ORDER BY channel_id"
    )
    return [(int(r[0]), str(r[1]), None if r[2] is None else int(r[2]), float(r[3])) for r in rows]


async def set_mode(
    tx: Tx, channel_id: int, mode: str | None, *, by: int | None, now: float
) -> None:
    """Record a channel's mode (None: back to the configured default)."""
    if mode is None:
        await tx.execute("DELETE FROM channel_modes WHERE channel_id = ?", (channel_id,))
        return
    await tx.execute(
        "INSERT INTO channel_modes (channel_id, mode, set_by, set_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (channel_id) DO UPDATE SET mode = excluded.mode,"
        " set_by = excluded.set_by, set_at = excluded.set_at",
        (channel_id, mode, by, now),
    )
