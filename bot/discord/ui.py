"""What every cog shares: the command tree with its one error handler, the view base whose button
errors get the same treatment, the private answer, and where an interaction happens (its story,
its origin). The cogs import this module, never bot.discord.app, which loads them as extensions."""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot import render
from bot.runtime import Runtime
from memory import (
    Character,
    Forbidden,
    InvalidInput,
    Language,
    NotFound,
    Origin,
    guild_origin,
    unexpected,
)

log = logging.getLogger(__name__)


class EchoClient(commands.Bot):
    """The bot as the cogs and the command tree see it: a discord.py bot with its runtime.
    bot.discord.app's EchoBot is the one; declared here, the type needs no import of the app,
    which imports this module for its tree."""

    runtime: Runtime


Interaction = discord.Interaction[EchoClient]

BUG = "Something went wrong on my side; it has been logged."


class EchoTree(app_commands.CommandTree[EchoClient]):
    """The command tree, with the one error handler: a short message to the user, the traceback
    in the log."""

    async def on_error(self, interaction: Interaction, error: app_commands.AppCommandError) -> None:
        original = getattr(error, "original", error)
        if isinstance(original, NotFound | Forbidden):
            message = f"{_sentence(original)}."
        elif isinstance(error, app_commands.MissingPermissions | app_commands.NoPrivateMessage):
            message = str(error)
        elif isinstance(original, InvalidInput):
            message = f"{original}."
        else:  # a bug (a ValueError too): the person is not told it was their mistake
            log.error(
                "command %s failed: %s",
                interaction.command and interaction.command.name,
                unexpected(original),
            )
            message = BUG
        await send_ephemeral(interaction, message)


def _sentence(error: Exception) -> str:
    """An error's text as a sentence: its first letter up, the rest as written (a permission's
    name keeps its capitals)."""
    text = str(error)
    return text[:1].upper() + text[1:]


class EchoView(discord.ui.View):
    """A view whose button errors get the command tree's treatment: a short private answer,
    and for a bug the log line with its frames, never its message (discord.py's default logs the
    exception with its text)."""

    async def on_error(
        self, interaction: discord.Interaction[Any], error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        await answer_error(interaction, error, getattr(item, "custom_id", "?"))


async def answer_error(interaction: discord.Interaction[Any], error: Exception, what: str) -> None:
    """A button's or a form's error as the person reads it: their mistake in one sentence, a
    bug as BUG with its frames in the log (never its message)."""
    if isinstance(error, NotFound | Forbidden | InvalidInput):
        message = f"{_sentence(error)}."
    else:
        log.error("button %s failed: %s", what, unexpected(error))
        message = BUG
    await send_ephemeral(interaction, message)


async def send_ephemeral(
    interaction: discord.Interaction[Any], text: str, *, view: discord.ui.View | None = None
) -> None:
    """Send a private answer, split under Discord's limit, never pinging anyone, without any
    of the bot's secrets; a `view` goes with its last part."""
    text = interaction.client.runtime.secrets.remove(text)
    chunks = render.split_message(render.defang(text)) or ["…"]
    none = discord.AllowedMentions.none()
    for n, chunk in enumerate(chunks):
        extra: dict[str, Any] = {"view": view} if view is not None and n == len(chunks) - 1 else {}
        if interaction.response.is_done():
            await interaction.followup.send(chunk, ephemeral=True, allowed_mentions=none, **extra)
        else:
            await interaction.response.send_message(
                chunk, ephemeral=True, allowed_mentions=none, **extra
            )


def story_of(interaction: Interaction) -> int:
    """The story an interaction happens in: its channel (a DM is a channel too)."""
    return interaction.channel_id or interaction.user.id


def playing_here(interaction: Interaction) -> Character:
    """The character that plays where an interaction happens (in DMs: the person's choice)."""
    cast = interaction.client.runtime.characters
    if interaction.guild_id is None:
        return cast.for_person(interaction.user.id)
    parent = getattr(interaction.channel, "parent_id", None)
    return cast.for_channel(interaction.channel_id or 0, parent)


def whose_memories(interaction: Interaction) -> str:
    """The line naming whose memories of the person are shown, when there are several
    characters that each keep their own ("" otherwise)."""
    cast = interaction.client.runtime.characters
    if len(cast) == 1 or cast.shared:
        return ""
    playing = playing_here(interaction)
    return f"{playing.name}'s memories of you (`{playing.key}`; each character keeps its own).\n"


def person_here(interaction: Interaction) -> int:
    """The id the character playing here keeps the person's memories under."""
    cast = interaction.client.runtime.characters
    return cast.person_id(playing_here(interaction).key, interaction.user.id)


def story_here(interaction: Interaction) -> int:
    """The id the character playing here keeps this channel's (or DM's) story under."""
    cast = interaction.client.runtime.characters
    return cast.story_id(playing_here(interaction).key, story_of(interaction))


def language_of(interaction: Interaction) -> Language:
    """The language the caller's Discord is set to, for the dates an answer shows: French for
    French (Discord has one French, "fr"), English for any other."""
    return "fr" if interaction.locale is discord.Locale.french else "en"


def origin_of(interaction: Interaction) -> Origin:
    """Where an interaction happens, as memories record it."""
    return guild_origin(interaction.guild_id)
