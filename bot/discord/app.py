"""EchoBot: the Discord client. Resources are built in `main` and passed in; nothing global.

Each cog is an extension (a module with `async def setup(bot)`), loaded in `setup_hook`. The
command tree is sent to Discord only when it changed since the last time (its payload's digest is
kept in a file beside the database), or when `echo-bot sync` asks: Discord rate-limits command
uploads, and a bot restarted in a loop would spend the limit for nothing.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

import discord
from discord.ext import commands

from bot.discord import installs
from bot.discord.i18n import FrenchTranslator
from bot.discord.startup import channel_warnings
from bot.discord.ui import EchoClient, EchoTree
from bot.runtime import Runtime, start_jobs
from bot.shards import Shards
from memory import jobs, unexpected

log = logging.getLogger(__name__)

# The cogs, one concern each, loaded in this order.
EXTENSIONS = (
    "bot.discord.cogs.conversation",
    "bot.discord.cogs.answers",
    "bot.discord.cogs.memories",
    "bot.discord.cogs.admin",
    "bot.discord.cogs.context",
    "bot.discord.cogs.personal",
    "bot.discord.cogs.moderation",
    "bot.discord.cogs.erasure",
    "bot.discord.cogs.following",
    "bot.discord.cogs.characters",
    "bot.discord.cogs.channels",
    "bot.discord.cogs.off_record",
)


class Sync(enum.Enum):
    """When the command tree is sent to Discord at start."""

    CHANGED = "changed"  # when its payload differs from the one last sent (`run`)
    ALWAYS = "always"  # `echo-bot sync`
    NEVER = "never"  # tests, benchmarks


def digest_path(database: Path) -> Path:
    """Where the digest of the last command tree sent is kept: beside the database."""
    return database.with_name(database.name + ".commands")


async def tree_digest(bot: commands.Bot) -> str:
    """The digest of what `tree.sync()` would send: every global command as Discord receives
    it (translations included), for this application."""
    tree, translator = bot.tree, bot.tree.translator
    commands_ = tree.get_commands()
    if translator is not None:
        payload = [await c.get_translated_payload(tree, translator) for c in commands_]
    else:
        payload = [c.to_dict(tree) for c in commands_]
    text = json.dumps([bot.application_id, payload], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def make_bot(runtime: Runtime, *, sync: Sync = Sync.CHANGED, background: bool = True) -> EchoBot:
    """The bot the settings ask for: one connection without [discord] shard_count, else this
    process's shards (bot.shards)."""
    shards = runtime.settings.discord.shards
    if shards is None:
        return EchoBot(runtime, sync=sync, background=background)
    return ShardedEchoBot(runtime, shards, sync=sync, background=background)


class EchoBot(EchoClient):
    """The character on Discord."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        sync: Sync = Sync.CHANGED,
        background: bool = True,
        shards: Shards | None = None,
    ) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            help_command=None,
            tree_cls=EchoTree,
            **_shard_options(shards),
        )
        self.runtime = runtime
        self.sharding = shards
        if shards is not None and not shards.sends_commands and sync is Sync.CHANGED:
            # The process holding shard 0 sends them; `echo-bot sync` (ALWAYS) still may.
            sync = Sync.NEVER
        self.sync = sync
        # How many commands this start sent to Discord (0: none; `echo-bot sync` says it).
        self.commands_sent = 0
        self.background = background
        # The memory's background jobs (memory.jobs), while this client runs.
        self.jobs: jobs.Background | None = None
        self.channels_checked = False

    async def setup_hook(self) -> None:
        await self.tree.set_translator(FrenchTranslator())
        for name in EXTENSIONS:
            await self.load_extension(name)
        installs.mark(self.tree, user_install=self.runtime.settings.discord.user_install)
        if self.background:
            self.jobs = start_jobs(self.runtime)
        if self.sync is not Sync.NEVER:
            await self.sync_commands(force=self.sync is Sync.ALWAYS)
        elif self.sharding is not None and not self.sharding.sends_commands:
            log.info(
                "%s: the slash commands are sent by the process holding shard 0",
                self.sharding.describe(),
            )

    async def sync_commands(self, *, force: bool = False) -> bool:
        """Send the command tree to Discord if it changed since it was last sent (or `force`);
        return whether it was sent."""
        marker = digest_path(Path(self.runtime.settings.storage.path))
        digest = await tree_digest(self)
        try:
            last = marker.read_text(encoding="ascii").strip()
        except OSError:
            last = ""  # never sent from here, or the file is unreadable: send
        if digest == last and not force:
            log.info("slash commands unchanged since they were last sent; not synced")
            return False
        await self.tree.sync()
        self.commands_sent = len(self.tree.get_commands())
        try:
            marker.write_text(digest + "\n", encoding="ascii")
        except OSError as exc:
            # Only costs a sync at the next start.
            log.warning("cannot keep the commands' digest in %s (%s)", marker, exc.strerror)
        log.info("slash commands sent to Discord (%d)", self.commands_sent)
        return True

    async def after_turns(self) -> None:
        """Write what a busy database refused, then reflect on the queued exchanges."""
        await jobs.reflect(self.runtime.engine, self.runtime.worker)

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
        if self.jobs is not None:
            await self.jobs.stop()
        await super().close()


class ShardedEchoBot(EchoBot, commands.AutoShardedBot):
    """The character on Discord over several gateway connections: this process's shards."""

    def __init__(
        self,
        runtime: Runtime,
        shards: Shards,
        *,
        sync: Sync = Sync.CHANGED,
        background: bool = True,
    ) -> None:
        super().__init__(runtime, sync=sync, background=background, shards=shards)


def _shard_options(shards: Shards | None) -> dict[str, Any]:
    """What discord.py's AutoShardedClient takes: the count, and the ids unless all are here."""
    if shards is None:
        return {}
    return {
        "shard_count": shards.count,
        "shard_ids": None if shards.ids is None else list(shards.ids),
    }
