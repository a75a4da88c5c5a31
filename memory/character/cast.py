"""The characters one bot plays, where each plays, and the ids each one's memory is kept under.

Each character keeps its own memory of each person and of each story, as separate as two people's:
below the engine everything is keyed on a person id and a story id, so a character's memories of
a person are those of another person id. The home character (the one the database knew before
there were several, recorded at first start) keeps the ids as they are: a Discord user's or
channel's id, so today's data is its own, unchanged. Every other character gets ids derived from
(its key, the id): negative, where no Discord or terminal id lives, the same in every process,
recorded with their owner (memory/store/tables/characters.py) so erasure and export find them all.
With `[memory] shared_between_characters` a person's id is the same for every character (their
memories serve all of them); stories stay per character.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from memory.character.modes import ChannelModes
from memory.character.names import valid_name
from memory.context.prompt import Character
from memory.errors import InvalidInput

# What a character's key may be: short, stable, written in the config and in slash commands.
KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
# The key of the one character a configuration without [[characters]] plays.
DEFAULT_KEY = "default"


def derived_id(kind: str, key: str, real_id: int) -> int:
    """The id the character `key` keeps a person's or a story's rows under (not the home's):
    negative (Discord and terminal ids are positive), 62 bits of a hash: two pairs share one
    with odds of 1 in 10^7 at a million pairs."""
    digest = hashlib.sha256(f"echo-character:{kind}:{key}:{real_id}".encode()).digest()
    return -1 - (int.from_bytes(digest[:8], "big") >> 2)


class Characters:
    """The cast: each character by key, the default one, and where each plays.

    `channels`: the configured channel of each character; `chosen`: what moderators chose per
    channel and people per DM (persisted; see memory/store/tables/characters.py), on top of it;
    `modes`: how they answer in the channels a moderator set a mode for (memory/character/modes.py),
    read again with the choices."""

    def __init__(
        self,
        cast: Sequence[Character],
        *,
        default: str | None = None,
        channels: Mapping[int, str] | None = None,
        home: str | None = None,
        shared: bool = False,
    ) -> None:
        if not cast:
            raise ValueError("a cast has at least one character")
        # Whoever built them, the characters play under names Discord takes (names.py).
        cast = [
            c if valid_name(c.name) == c.name else replace(c, name=valid_name(c.name)) for c in cast
        ]
        self._by_key = {c.key: c for c in cast}
        if len(self._by_key) != len(cast):
            raise ValueError("two characters have the same key")
        self.default = self._by_key[default] if default else cast[0]
        self._channels = dict(channels or {})
        self._chosen_channels: dict[int, str] = {}
        self._chosen_people: dict[int, str] = {}
        # Bumped by each choice made here: a reading of the database begun before one is stale.
        self.changes = 0
        self.home = home or self.default.key
        self.shared = shared
        self.modes = ChannelModes()

    def __iter__(self) -> Iterator[Character]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def get(self, key: str) -> Character | None:
        return self._by_key.get(key)

    def playing(self, key: str) -> Character:
        """The character of a message's `key` ("" or unknown: the default)."""
        return self._by_key.get(key) or self.default

    def need(self, key: str) -> Character:
        """The character with this key; InvalidInput naming those there are."""
        found = self._by_key.get(key)
        if found is None:
            raise InvalidInput(f"no character {key!r} (there are: {', '.join(self._by_key)})")
        return found

    def for_channel(self, channel_id: int, parent_id: int | None = None) -> Character:
        """Who plays in a channel (a thread: its own choice, else its channel's)."""
        for place in (channel_id, parent_id):
            if place is None:
                continue
            key = self._chosen_channels.get(place) or self._channels.get(place)
            if key in self._by_key:
                return self._by_key[key]
        return self.default

    def for_person(self, user_id: int) -> Character:
        """Who plays in a person's DMs: their choice, else the default."""
        return self._by_key.get(self._chosen_people.get(user_id, ""), self.default)

    def chosen_for_channel(self, channel_id: int) -> str | None:
        return self._chosen_channels.get(channel_id)

    def remember_channel(self, channel_id: int, key: str | None) -> None:
        """Hold a channel's choice (None: back to the configured one)."""
        self.changes += 1
        if key is None:
            self._chosen_channels.pop(channel_id, None)
        else:
            self._chosen_channels[channel_id] = key

    def remember_person(self, user_id: int, key: str | None) -> None:
        self.changes += 1
        if key is None:
            self._chosen_people.pop(user_id, None)
        else:
            self._chosen_people[user_id] = key

    def replace_choices(self, channels: Mapping[int, str], people: Mapping[int, str]) -> None:
        """Hold these choices instead of those held (read again from the database), at once;
        a choice naming a character not configured is left out."""
        self._chosen_channels = {c: k for c, k in channels.items() if k in self._by_key}
        self._chosen_people = {p: k for p, k in people.items() if k in self._by_key}

    def person_id(self, key: str, user_id: int) -> int:
        """The id a character keeps a person's memories under."""
        if self.shared or key == self.home:
            return user_id
        return derived_id("person", key, user_id)

    def story_id(self, key: str, story_id: int) -> int:
        """The id a character keeps a story (a channel's, a DM's) under."""
        return story_id if key == self.home else derived_id("story", key, story_id)

    def describe(self) -> list[str]:
        """One line per character: its key, name, where it plays (for check-config, doctor)."""
        lines = []
        for c in self:
            where = [f"channel {cid}" for cid, key in self._channels.items() if key == c.key]
            if c is self.default:
                where.insert(0, "DMs and every channel not listed")
            face = ", with the card's picture" if c.avatar else ""
            lines.append(
                f"Character {c.key!r} plays {c.name!r}{face}: {'; '.join(where) or 'nowhere yet'}"
            )
        return lines
