"""Characters in the store: where each plays (tables `character_choices`), the ids each keeps
its people and stories under (`character_ids`) and the home character (`character_home`); see
memory/character/cast.py for why the ids are per character."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.db import Store, Tx

CHANNEL = "channel"
PERSON = "person"
STORY = "story"


async def home(tx: Tx, proposed: str, known: Sequence[str]) -> str:
    """The home character: the one recorded while a character with its key is configured
    (`known`), else `proposed`, recorded now."""
    await tx.execute(
        "INSERT INTO character_home (one, character) VALUES (1, ?) ON CONFLICT (one) DO NOTHING",
        (proposed,),
    )
    row = await tx.fetchone("SELECT character FROM character_home WHERE one = 1")
    if row is not None and str(row[0]) in known:
        return str(row[0])
    await tx.execute("UPDATE character_home SET character = ? WHERE one = 1", (proposed,))
    return proposed


async def recorded_home(store: Store) -> str:
    """The home character's key ("default" before any start with characters)."""
    row = await store.fetchone("SELECT character FROM character_home WHERE one = 1")
    return str(row[0]) if row else "default"


async def record_ids(tx: Tx, rows: Sequence[tuple[int, str, int, str]]) -> None:
    """Record derived ids as (derived, kind, real id, character); those known stay."""
    for row in rows:
        await tx.execute(
            "INSERT INTO character_ids (derived, kind, real_id, character) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (derived) DO NOTHING",
            row,
        )


async def derived_ids(tx: Tx | Store, kind: str, real_id: int) -> list[tuple[int, str]]:
    """The derived ids of a person or a story, with each one's character."""
    rows = await tx.fetchall(
        "SELECT derived, character FROM character_ids WHERE kind = ? AND real_id = ?"
        " ORDER BY character",
        (kind, real_id),
    )
    return [(int(r[0]), str(r[1])) for r in rows]


async def exchanges_in_stories(store: Store, character: str, user_id: int) -> list[tuple[str, int]]:
    """A person's exchanges (id, story) in the stories `character` keeps under derived ids:
    those they had with it under their own id (while memories were shared)."""
    stories = "SELECT derived FROM character_ids WHERE kind = ?2 AND character = ?3"
    rows = await store.fetchall(
        "SELECT source_id, story_id FROM messages WHERE user_id = ?1 AND role = 'user'"
        f" AND story_id IN ({stories}) UNION SELECT exchange_id, story_id FROM outbox"
        f" WHERE user_id = ?1 AND story_id IN ({stories}) ORDER BY 1",
        (user_id, STORY, character),
    )
    return [(str(r[0]), int(r[1])) for r in rows]


async def owner(store: Store | Tx, kind: str, some_id: int) -> tuple[int, str | None]:
    """The real id a (maybe derived) id stands for, and its character (None: the home's)."""
    row = await store.fetchone(
        "SELECT real_id, character FROM character_ids WHERE derived = ? AND kind = ?",
        (some_id, kind),
    )
    return (int(row[0]), str(row[1])) if row else (some_id, None)


async def choices(store: Store) -> list[tuple[str, int, str]]:
    """Every choice made: (place, place id, character key)."""
    rows = await store.fetchall("SELECT place, place_id, character FROM character_choices")
    return [(str(r[0]), int(r[1]), str(r[2])) for r in rows]


async def choose(
    tx: Tx, place: str, place_id: int, character: str | None, *, by: int | None, now: float
) -> None:
    """Record who plays in a channel or a person's DMs (None: back to the configured one)."""
    if character is None:
        await tx.execute(
            "DELETE FROM character_choices WHERE place = ? AND place_id = ?", (place, place_id)
        )
        return
    await tx.execute(
        "INSERT INTO character_choices (place, place_id, character, chosen_by, chosen_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (place, place_id) DO UPDATE SET"
        " character = excluded.character, chosen_by = excluded.chosen_by,"
        " chosen_at = excluded.chosen_at",
        (place, place_id, character, by, now),
    )


async def forget_person(tx: Tx, user_id: int) -> None:
    """Erase a person's own choice and the record of their derived ids (their rows are gone)."""
    await tx.execute(
        "DELETE FROM character_choices WHERE place = ? AND place_id = ?", (PERSON, user_id)
    )
    await tx.execute("DELETE FROM character_ids WHERE kind = ? AND real_id = ?", (PERSON, user_id))
