"""Scenes: several characters in one channel, and which of them answers a message there.

A person's message is answered by the character it names (its name in the text, case ignored,
as a whole word; the first named when several are), else the one it replies to, else the
channel's default character. A character's message makes another answer only when it names or
replies to that other one, and at most `[discord] scene_chain` times since a person last spoke
in the channel (0, the default: never), so two characters never talk to each other unbounded.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence

import discord

from bot.discord.faces import Faces, Playing, body, name_line, safe_name
from bot.runtime import Runtime

# Characters' message ids remembered as weighed (replays of older ones are rare and harmless:
# the engine's own replay guard still answers each message once).
WEIGHED_REMEMBERED = 4096


class Scenes:
    """Who answers what, per channel; owned by the conversation cog. Each decision is taken
    before any await (the chain's count with it), so messages arriving together cannot both
    take the chain's last step."""

    def __init__(
        self, client: discord.Client, runtime: Runtime, faces: Faces, *, chain: int
    ) -> None:
        self._client = client
        self._runtime = runtime
        self._faces = faces
        self.chain = chain
        # By channel: the characters' answers to characters since a person last spoke there.
        self._chained: dict[int, int] = {}
        # The characters' messages already weighed, by id: the gateway may deliver one again
        # (a replay), and it must not spend the chain twice (scene_chain = 3 gave 2 answers).
        self._weighed: OrderedDict[int, None] = OrderedDict()

    def cast(
        self, channel_id: int, parent_id: int | None = None, *, dm_of: int | None = None
    ) -> tuple[Playing, list[Playing]]:
        """The place's default character (a DM, `dm_of`: that person's choice; a channel: the
        one chosen or configured for it), and every character playing there (the default
        first, then those the settings list the channel, or its parent, for)."""
        characters = self._runtime.characters
        if dm_of is not None:
            default = characters.for_person(dm_of)
            return default, [default]
        default = characters.for_channel(channel_id, parent_id)
        here: list[Playing] = [default]
        for listed in self._runtime.settings.characters:
            if channel_id in listed.channels or (parent_id or 0) in listed.channels:
                found = characters.get(listed.key)
                if found is not None and all(c.key != found.key for c in here):
                    here.append(found)
        return default, here

    def several(self) -> bool:
        """Whether several characters are configured (the bot then names who speaks)."""
        return len(self._runtime.characters) > 1

    def answerer(self, message: discord.Message, text: str, *, for_us: bool) -> Playing | None:
        """The character that answers `message` (None: none does). `for_us`: a person's
        message the bot answers (a configured channel, a DM, a mention, a reply to it)."""
        channel = message.channel
        parent = getattr(channel, "parent_id", None)
        dm_of = message.author.id if message.guild is None else None
        default, cast = self.cast(channel.id, parent, dm_of=dm_of)
        speaker = self.said_by(message, cast)
        if speaker is None:
            if not message.author.bot:
                self._chained.pop(channel.id, None)  # a person spoke here
            if not for_us:
                return None
            return named(text, cast) or self._replied(message, cast) or default
        if self.chain == 0:
            return None
        if message.id in self._weighed:
            return None  # a replay: weighed (and answered, if it was) the first time
        self._weighed[message.id] = None
        if len(self._weighed) > WEIGHED_REMEMBERED:
            self._weighed.popitem(last=False)
        others = [c for c in cast if c.key != speaker]
        chosen = named(body(text), others) or self._replied(message, others)
        if chosen is None or self._chained.get(channel.id, 0) >= self.chain:
            return None
        self._chained[channel.id] = self._chained.get(channel.id, 0) + 1
        return chosen

    def said_by(self, message: discord.Message, cast: Sequence[Playing]) -> str | None:
        """The key of the character that said a message the bot posted (through a webhook, or
        itself with the name on the first line); None for anyone else's."""
        key = self._faces.speaker_of(message)
        if key is not None:
            return key
        me = self._client.user
        if me is None or message.author.id != me.id:
            return None
        name = name_line(message.content)
        found = next((c for c in cast if name is not None and c.name == name), None)
        return found.key if found is not None else cast[0].key

    def _replied(self, message: discord.Message, cast: Sequence[Playing]) -> Playing | None:
        """The character whose message this one replies to, among `cast`."""
        resolved = message.reference.resolved if message.reference else None
        if not isinstance(resolved, discord.Message):
            return None
        key = self.said_by(resolved, cast)
        if key is None and self._faces.made_by_us(resolved):
            # A webhook message from before a restart: its author is the character's name.
            key = next((c.key for c in cast if safe_name(c.name) == resolved.author.name), None)
        return next((c for c in cast if c.key == key), None)


def named(text: str, cast: Sequence[Playing]) -> Playing | None:
    """The character of `cast` whose name `text` says first (case ignored, a whole word)."""
    found: list[tuple[int, int, Playing]] = []
    for n, character in enumerate(cast):
        name = re.escape(character.name.strip())
        if not name:
            continue
        hit = re.search(rf"(?<!\w){name}(?!\w)", text, re.IGNORECASE)
        if hit is not None:
            found.append((hit.start(), n, character))
    return min(found, key=lambda f: f[:2])[2] if found else None
