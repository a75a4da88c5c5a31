"""Channel modes on Discord: which messages the character answers in a channel, and where.

A channel's mode is the one its moderators set (/channel mode, kept by memory.manage.casting),
else its configured default: `open` in `[discord] channels`, `mention` elsewhere. A thread has
its own mode when one is set for it, else its channel's; under a `thread` channel, a thread the
bot opened is `open` (every message there is answered) and any other one `mention`.

In a `thread` channel a person's message the character answers opens a public thread from it:
the reply goes there, and the thread is its own story (its id: Discord gives a thread opened
from a message the message's id). Without the permissions to open one and speak in it, the
character answers in the channel, as in `mention` mode, and the log says so once per channel.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection

import discord

from bot import render
from bot.discord.ui import EchoClient
from memory.manage.casting import ChannelMode

log = logging.getLogger(__name__)

# Discord's longest channel name, a thread's too.
THREAD_NAME_LIMIT = 100
_MENTION = re.compile(r"<(@[!&]?|#)\d+>")


def thread_name(text: str, fallback: str) -> str:
    """A thread's name from the message that opens it: one line, its mentions made inert (a
    name never pings, but shows their raw ids), at most THREAD_NAME_LIMIT characters with an
    ellipsis where it was cut; `fallback` when nothing is left."""
    words = " ".join(_MENTION.sub("@…", render.defang(text)).split())
    if not words:
        words = " ".join(fallback.split()) or "…"
    if len(words) <= THREAD_NAME_LIMIT:
        return words
    return words[: THREAD_NAME_LIMIT - 1].rstrip() + "…"


class Places:
    """Each channel's mode as the conversation reads it. Reads only what the cast holds (no
    await), so a message's decision is taken at once. `channels`: those open by default, held
    as given (the conversation cog's own set)."""

    def __init__(self, client: EchoClient, channels: Collection[int]) -> None:
        self._client = client
        self._open = channels
        # The channels whose missing permission was logged already.
        self._told: set[int] = set()

    def configured(self, channel_id: int, parent_id: int | None = None) -> ChannelMode:
        """The mode a channel has without one set: `open` when configured, else `mention`."""
        listed = channel_id in self._open or (parent_id is not None and parent_id in self._open)
        return ChannelMode.OPEN if listed else ChannelMode.MENTION

    def mode_of(self, channel: discord.abc.Snowflake) -> ChannelMode:
        """How the character answers in a guild channel or thread (module docstring)."""
        channel_id = channel.id
        parent = getattr(channel, "parent_id", None)
        modes = self._client.runtime.characters.modes
        own = modes.get(channel_id)
        if own is not None:
            return own
        inherited = modes.get(parent) if parent is not None else None
        if inherited is ChannelMode.THREAD:
            me = self._client.user
            ours = me is not None and getattr(channel, "owner_id", None) == me.id
            return ChannelMode.OPEN if ours else ChannelMode.MENTION
        return inherited or self.configured(channel_id, parent)

    def opens_thread(self, message: discord.Message) -> bool:
        """Whether the reply to this message (one the character answers) goes in a thread
        opened from it: a person's message in a `thread` channel where the bot may open one."""
        channel = message.channel
        if message.guild is None or message.author.bot or isinstance(channel, discord.Thread):
            return False
        if not isinstance(channel, discord.TextChannel):
            return False  # threads open from messages of text channels only
        if self.mode_of(channel) is not ChannelMode.THREAD:
            return False
        me: discord.Member | None = message.guild.me
        if me is None:
            return True  # not known here: Discord decides, and a refusal is followed
        allowed = channel.permissions_for(me)
        if allowed.create_public_threads and allowed.send_messages_in_threads:
            return True
        self.refused(channel.id, "no Create Public Threads or Send Messages in Threads permission")
        return False

    async def open_thread(self, message: discord.Message, name: str) -> discord.Thread | None:
        """Open a public thread from `message`, named `name`; None when Discord refused it (the
        reply then goes in the channel)."""
        try:
            return await message.create_thread(name=name, reason="Écho: a conversation")
        except discord.HTTPException as exc:
            self.refused(message.channel.id, f"a thread refused ({exc.status})")
            return None

    def refused(self, channel_id: int, why: str) -> None:
        """Log once per channel that its mode is `thread` but the bot answers in the channel."""
        if channel_id in self._told:
            return
        self._told.add(channel_id)
        log.warning(
            "channel %d is in thread mode, but %s: the character answers mentions in the "
            "channel until the bot may open threads there",
            channel_id,
            why,
        )
