"""How the characters answer in a channel: its mode, chosen by the channel's moderators.

    open     every message is answered (the configured default of `[discord] channels`)
    mention  only the messages that mention the bot or reply to it (the default elsewhere)
    thread   a mention opens a thread from the message; the reply goes there, and every
             message in that thread is answered without a mention (the thread is its own story)

The modes set are kept in the database (memory/store/tables/channel_modes.py) and held here by
the cast, read again with its choices (memory.manage.casting.reload) so every process sees them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class ChannelMode(enum.StrEnum):
    OPEN = "open"
    MENTION = "mention"
    THREAD = "thread"


class ChannelModes:
    """The modes set per channel. `changes` is bumped by each one set here: a reading of the
    database begun before it is stale (the same guard as the cast's choices)."""

    def __init__(self) -> None:
        self._set: dict[int, ChannelMode] = {}
        self.changes = 0

    def get(self, channel_id: int) -> ChannelMode | None:
        """The mode set for a channel, or None (its configured default applies)."""
        return self._set.get(channel_id)

    def items(self) -> list[tuple[int, ChannelMode]]:
        return sorted(self._set.items())

    def remember(self, channel_id: int, mode: ChannelMode | None) -> None:
        """Hold a channel's mode (None: back to its configured default)."""
        self.changes += 1
        if mode is None:
            self._set.pop(channel_id, None)
        else:
            self._set[channel_id] = mode

    def replace(self, modes: Mapping[int, str]) -> None:
        """Hold these modes instead of those held (read again from the database), at once."""
        known = {m.value for m in ChannelMode}
        self._set = {c: ChannelMode(m) for c, m in modes.items() if m in known}
