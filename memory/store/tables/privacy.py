"""Each person's choice of where their memories are served (table `privacy`)."""

from __future__ import annotations

from memory.store.db import Store, Tx

WHERE_LEARNED = "where_learned"
EVERYWHERE = "everywhere"
CHOICES = (WHERE_LEARNED, EVERYWHERE)


async def memories_served(store: Store, user_id: int) -> str | None:
    """The person's choice, or None when they follow the owner's default (`user_id` may be
    the id a character keeps them under: their own choice holds there too)."""
    row = await store.fetchone(
        "SELECT memories_served FROM privacy WHERE user_id = coalesce((SELECT real_id FROM"
        " character_ids WHERE derived = ?1 AND kind = 'person'), ?1)",
        (user_id,),
    )
    return str(row[0]) if row else None


async def set_memories_served(tx: Tx, user_id: int, choice: str | None, *, now: float) -> None:
    """Store the person's choice (None: back to the default). Their candidate pools are rebuilt:
    which memories may be served changed, not one memory."""
    if choice is None:
        await tx.execute("DELETE FROM privacy WHERE user_id = ?", (user_id,))
    else:
        await tx.execute(
            "INSERT INTO privacy (user_id, memories_served, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id) DO UPDATE SET memories_served = excluded.memories_served,"
            " updated_at = excluded.updated_at",
            (user_id, choice, now),
        )
    tx.touch(user_id)
    rows = await tx.fetchall(
        "SELECT derived FROM character_ids WHERE kind = 'person' AND real_id = ?", (user_id,)
    )
    for row in rows:  # each character's pools of them are rebuilt too
        tx.touch(int(row[0]))


async def receipts(store: Store, user_id: int) -> bool:
    """Whether the person asked for receipts (`user_id` may be an id a character keeps them
    under: their own choice holds there too)."""
    row = await store.fetchone(
        "SELECT 1 FROM receipts WHERE user_id = coalesce((SELECT real_id FROM character_ids"
        " WHERE derived = ?1 AND kind = 'person'), ?1)",
        (user_id,),
    )
    return row is not None


async def set_receipts(tx: Tx, user_id: int, wanted: bool, *, now: float) -> None:
    """Store whether the person wants receipts (off: no row)."""
    if not wanted:
        await tx.execute("DELETE FROM receipts WHERE user_id = ?", (user_id,))
        return
    await tx.execute(
        "INSERT INTO receipts (user_id, updated_at) VALUES (?, ?)"
        " ON CONFLICT (user_id) DO UPDATE SET updated_at = excluded.updated_at",
        (user_id, now),
    )
