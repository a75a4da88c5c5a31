"""Forgetting beyond one memory: the message menu "Forget this message", /forget-me (asks first)
and /forget-member for a member who left (Manage Server). Each parses the interaction, calls
one function of memory.manage.forgetting, renders its report."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from bot import render
from bot.discord.cogs.characters import character_keys
from bot.discord.ui import EchoView, Interaction, origin_of, send_ephemeral
from memory import Character, manage
from memory.manage import forgetting

if TYPE_CHECKING:
    from bot.discord.app import EchoBot

# Discord keeps the messages themselves: only their authors (or moderators) can delete them.
FORGET_ME_QUESTION = (
    f"{render.FORGET_ME_QUESTION} Your messages on Discord itself stay: delete them there."
)


class ConfirmErasure(EchoView):
    """Asks the person who ran the command before erasing a person's data; only they can
    press. `origin` None: everywhere (/forget-me); else one server (/forget-member)."""

    def __init__(
        self,
        owner_id: int,
        user_id: int,
        *,
        origin: str | None = None,
        character: Character | None = None,
    ) -> None:
        super().__init__(timeout=120)
        self.owner_id = owner_id
        self.user_id = user_id
        self.origin = origin
        # One character's memory of the person (None: every character's).
        self.character = character

    async def interaction_check(self, interaction: Interaction) -> bool:  # type: ignore[override]
        return interaction.user.id == self.owner_id

    @discord.ui.button(label="Erase", style=discord.ButtonStyle.danger)
    async def confirm(
        self, interaction: Interaction, button: discord.ui.Button[ConfirmErasure]
    ) -> None:
        self.stop()
        runtime = interaction.client.runtime
        key = self.character.key if self.character else None
        report = await forgetting.forget_person(
            runtime.store, self.user_id, origin=self.origin, engine=runtime.engine, character=key
        )
        heading = (
            f"Erased everything {self.character.name} stored about you:"
            if self.character is not None
            else "Erased everything about you:"
            if self.origin is None
            else f"Erased what this server held about user {self.user_id}:"
        )
        await interaction.response.edit_message(
            content=render.render_erasure(report, heading=heading), view=None
        )

    @discord.ui.button(label="Keep", style=discord.ButtonStyle.secondary)
    async def cancel(
        self, interaction: Interaction, button: discord.ui.Button[ConfirmErasure]
    ) -> None:
        self.stop()
        await interaction.response.edit_message(content="Kept; nothing was erased.", view=None)


class ErasureCommands(commands.Cog):
    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot
        self.menu = app_commands.ContextMenu(
            name=_("Forget this message"), callback=self.forget_message
        )

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.menu.name, type=self.menu.type)

    @app_commands.command(
        name=_("forget-me"), description=_("Erase everything I store about you, everywhere")
    )
    @app_commands.describe(character=_("Only what this character stores (default: every one)"))
    @app_commands.autocomplete(character=character_keys)
    async def forget_me(self, interaction: Interaction, character: str | None = None) -> None:
        me, cast = interaction.user.id, self.bot.runtime.characters
        chosen = cast.need(character) if character else None
        question = FORGET_ME_QUESTION
        if chosen is not None:
            question = (
                f"Erase everything {chosen.name} (`{chosen.key}`) stores about you, in every "
                "server and in DMs? The other characters' memories of you stay. This cannot be "
                "undone."
            )
        elif len(cast) > 1:
            question += f" Every character's: {', '.join(c.name for c in cast)}."
        await interaction.response.send_message(
            question,
            view=ConfirmErasure(me, me, character=chosen),
            ephemeral=True,
            allowed_mentions=discord.AllowedMentions.none(),
        )

    @app_commands.command(
        name=_("forget-member"),
        description=_("Erase what this server holds about a member (one who left)"),
    )
    @app_commands.describe(user=_("The member, or their user id"))
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.checks.has_permissions(manage_guild=True)
    async def forget_member(self, interaction: Interaction, user: discord.User) -> None:
        question = (
            f"Erase what this server holds about user {user.id} (memories learned here, their "
            "messages here and my replies, what I made from them)? Their data in other servers "
            "and in DMs stays."
        )
        view = ConfirmErasure(interaction.user.id, user.id, origin=origin_of(interaction))
        await interaction.response.send_message(
            question, view=view, ephemeral=True, allowed_mentions=discord.AllowedMentions.none()
        )

    async def forget_message(self, interaction: Interaction, message: discord.Message) -> None:
        runtime = self.bot.runtime
        me = self.bot.user.id if self.bot.user else 0
        # A message the bot sent for a reply is recorded with its exchange (a character's
        # webhook message too); an older one is a Discord reply to the person's message.
        exchange = await manage.exchange_of_sent(runtime.store, message.id)
        ref = message.reference.message_id if message.reference else None
        question = ref if message.author.id == me and ref else message.id
        stored = await forgetting.resolve(runtime.store, exchange or f"discord:{question}")
        moderator = interaction.guild_id is not None and interaction.permissions.manage_messages
        report = await forgetting.forget_message(
            runtime.store,
            stored,
            actor_id=interaction.user.id,
            moderator=moderator,
            engine=runtime.engine,
        )
        await send_ephemeral(interaction, render.render_erasure(report, heading="Forgotten:"))


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(ErasureCommands(bot))
