"""Characters for adults only, where Discord allows them: a channel Discord marks age-restricted
(a thread: its channel's mark), and DMs when the operator allows them (`[discord] adult_in_dms`).
Elsewhere such a character declines in one line, before anything is stored, and says it once
per person and place in ten minutes. Discord's policy
asks it of bots: adult content only in age-restricted channels."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

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


# A person is told once per place in this many seconds: in an open channel every message would
# otherwise get the same line, which reads as spam and spends the bot's rate limit.
DECLINE_EVERY = 600.0
# The places and people remembered for that (the oldest forgotten first).
_REMEMBERED = 4096


class Declines:
    """When each person was last told, in each place, that the character does not play there."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._told: OrderedDict[tuple[int, int], float] = OrderedDict()
        # Messages declined without a word (the person was told a moment ago), for the log.
        self.quiet = 0

    def tell(self, person: int, place: int) -> bool:
        """Whether to say the line now to `person` in `place` (once per DECLINE_EVERY)."""
        now = self._clock()
        key = (person, place)
        last = self._told.get(key)
        if last is not None and now - last < DECLINE_EVERY:
            self.quiet += 1
            return False
        self._told[key] = now
        self._told.move_to_end(key)
        while len(self._told) > _REMEMBERED:
            self._told.popitem(last=False)
        return True
