"""/stats for the server's operators (manage-server permission, enforced by a check)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.app import send_ephemeral
from memory import manage

if TYPE_CHECKING:
    from bot.app import EchoBot


class Admin(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot

    @app_commands.command(
        name=_("stats"), description=_("Memory figures for this server's operators")
    )
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.checks.has_permissions(manage_guild=True)
    async def stats(self, interaction: discord.Interaction[EchoBot]) -> None:
        runtime = self.bot.runtime
        figures = await manage.stats(runtime.store)
        await send_ephemeral(
            interaction,
            render.render_stats(figures, runtime.indexer.status(), runtime.engine.status()),
        )
