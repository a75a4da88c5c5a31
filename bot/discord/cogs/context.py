"""The context: /context (live preview of your next prompt), /strategy, /lore, and the message
menu commands "Exclude from context" / "Include in context"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.discord import faces
from bot.discord.ui import (
    Interaction,
    origin_of,
    playing_here,
    send_ephemeral,
    story_here,
    story_of,
)
from memory import HistoryMessage, LoreScope, manage
from memory.manage import context as manage_context

if TYPE_CHECKING:
    from bot.discord.app import EchoBot


async def strategy_choices(
    interaction: Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """The strategies whose name holds what was typed so far."""
    names = manage_context.strategy_names(interaction.client.runtime.engine)
    return [app_commands.Choice(name=n, value=n) for n in names if current in n][:25]


async def _stored(interaction: Interaction, message: discord.Message) -> HistoryMessage | None:
    """The stored row of a Discord message. A message the bot sent for a reply (its own or a
    character's webhook's) is recorded with its exchange; an older one is a Discord reply to
    the message it answers. Either way, the answer's row whose text holds the chunk."""
    bot = interaction.client
    store = bot.runtime.store
    me = bot.user.id if bot.user else 0
    question = await manage.exchange_of_sent(store, message.id)
    if question is None:
        if message.author.id != me or not message.reference or not message.reference.message_id:
            return await manage_context.stored_message(store, f"discord:{message.id}")
        question = f"discord:{message.reference.message_id}"
    chunk = faces.body(message.content).replace("\u200b", "").strip()
    return await manage_context.stored_answer(store, question, chunk)


class ContextCommands(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot
        self.menus = [
            app_commands.ContextMenu(name=_("Exclude from context"), callback=self.exclude),
            app_commands.ContextMenu(name=_("Include in context"), callback=self.include),
        ]

    async def cog_load(self) -> None:
        for menu in self.menus:
            self.bot.tree.add_command(menu)

    async def cog_unload(self) -> None:
        for menu in self.menus:
            self.bot.tree.remove_command(menu.name, type=menu.type)

    @app_commands.command(
        name=_("context"), description=_("What the character would see for your next message")
    )
    @app_commands.describe(
        message=_("A draft of your next message (optional)"),
        full=_("One line per history message instead of one per run"),
    )
    async def context(
        self, interaction: Interaction, message: str = "", full: bool = False
    ) -> None:
        plan = await self.bot.runtime.engine.preview(
            user_id=interaction.user.id,
            user_name=interaction.user.display_name,
            story_id=story_of(interaction),
            origin=origin_of(interaction),
            text=message,
            character=playing_here(interaction).key,
        )
        await send_ephemeral(interaction, render.render_context(plan, full=full))

    @app_commands.command(
        name=_("strategy"), description=_("How this conversation's context is trimmed")
    )
    @app_commands.describe(name=_("truncate, summarize, vector-recall, manual, or a plugin's"))
    @app_commands.autocomplete(name=strategy_choices)
    async def strategy(self, interaction: Interaction, name: str = "") -> None:
        engine, story = self.bot.runtime.engine, story_here(interaction)
        if not name:
            found = await manage_context.strategies(engine, story)
            await send_ephemeral(interaction, found.line())
            return
        if interaction.guild_id is not None and not interaction.permissions.manage_channels:
            raise app_commands.MissingPermissions(["manage_channels"])
        chosen = await manage_context.choose_strategy(engine, story, name)
        await send_ephemeral(interaction, f"Strategy here is now `{chosen}`.")

    lore = app_commands.Group(
        name=_("lore"),
        description=_("World knowledge the character uses when keywords come up"),
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    @lore.command(name=_("add"), description=_("Add a lore entry for this server"))
    @app_commands.describe(
        keywords=_("Words that activate it, separated by commas"),
        content=_("What the character should know"),
        scope=_("Any character, or only the one the bot plays now"),
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    async def lore_add(
        self,
        interaction: Interaction,
        keywords: str,
        content: str,
        scope: Literal["global", "character"] = "global",
    ) -> None:
        entry = await manage_context.add_lore(
            self.bot.runtime.store,
            keywords=keywords,
            content=content,
            guild_id=interaction.guild_id,
            scope=LoreScope(scope),
            character=playing_here(interaction).name,
            created_by=interaction.user.id,
        )
        await send_ephemeral(interaction, f"Lore entry #{entry.id} added.")

    @lore.command(name=_("list"), description=_("The lore entries that apply here"))
    @app_commands.checks.has_permissions(manage_guild=True)
    async def lore_list(self, interaction: Interaction) -> None:
        entries = await manage_context.list_lore(self.bot.runtime.store, interaction.guild_id)
        await send_ephemeral(
            interaction, render.render_lore(entries, guild_id=interaction.guild_id)
        )

    @lore.command(name=_("remove"), description=_("Remove one of this server's lore entries"))
    @app_commands.describe(entry=_("The entry's number, from /lore list"))
    @app_commands.checks.has_permissions(manage_guild=True)
    async def lore_remove(self, interaction: Interaction, entry: int) -> None:
        await manage_context.remove_lore(
            self.bot.runtime.store, entry, guild_id=interaction.guild_id
        )
        await send_ephemeral(interaction, f"Lore entry #{entry} removed.")

    async def exclude(self, interaction: Interaction, message: discord.Message) -> None:
        await self._set_excluded(interaction, message, True)

    async def include(self, interaction: Interaction, message: discord.Message) -> None:
        await self._set_excluded(interaction, message, False)

    async def _set_excluded(
        self, interaction: Interaction, message: discord.Message, excluded: bool
    ) -> None:
        moderator = interaction.guild_id is not None and interaction.permissions.manage_messages
        await manage_context.set_excluded(
            self.bot.runtime.store,
            await _stored(interaction, message),
            actor_id=interaction.user.id,
            excluded=excluded,
            moderator=moderator,
        )
        await send_ephemeral(
            interaction,
            "Excluded from the context; it stays in the history. “Include in context” undoes it."
            if excluded
            else "Included in the context again.",
        )


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(ContextCommands(bot))
