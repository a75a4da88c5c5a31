"""/channel mode: which messages the character answers in a channel (bot.discord.places says
what each mode does). Anyone may see it; only someone with Manage Channels may set it. The mode
is kept in the database (memory.manage.casting), for every process and across restarts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.places import Places
from bot.discord.ui import Interaction, send_ephemeral
from memory import InvalidInput
from memory.manage import casting
from memory.manage.casting import ChannelMode

if TYPE_CHECKING:
    from bot.discord.app import EchoBot

# What each mode does, as /channel mode says it.
SAID = {
    ChannelMode.OPEN: "every message here is answered",
    ChannelMode.MENTION: "only mentions of me and replies to my messages are answered",
    ChannelMode.THREAD: (
        "a mention opens a thread from the message, and every message in that thread is "
        "answered without a mention"
    ),
}
DEFAULT = "default"


class Channels(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot
        self.places = Places(bot, set(bot.runtime.settings.discord.channels))

    channel = app_commands.Group(
        name=_("channel"),
        description=_("How the character answers in this channel"),
        guild_only=True,
    )

    @channel.command(
        name=_("mode"),
        description=_("Which messages are answered here; set it with Manage Channels"),
    )
    @app_commands.describe(
        mode=_("open: every message; mention: mentions and replies; thread: a thread each")
    )
    @app_commands.choices(
        mode=[
            app_commands.Choice(name=_("open"), value=ChannelMode.OPEN.value),
            app_commands.Choice(name=_("mention"), value=ChannelMode.MENTION.value),
            app_commands.Choice(name=_("thread"), value=ChannelMode.THREAD.value),
            app_commands.Choice(name=_("default"), value=DEFAULT),
        ]
    )
    async def mode(self, interaction: Interaction, mode: str | None = None) -> None:
        if interaction.guild_id is None:
            raise app_commands.NoPrivateMessage()
        here = _place(interaction)
        if mode is None:
            chosen = self.bot.runtime.characters.modes.get(here.id)
            whence = "this server's default" if chosen is None else "set by a moderator"
            now = self.places.mode_of(here)
            await send_ephemeral(interaction, f"Mode here: `{now}` ({whence}): {SAID[now]}.")
            return
        if not interaction.permissions.manage_channels:
            raise app_commands.MissingPermissions(["manage_channels"])
        chosen = None if mode == DEFAULT else ChannelMode(mode)
        if chosen is ChannelMode.THREAD and isinstance(here, discord.Thread):
            raise InvalidInput("a thread cannot open threads: `thread` is a channel's mode")
        runtime = self.bot.runtime
        await casting.set_mode(
            runtime.store,
            runtime.characters,
            here.id,
            chosen,
            by=interaction.user.id,
        )
        now = self.places.mode_of(here)
        line = f"This channel is in `{now}` mode now: {SAID[now]}."
        allowed = interaction.app_permissions
        if now is ChannelMode.THREAD and not (
            allowed.create_public_threads and allowed.send_messages_in_threads
        ):
            line += (
                " I may not open threads here yet (Create Public Threads and Send Messages in "
                "Threads): until I may, I answer mentions in the channel."
            )
        await send_ephemeral(interaction, line)


def _place(interaction: Interaction) -> discord.abc.Snowflake:
    """The channel or thread an interaction happens in."""
    if interaction.channel is not None:
        return interaction.channel
    return interaction.client.get_partial_messageable(interaction.channel_id or 0)


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(Channels(bot))
