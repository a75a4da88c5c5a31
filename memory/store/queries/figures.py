"""Figures of one server for /stats: counts only, never a text."""

from __future__ import annotations

from memory.store.db import Store


async def server(store: Store, origin: str) -> tuple[int, int, int, int, int]:
    """Memories learned there, the people they are about, turns there, degraded turns there,
    reflections waiting from there."""
    learned = await store.fetchone(
        "SELECT count(*), count(DISTINCT user_id) FROM memories WHERE origin = ?", (origin,)
    )
    turns = await store.fetchone(
        "SELECT count(*), coalesce(sum(degraded), 0) FROM turns WHERE origin = ?", (origin,)
    )
    waiting = await store.fetchone(
        "SELECT count(*) FROM outbox WHERE status = 'pending' AND origin = ?", (origin,)
    )
    a, b = (int(learned[0]), int(learned[1])) if learned else (0, 0)
    c, d = (int(turns[0]), int(turns[1])) if turns else (0, 0)
    return a, b, c, d, int(waiting[0]) if waiting else 0


async def everywhere(store: Store) -> tuple[int, int, int]:
    """Memories in all, the people they are about, turns in all."""
    held = await store.fetchone("SELECT count(*), count(DISTINCT user_id) FROM memories")
    turns = await store.fetchone("SELECT sum(turns) FROM turn_buckets WHERE bucket = 'all'")
    a, b = (int(held[0]), int(held[1])) if held else (0, 0)
    return a, b, int(turns[0] or 0) if turns else 0
