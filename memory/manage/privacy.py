"""Where a person's memories are served, and how to say it for each memory (/privacy, /why,
/memories).

A memory is served where it was learned (its server, or DMs) unless its owner chose
"everywhere": then a server's memories are served in every server and in DMs. A memory learned
in DMs stays in DMs, and a conversation's own memory in that conversation, whatever the choice.
The owner of the bot sets the default (`[privacy] memories_served`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memory.errors import InvalidInput
from memory.model import DM_ORIGIN, Memory, Scope
from memory.store import Store
from memory.store.tables import privacy

WHERE_LEARNED = privacy.WHERE_LEARNED
EVERYWHERE = privacy.EVERYWHERE
# What a person may answer /privacy with: a choice, or "default" to follow the owner's.
DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class Privacy:
    """A person's choice (None: the owner's default) and the default it falls back to."""

    choice: str | None
    default: str

    @property
    def served(self) -> str:
        return self.choice or self.default

    @property
    def everywhere(self) -> bool:
        return self.served == EVERYWHERE

    def line(self, *, terminal: bool = False) -> str:
        """The setting in one sentence (in the terminal's terms: its chat counts as a DM, and
        memories from a server come from an import)."""
        whose = "your choice" if self.choice else "the default here"
        if terminal:
            return (
                "What you say in this chat is used in this chat; memories you imported from a "
                "Discord server are "
                + ("used here too" if self.everywhere else "used only in their server")
                + f" ({whose})."
            )
        if self.everywhere:
            return (
                f"Your memories from servers are used in every server and in DMs ({whose}); "
                "those from DMs only in DMs."
            )
        return f"Each memory is used only where you said it: its server, or DMs ({whose})."


async def get(store: Store, user_id: int, *, default: str) -> Privacy:
    """Return the person's setting."""
    return Privacy(await privacy.memories_served(store, user_id), default)


async def choose(
    store: Store, user_id: int, choice: str, *, default: str, now: float | None = None
) -> Privacy:
    """Set where the person's memories are served (`default`: follow the owner's default)."""
    value = choice.strip().casefold().replace("-", "_").replace(" ", "_")
    if value not in (*privacy.CHOICES, DEFAULT):
        raise InvalidInput(
            f"choose {WHERE_LEARNED}, {EVERYWHERE} or {DEFAULT}, not {choice.strip()[:40]!r}"
        )
    stored = None if value == DEFAULT else value
    when = time.time() if now is None else now
    await store.transact(lambda tx: privacy.set_memories_served(tx, user_id, stored, now=when))
    return Privacy(stored, default)


async def receipts(store: Store, user_id: int) -> bool:
    """Whether the person asked for receipts: a note when a reflection stores something from
    one of their messages (off unless they asked)."""
    return await privacy.receipts(store, user_id)


async def choose_receipts(
    store: Store, user_id: int, wanted: bool, *, now: float | None = None
) -> bool:
    """Turn the person's receipts on or off; return the setting."""
    when = time.time() if now is None else now
    await store.transact(lambda tx: privacy.set_receipts(tx, user_id, wanted, now=when))
    return wanted


def served_where(memory: Memory, *, everywhere: bool) -> str:
    """Where this memory can be used, in a few words."""
    if memory.scope is Scope.STORY:
        return f"only in conversation {memory.story_id}"
    if memory.origin == DM_ORIGIN:
        return "only in DMs"
    if everywhere:
        return "in every server and DMs"
    return f"only in server {memory.origin}"
