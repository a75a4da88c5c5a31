"""A person's own data: /privacy, where their memories are served."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.app import send_ephemeral
from memory import manage_privacy

if TYPE_CHECKING:
    from bot.app import EchoBot

Interaction = discord.Interaction["EchoBot"]


class PersonalData(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot

    @property
    def default_served(self) -> str:
        return self.bot.runtime.settings.privacy.memories_served

    @app_commands.command(
        name=_("privacy"),
        description=_("Where your memories are used: where learned, or everywhere"),
    )
    @app_commands.describe(memories=_("Where learned, everywhere, or the default"))
    async def privacy(
        self,
        interaction: Interaction,
        memories: Literal["where_learned", "everywhere", "default"] | None = None,
    ) -> None:
        store = self.bot.runtime.store
        user = interaction.user.id
        if memories is None:
            found = await manage_privacy.get(store, user, default=self.default_served)
        else:
            found = await manage_privacy.choose(store, user, memories, default=self.default_served)
        await send_ephemeral(interaction, found.line())
