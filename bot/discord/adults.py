"""Characters for adults only, where Discord allows them: a channel Discord marks age-restricted
(a thread: its channel's mark), and DMs when the operator allows them (`[discord] adult_in_dms`).
Elsewhere such a character declines in one line, before anything is stored. Discord's policy
asks it of bots: adult content only in age-restricted channels."""

from __future__ import annotations

import discord

DECLINE = "This character plays only in age-restricted channels."


def allowed(channel: object, *, in_dms: bool) -> bool:
    """Whether a character for adults may play in `channel`."""
    if isinstance(channel, discord.DMChannel | discord.GroupChannel):
        return in_dms
    if isinstance(channel, discord.Thread):
        parent = channel.parent
        return isinstance(parent, discord.abc.GuildChannel) and _marked(parent)
    return _marked(channel)


def _marked(channel: object) -> bool:
    """Whether Discord marks a server channel age-restricted (a channel type without the mark
    never is)."""
    is_nsfw = getattr(channel, "is_nsfw", None)
    return bool(is_nsfw()) if callable(is_nsfw) else False
