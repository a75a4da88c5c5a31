"""Stand-in for C3 (chars): the characters the settings list, as faces uses them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.config import Settings


@dataclass(frozen=True, slots=True)
class Played:
    """A character as the front ends show it: its key, name and the card's PNG picture."""

    key: str
    name: str
    avatar: bytes | None = None


class Characters:
    """The characters, the default one, and which plays in which channel."""

    def __init__(self, played: tuple[Played, ...], default: str, channels: dict[int, str]) -> None:
        self._by_key = {p.key: p for p in played}
        self.default = self._by_key[default]
        self._channels = channels

    def get(self, key: str) -> Played | None:
        return self._by_key.get(key)

    def for_channel(self, channel_id: int, parent_id: int | None = None) -> Played:
        key = self._channels.get(channel_id) or self._channels.get(parent_id or 0)
        return self._by_key[key] if key else self.default


def build(settings: Settings, default_name: str) -> Characters:
    """The characters of `[[characters]]`, or the one of `[character]` named `default_name`."""
    if not settings.characters:
        card = settings.character.card
        return Characters((Played("default", default_name, _picture(card)),), "default", {})
    played = tuple(Played(c.key, c.name, _picture(c.card)) for c in settings.characters)
    default = next((c.key for c in settings.characters if c.default), played[0].key)
    channels: dict[int, str] = {}
    for c in settings.characters:
        for channel in c.channels:
            channels.setdefault(channel, c.key)
    return Characters(played, default, channels)


def _picture(card: Path | None) -> bytes | None:
    if card is None:
        return None
    raw = card.read_bytes()
    return raw if raw.startswith(b"\x89PNG") else None
