"""Who plays where: a channel's character (moderators), a person's character in DMs (their own
choice), and how the characters answer in a channel (its mode, moderators), kept in the database
and held by the cast (memory.character.cast.Characters); and the ids a person is known by to
each character, for what a person sees and forgets of themself."""

from __future__ import annotations

import time

from memory.character.cast import Characters, derived_id
from memory.character.modes import ChannelMode
from memory.context.prompt import Character
from memory.store import Store
from memory.store.tables import channel_modes
from memory.store.tables import characters as cast_store

__all__ = ["ChannelMode"]

# The first schema with channel modes (a reader of an older database finds none).
MODES_SCHEMA = 33


async def load(store: Store, cast: Characters) -> None:
    """Give the cast its home character (recorded at the first start: the default one then;
    when no configured character has its key, as when `[character]` alone, key "default",
    becomes `[[characters]]`, the default one now) and the choices made so far; a choice
    naming a character no longer configured is kept and ignored (the configured one plays)."""
    keys = [c.key for c in cast]
    cast.home = await store.transact(lambda tx: cast_store.home(tx, cast.default.key, keys))
    await reload(store, cast)


async def reload(store: Store, cast: Characters) -> None:
    """Read the choices again: those another process (a shard) recorded reach this one. A
    choice made here while it read is newer than what it read: the next reading takes both."""
    seen = cast.changes
    channels: dict[int, str] = {}
    people: dict[int, str] = {}
    for place, place_id, key in await cast_store.choices(store):
        (channels if place == cast_store.CHANNEL else people)[place_id] = key
    if cast.changes == seen:
        cast.replace_choices(channels, people)
    modes, seen = cast.modes, cast.modes.changes
    held = {channel: mode for channel, mode, _, _ in await channel_modes.modes(store)}
    if modes.changes == seen:
        modes.replace(held)


async def set_channel(
    store: Store, cast: Characters, channel_id: int, key: str | None, *, by: int
) -> Character:
    """Make `key` the character of a channel (None: back to the configured one); return who
    plays there now. Nothing of the other character is touched: its story stays, under its
    own ids, for when it plays here again."""
    if key is not None:
        cast.need(key)
    await store.transact(
        lambda tx: cast_store.choose(
            tx, cast_store.CHANNEL, channel_id, key, by=by, now=time.time()
        )
    )
    cast.remember_channel(channel_id, key)
    return cast.for_channel(channel_id)


async def set_mode(
    store: Store, cast: Characters, channel_id: int, mode: ChannelMode | None, *, by: int
) -> None:
    """Set how the characters answer in a channel (None: back to its configured default)."""
    await store.transact(
        lambda tx: channel_modes.set_mode(
            tx, channel_id, None if mode is None else mode.value, by=by, now=time.time()
        )
    )
    cast.modes.remember(channel_id, mode)


async def modes_set(store: Store) -> list[tuple[int, ChannelMode, int | None, float]]:
    """Every channel mode set: (channel id, mode, who set it, when), for check-config."""
    return [(c, ChannelMode(m), by, at) for c, m, by, at in await channel_modes.modes(store)]


async def set_person(store: Store, cast: Characters, user_id: int, key: str | None) -> Character:
    """A person's character in their DMs (None: the default one)."""
    if key is not None:
        cast.need(key)
    await store.transact(
        lambda tx: cast_store.choose(
            tx, cast_store.PERSON, user_id, key, by=user_id, now=time.time()
        )
    )
    cast.remember_person(user_id, key)
    return cast.for_person(user_id)


async def person_ids(
    store: Store, user_id: int, cast: Characters | None = None
) -> list[tuple[int, str | None]]:
    """Every id a person's rows are kept under, with its character (None: the home one's, the
    person's own id), the home's first. With the `cast`, also the id each of its characters
    has for them, recorded or not (a turn answered while the database refused its message
    wrote its exchange later, without the record)."""
    ids = [(user_id, None), *await cast_store.derived_ids(store, cast_store.PERSON, user_id)]
    others = [c.key for c in cast if c.key != cast.home] if cast is not None else []
    for key in others:
        derived = derived_id(cast_store.PERSON, key, user_id)
        if all(d != derived for d, _ in ids):
            ids.append((derived, key))
    return ids


async def owner(store: Store, person_id: int) -> tuple[int, str | None]:
    """The person an id stands for, and the character it is theirs with (None: the home)."""
    return await cast_store.owner(store, cast_store.PERSON, person_id)


async def story_owner(store: Store, story_id: int) -> tuple[int, str | None]:
    """The channel or DM a story id stands for, and its character (None: the home)."""
    return await cast_store.owner(store, cast_store.STORY, story_id)
