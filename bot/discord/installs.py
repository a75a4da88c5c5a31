"""Where the slash commands can be installed and used (`[discord] user_install`).

Off (the default), the commands are sent as before: installed with the bot in a server, usable
there and in the bot's DMs, those marked guild-only in servers only; Discord's defaults apply.

On, people may also add the app to their own account. The commands that need nothing but the
person's own data (PERSONAL) can then be used wherever they are: in servers, in the bot's DMs,
and in their DMs and group DMs with others (Discord's "private channels"). There Discord sends
the bot the command and nothing else: no message events (the bot is not a member), so the
character answers no message there, and the commands about a conversation (/why, /summary,
/context, the anchors...) would find none; they stay with the servers that installed the bot.
"""

from __future__ import annotations

from typing import Any

from discord import app_commands

# The commands about the person's own memories and data, whatever the place.
PERSONAL = frozenset(
    {"memories", "pin", "unpin", "forget", "restore", "remember", "forget-me", "export", "privacy"}
)


def mark(tree: app_commands.CommandTree[Any], *, user_install: bool) -> None:
    """Say on each command where it may be installed and used (the module's docstring); with
    `user_install` off, nothing is said and Discord's defaults apply."""
    if not user_install:
        return
    for command in tree.get_commands():
        if command.name in PERSONAL:
            command.allowed_installs = app_commands.AppInstallationType(guild=True, user=True)
            command.allowed_contexts = app_commands.AppCommandContext(
                guild=True, dm_channel=True, private_channel=True
            )
        else:
            command.allowed_installs = app_commands.AppInstallationType(guild=True)
            command.allowed_contexts = app_commands.AppCommandContext(
                guild=True, dm_channel=not command.guild_only, private_channel=False
            )
