"""A person's own data: /privacy (where their memories are served) and /export (everything
stored about them, as a private JSON file)."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot.discord.ui import Interaction, send_ephemeral
from bot.render import count
from memory.manage import export as manage_export
from memory.manage import privacy as manage_privacy

if TYPE_CHECKING:
    from bot.discord.app import EchoBot


# What /privacy says of a message deleted on Discord ([privacy] follow_deletions).
DELETIONS = {
    True: "A message you delete on Discord is forgotten here too, as “Forget this message” "
    "forgets it (with my reply and what I learned from it); one you edit, I follow, and what "
    "I learned from the old wording goes.",
    False: "A message you delete on Discord stays in my memory (the bot's operator chose so): "
    "use Apps → “Forget this message” on it first. One you edit, I follow, and what I learned "
    "from the old wording goes.",
}

# What /privacy says of receipts (bot.discord.cogs.off_record).
RECEIPTS = {
    True: "Receipts: on. When I store something from one of your messages, I DM you what, with "
    "Undo and Edit (none if your DMs are closed).",
    False: "Receipts: off (`/privacy receipts:on`: a DM each time I store something from one of "
    "your messages).",
}
OFF_RECORD = (
    "To keep one message out of my memory: Apps → “Don't remember this” on it, or react 🤐 "
    "(I still answer it)."
)


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
    @app_commands.describe(
        memories=_("Where learned, everywhere, or the default"),
        receipts=_("A DM when I store something from your message"),
    )
    async def privacy(
        self,
        interaction: Interaction,
        memories: Literal["where_learned", "everywhere", "default"] | None = None,
        receipts: Literal["on", "off"] | None = None,
    ) -> None:
        store = self.bot.runtime.store
        user = interaction.user.id
        if memories is None:
            found = await manage_privacy.get(store, user, default=self.default_served)
        else:
            found = await manage_privacy.choose(store, user, memories, default=self.default_served)
        if receipts is None:
            wanted = await manage_privacy.receipts(store, user)
        else:
            wanted = await manage_privacy.choose_receipts(store, user, receipts == "on")
        follows = self.bot.runtime.settings.privacy.follow_deletions
        await send_ephemeral(
            interaction, f"{found.line()}\n{DELETIONS[follows]}\n{RECEIPTS[wanted]}\n{OFF_RECORD}"
        )

    @app_commands.command(
        name=_("export"), description=_("Everything I store about you, as a file only you see")
    )
    async def export(self, interaction: Interaction) -> None:
        runtime = self.bot.runtime
        data = await manage_export.export(
            runtime.store,
            interaction.user.id,
            default_served=self.default_served,
            cast=runtime.characters,
        )
        raw = json.dumps(data, ensure_ascii=False, indent=1).encode()
        limit = interaction.filesize_limit
        if len(raw) > limit:
            await send_ephemeral(
                interaction,
                f"Your data is {len(raw) / 2**20:.1f} MiB, over the {limit / 2**20:.0f} MiB a "
                "file may be here: the bot's owner can give it to you with "
                f"`echo-bot export --user-id {interaction.user.id}`.",
            )
            return
        made = sum(len(v) for v in data["derived"].values())
        await interaction.response.send_message(
            "Everything I store about you: "
            f"{count(len(data['memories']), 'memory', 'memories')}, "
            f"{count(len(data['messages']), 'message')} (with my replies), "
            f"{count(made, 'thing')} drawn from them.",
            file=discord.File(io.BytesIO(raw), filename=f"echo-export-{interaction.user.id}.json"),
            ephemeral=True,
            allowed_mentions=discord.AllowedMentions.none(),
        )


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(PersonalData(bot))
