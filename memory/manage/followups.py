"""What a person does with their follow-ups (/followups): turn them on or off, see what is
planned (each with its memory id, when and where), drop one; /why on one; the figures.

Every operation takes the caller's real user id and reaches only their follow-ups: another
person's follow-up id answers exactly like a missing one (NotFound). The planning and sending
themselves are memory.followups' (the `followups` job).
"""

from __future__ import annotations

import time

from memory.errors import NotFound
from memory.followups.choose import Skip
from memory.followups.sender import (
    Deliverer,
    Delivery,
    FollowUp,
    FollowUps,
    Outcome,
    Policy,
)
from memory.store import Store
from memory.store.tables import counters
from memory.store.tables import followups as table
from memory.store.tables.followups import Planned

# The schema that holds follow-ups: an older database has none to show.
FOLLOWUPS_SCHEMA = 37

__all__ = [
    "FOLLOWUPS_SCHEMA",
    "Deliverer",
    "Delivery",
    "FollowUp",
    "FollowUps",
    "Outcome",
    "Planned",
    "Policy",
    "Skip",
    "choice",
    "counts",
    "drop",
    "last_sent",
    "planned",
    "set_choice",
]


async def set_choice(store: Store, user_id: int, enabled: bool) -> int:
    """Turn the person's follow-ups on or off; off drops what was planned (return how many)."""
    now = time.time()
    dropped: int = await store.transact(lambda tx: table.choose(tx, user_id, enabled, now=now))
    return dropped


async def choice(store: Store, user_id: int) -> bool | None:
    """The person's own choice (None: none made, the place's default applies)."""
    return await table.choice(store, user_id)


async def planned(store: Store, user_id: int) -> list[Planned]:
    """The person's follow-ups: planned (soonest first), then being sent and sent."""
    return await table.of_person(store, user_id)


async def drop(store: Store, user_id: int, followup_id: int) -> None:
    """Drop one of the person's planned follow-ups; NotFound when none of theirs has this id."""
    if not await store.transact(
        lambda tx: table.drop(tx, user_id, followup_id, reason="dropped by its person")
    ):
        raise NotFound(f"no follow-up #{followup_id} planned for you")


async def last_sent(store: Store, user_id: int, story_id: int) -> Planned | None:
    """The follow-up last sent to this person in this place (for /why), if any."""
    return await table.last_sent(store, user_id, story_id)


async def counts(store: Store) -> dict[str, int]:
    """The follow-ups by status (planned, sent, dropped, blocked...) and the counters kept
    since the start (sent, blocked, dropped by reason)."""
    found = {f"followups_{status}": n for status, n in (await table.counts(store)).items()}
    found.update(await counters.read_all(store, "followup_"))
    return found
