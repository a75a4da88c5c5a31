"""/followups: a person's follow-ups (memory.manage.followups). On or off, drop one, or see
what is planned, each with its memory id, when and where. Private answers; everyone sees and
changes only their own (another person's follow-up id answers like a missing one). The posting
itself is the followups job's, through bot.discord.followups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.discord.ui import Interaction, send_ephemeral
from memory import DM_ORIGIN, InvalidInput
from memory.manage import followups

if TYPE_CHECKING:
    from bot.discord.app import EchoBot

# Said on top of every answer when the operator allows no follow-up at all.
NEVER = "The bot's operator has turned follow-ups off: none is sent, whatever you choose."


def where(planned: followups.Planned) -> str:
    """Where a follow-up goes, as Discord shows it: the channel's link, or the DMs."""
    return "our DMs" if planned.origin == DM_ORIGIN else f"<#{planned.channel_id}>"


class FollowUpsCog(commands.Cog, name="FollowUps"):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot

    @app_commands.command(
        name=_("followups"),
        description=_("Whether I ask how your dated plans went, and what is planned"),
    )
    @app_commands.describe(
        set=_("On or off (off drops what is planned)"),
        drop=_("A planned follow-up's number, to drop it"),
    )
    async def followups(
        self,
        interaction: Interaction,
        set: Literal["on", "off"] | None = None,
        drop: app_commands.Range[int, 1] | None = None,
    ) -> None:
        if set is not None and drop is not None:
            raise InvalidInput("choose set or drop, not both")
        store = self.bot.runtime.store
        user = interaction.user.id
        if set is not None:
            dropped = await followups.set_choice(store, user, set == "on")
            text = render.followups_set(set == "on", dropped)
        elif drop is not None:
            await followups.drop(store, user, drop)
            text = f"Follow-up #{drop} dropped: I will not ask about it."
        else:
            # What the latest memories allow is planned first, so the list shows it.
            await self.bot.runtime.echo.followups.plan()
            text = render.render_followups(
                await followups.planned(store, user),
                chosen=await followups.choice(store, user),
                zone=self.bot.runtime.characters.default.zone,
                where=where,
            )
        if not self.bot.runtime.echo.options.followups.enabled:
            text = f"{NEVER}\n{text}"
        await send_ephemeral(interaction, text)


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(FollowUpsCog(bot))
