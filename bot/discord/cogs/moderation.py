"""A story's shared context for its moderators: /anchors and /positions, with drops kept in
history (who, when, why). In a server it takes Manage Messages; in DMs the person is the
moderator of their own conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.discord.ui import Interaction, language_of, send_ephemeral, story_here
from memory.manage import story

if TYPE_CHECKING:
    from bot.discord.app import EchoBot


def _moderates(interaction: Interaction) -> bool:
    """Manage Messages in a server; anyone in their own DMs."""
    if interaction.guild_id is None or interaction.permissions.manage_messages:
        return True
    raise app_commands.MissingPermissions(["manage_messages"])


class Moderation(commands.Cog):
    anchors = app_commands.Group(
        name=_("anchors"),
        description=_("Key facts held in this conversation"),
        default_permissions=discord.Permissions(manage_messages=True),
    )
    positions = app_commands.Group(
        name=_("positions"), description=_("What the character thinks, and since when")
    )

    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot

    @anchors.command(name=_("show"), description=_("The anchors held here, and those dropped"))
    @app_commands.check(_moderates)
    async def anchors_show(self, interaction: Interaction) -> None:
        found = await story.anchors(self.bot.runtime.store, story_here(interaction))
        await send_ephemeral(
            interaction, render.render_anchors(found, language=language_of(interaction))
        )

    @anchors.command(name=_("add"), description=_("Hold a key fact no reflection can drop"))
    @app_commands.describe(text=_("The fact"))
    @app_commands.check(_moderates)
    async def anchors_add(self, interaction: Interaction, text: str) -> None:
        anchor_id = await story.add_anchor(
            self.bot.runtime.store, story_here(interaction), text, by=interaction.user.id
        )
        await send_ephemeral(interaction, f"Anchor #{anchor_id} held.")

    @anchors.command(name=_("drop"), description=_("Drop an anchor; the reason stays in history"))
    @app_commands.describe(anchor=_("The anchor's number"), reason=_("Why"))
    @app_commands.check(_moderates)
    async def anchors_drop(self, interaction: Interaction, anchor: int, reason: str) -> None:
        await story.drop_anchor(
            self.bot.runtime.store, story_here(interaction), anchor, reason, by=interaction.user.id
        )
        await send_ephemeral(interaction, f"Anchor #{anchor} dropped.")

    @positions.command(name=_("show"), description=_("The character's positions here"))
    async def positions_show(self, interaction: Interaction) -> None:
        found = await story.positions(self.bot.runtime.store, story_here(interaction))
        await send_ephemeral(
            interaction, render.render_positions(found, language=language_of(interaction))
        )

    @positions.command(
        name=_("drop"), description=_("Drop a position; the reason stays in history")
    )
    @app_commands.describe(position=_("The position's number"), reason=_("Why"))
    @app_commands.check(_moderates)
    async def positions_drop(self, interaction: Interaction, position: int, reason: str) -> None:
        topic = await story.drop_position(
            self.bot.runtime.store,
            story_here(interaction),
            position,
            reason,
            by=interaction.user.id,
        )
        await send_ephemeral(interaction, f"Position #{position} ({topic}) dropped.")


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(Moderation(bot))
