"""EchoBot: the Discord client. Resources are built in `main` and passed in; nothing global."""

from __future__ import annotations

import datetime
import logging
import sys
from typing import Any

import discord
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from discord import app_commands
from discord.ext import commands

from bot import render
from bot.i18n import FrenchTranslator
from bot.runtime import Runtime
from bot.startup import channel_warnings
from memory import manage_erasure
from memory.errors import Forbidden, InvalidInput, NotFound, unexpected
from memory.indexer import start_scheduler

log = logging.getLogger(__name__)

# How often the reflection worker looks at the outbox (a turn also wakes it at once).
REFLECTION_POLL = 5.0


class EchoTree(app_commands.CommandTree["EchoBot"]):
    """The command tree, with the one error handler: a short message to the user, the traceback
    in the log."""

    async def on_error(
        self, interaction: discord.Interaction[EchoBot], error: app_commands.AppCommandError
    ) -> None:
        original = getattr(error, "original", error)
        if isinstance(original, NotFound | Forbidden):
            message = f"{_sentence(original)}."
        elif isinstance(error, app_commands.MissingPermissions | app_commands.NoPrivateMessage):
            message = str(error)
        elif isinstance(original, InvalidInput):
            message = f"{original}."
        else:  # a bug (a ValueError too): the person is not told it was their mistake
            log.error("command %s failed: %s", interaction.command and interaction.command.name,
                      unexpected(original))  # fmt: skip
            message = "Something went wrong on my side; it has been logged."
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
        if isinstance(error, NotFound | Forbidden | InvalidInput):
            message = f"{str(error).capitalize()}."
        else:
            log.error("button %s failed: %s", getattr(item, "custom_id", "?"), unexpected(error))
            message = "Something went wrong on my side; it has been logged."
        await send_ephemeral(interaction, message)


async def send_ephemeral(interaction: discord.Interaction[EchoBot], text: str) -> None:
    """Send a private answer, split under Discord's limit, never pinging anyone."""
    chunks = render.split_message(render.defang(text)) or ["…"]
    none = discord.AllowedMentions.none()
    for chunk in chunks:
        if interaction.response.is_done():
            await interaction.followup.send(chunk, ephemeral=True, allowed_mentions=none)
        else:
            await interaction.response.send_message(chunk, ephemeral=True, allowed_mentions=none)


async def after_turns(runtime: Runtime) -> None:
    """Write what a busy database refused, then reflect on the queued exchanges. Never raises:
    it runs as a background task and a scheduler job, whose own error logs would print the
    exception's message."""
    try:
        await runtime.engine.flush_pending()
        await runtime.worker.run_due()
    except Exception as exc:
        log.error("background writes and reflections failed: %s", unexpected(exc))


def start_background(runtime: Runtime) -> AsyncIOScheduler:
    """Start the memory's background work (re-indexing, reflections, erasures, retention) in
    the running loop; the caller shuts the scheduler down. It needs no Discord connection."""
    scheduler = start_scheduler(runtime.indexer, interval=runtime.settings.memory.reindex_interval)
    # A first run at once: what waited in the outbox across a restart is not left for later.
    scheduler.add_job(
        after_turns, "interval", args=[runtime], seconds=REFLECTION_POLL, id="reflect",
        max_instances=1, coalesce=True, misfire_grace_time=60,
        next_run_time=datetime.datetime.now(datetime.UTC),
    )  # fmt: skip
    # The caches of the people active lately, built in the background before they speak.
    scheduler.add_job(runtime.engine.warm_up, "date", id="warm-up", misfire_grace_time=60)
    add_privacy_jobs(scheduler, runtime)
    return scheduler


def add_privacy_jobs(scheduler: AsyncIOScheduler, runtime: Runtime) -> None:
    """Finish the erasures a reader kept pending, and apply the retention rules ([privacy])."""
    manage_erasure.schedule(
        scheduler, runtime.store, history_days=runtime.settings.privacy.history_days
    )


class EchoBot(commands.Bot):
    """The character on Discord."""

    def __init__(
        self, runtime: Runtime, *, sync_commands: bool = True, background: bool = True
    ) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            help_command=None,
            tree_cls=EchoTree,
        )
        self.runtime = runtime
        self.sync_commands = sync_commands
        self.background = background
        self.scheduler: AsyncIOScheduler | None = None
        self.channels_checked = False

    async def setup_hook(self) -> None:
        from bot.cogs.admin import Admin
        from bot.cogs.context import ContextCommands
        from bot.cogs.conversation import Conversation
        from bot.cogs.erasure import ErasureCommands
        from bot.cogs.memories import MemoryCommands
        from bot.cogs.moderation import Moderation
        from bot.cogs.personal import PersonalData

        await self.tree.set_translator(FrenchTranslator())
        await self.add_cog(Conversation(self))
        await self.add_cog(MemoryCommands(self))
        await self.add_cog(Admin(self))
        await self.add_cog(ContextCommands(self))
        await self.add_cog(PersonalData(self))
        await self.add_cog(Moderation(self))
        await self.add_cog(ErasureCommands(self))
        if self.background:
            self.scheduler = start_background(self.runtime)
        if self.sync_commands:
            await self.tree.sync()

    async def after_turns(self) -> None:
        """Write what a busy database refused, then reflect on the queued exchanges."""
        await after_turns(self.runtime)

    async def on_error(self, event_method: str, /, *args: object, **kwargs: object) -> None:
        """An event handler raised: log it with where it came from, never what was said."""
        exc = sys.exc_info()[1]
        if exc is None:
            log.error("event %s failed", event_method)
        else:
            log.error("event %s failed: %s", event_method, unexpected(exc))

    async def on_ready(self) -> None:
        # on_ready can fire several times (reconnects): it only logs, the channels once.
        log.info("connected as %s (%s)", self.user, self.user and self.user.id)
        if not self.channels_checked:
            self.channels_checked = True
            for line in channel_warnings(self, self.runtime.settings.discord.channels):
                log.warning("%s", line)

    async def close(self) -> None:
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        await super().close()
