"""/stats: a server's own figures for its operators (Manage Server); the bot-wide figures, every
server and DM together, only for the application's owner (or `echo-bot`'s terminal)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.discord.ui import Interaction, send_ephemeral
from memory import manage

if TYPE_CHECKING:
    from bot.discord.app import EchoBot


async def _operator(interaction: Interaction) -> bool:
    """The bot's owner anywhere; in a server, someone who may manage it."""
    if await interaction.client.is_owner(interaction.user):
        return True
    if interaction.guild_id is None:
        raise app_commands.NoPrivateMessage()
    if not interaction.permissions.manage_guild:
        raise app_commands.MissingPermissions(["manage_guild"])
    return True


class Admin(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot

    @app_commands.command(
        name=_("stats"), description=_("Memory figures for this server's operators")
    )
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.check(_operator)
    async def stats(self, interaction: Interaction) -> None:
        runtime = self.bot.runtime
        parts = []
        if interaction.guild_id is not None:
            figures = await manage.server_stats(runtime.store, interaction.guild_id)
            parts.append(render.render_server_stats(figures))
        if await self.bot.is_owner(interaction.user):
            everything = await manage.stats(runtime.store)
            parts.append(
                "**Bot-wide** (you own the bot)\n"
                + render.render_stats(everything, runtime.indexer.status(), runtime.engine.status())
            )
            if self.bot.sharding is not None:
                # The figures above are the database's; what this process serves is its shards.
                parts[-1] += f"\nThis process: {self.bot.sharding.describe()}"
        await send_ephemeral(interaction, "\n\n".join(parts))


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(Admin(bot))
