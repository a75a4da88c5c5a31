"""/character: who plays here. In a server, `/character set` (Manage Channels) chooses a
channel's character and `/character show` says who plays; in DMs each person chooses their own.
The choice is kept (memory.manage.casting); the other character's story and memories stay."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.ui import Interaction, playing_here, send_ephemeral
from memory import Character, Characters
from memory.manage import casting

if TYPE_CHECKING:
    from bot.discord.app import EchoBot


def character_of(characters: Characters, message: discord.Message) -> str:
    """The key of the character a message is for: the channel's (a thread: its channel's), or
    in DMs the person's own choice."""
    if message.guild is None:
        return characters.for_person(message.author.id).key
    parent = getattr(message.channel, "parent_id", None)
    return characters.for_channel(message.channel.id, parent).key


async def character_keys(interaction: Interaction, current: str) -> list[app_commands.Choice[str]]:
    """The characters' keys for autocomplete, those matching what is typed."""
    typed = current.casefold()
    return [
        app_commands.Choice(name=f"{c.name} ({c.key})"[:100], value=c.key)
        for c in interaction.client.runtime.characters
        if typed in c.key or typed in c.name.casefold()
    ][:25]


def _named(c: Character) -> str:
    return f"{c.name} (`{c.key}`)"


class Casting(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot

    @property
    def characters(self) -> Characters:
        return self.bot.runtime.characters

    async def key_choices(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await character_keys(interaction, current)

    character = app_commands.Group(
        name=_("character"),
        description=_("Who plays here: in a server, per channel; in DMs, yours"),
    )

    @character.command(name=_("show"), description=_("Who plays here, and who else could"))
    async def show(self, interaction: Interaction) -> None:
        here = playing_here(interaction)
        others = ", ".join(_named(c) for c in self.characters if c is not here)
        where = "in your DMs" if interaction.guild_id is None else "in this channel"
        line = f"{_named(here)} plays {where}."
        if others:
            line += f" Also here: {others}. Each keeps its own memory of you."
        await send_ephemeral(interaction, line)

    @character.command(
        name=_("set"),
        description=_("Choose who plays in this channel (Manage Channels), or in your DMs"),
    )
    @app_commands.describe(key=_("The character's key; `default` in a channel: the configured one"))
    @app_commands.autocomplete(key=key_choices)
    async def set(self, interaction: Interaction, key: str) -> None:
        store, cast = self.bot.runtime.store, self.characters
        chosen = None if key == "default" and cast.get(key) is None else key
        if interaction.guild_id is None:
            playing = await casting.set_person(store, cast, interaction.user.id, chosen)
            await send_ephemeral(
                interaction,
                f"{_named(playing)} plays in your DMs now. What you told the others stays theirs.",
            )
            return
        if not interaction.permissions.manage_channels:
            raise app_commands.MissingPermissions(["manage_channels"])
        channel = interaction.channel_id or 0
        playing = await casting.set_channel(store, cast, channel, chosen, by=interaction.user.id)
        await send_ephemeral(
            interaction,
            f"{_named(playing)} plays in this channel now. The story with the others is kept "
            "for when they play here again.",
        )


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(Casting(bot))
