"""What a person does with their follow-ups (/followups): turn them on or off, see what is
planned (each with its memory id, when and where), drop one; /why on one; the figures.

Every operation takes the caller's real user id and reaches only their follow-ups: another
person's follow-up id answers exactly like a missing one (NotFound). The planning and sending
themselves are memory.followups' (the `followups` job).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

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
from memory.store import Store, Tx
from memory.store.tables import counters
from memory.store.tables import followups as table
from memory.store.tables.followups import Planned

# The schema that holds follow-ups: an older database has none to show.
FOLLOWUPS_SCHEMA = 37

__all__ = [
    "FOLLOWUPS_SCHEMA",
    "Deliverer",
    "Delivery",
    "Figures",
    "FollowUp",
    "FollowUps",
    "Outcome",
    "Planned",
    "Policy",
    "Skip",
    "choice",
    "counts",
    "drop",
    "figures",
    "last_sent",
    "planned",
    "set_choice",
]


async def set_choice(store: Store, user_id: int, enabled: bool) -> int:
    """Turn the person's follow-ups on or off; off drops what was planned (return how many)."""
    now = time.time()

    async def run(tx: Tx) -> int:
        dropped = await table.choose(tx, user_id, enabled, now=now)
        await counters.bump(tx, f"followup_dropped:{Skip.OFF}", dropped)
        return dropped

    return await store.transact(run)


async def choice(store: Store, user_id: int) -> bool | None:
    """The person's own choice (None: none made, the place's default applies)."""
    return await table.choice(store, user_id)


async def planned(store: Store, user_id: int) -> list[Planned]:
    """The person's follow-ups: planned (soonest first), then being sent and sent."""
    return await table.of_person(store, user_id)


async def drop(store: Store, user_id: int, followup_id: int) -> None:
    """Drop one of the person's planned follow-ups; NotFound when none of theirs has this id."""

    async def run(tx: Tx) -> bool:
        if not await table.drop(tx, user_id, followup_id, reason="dropped by its person"):
            return False
        await counters.bump(tx, f"followup_dropped:{BY_PERSON}")
        return True

    if not await store.transact(run):
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


# The reason counted for a follow-up its person dropped (/followups drop).
BY_PERSON = "by its person"


@dataclass(frozen=True, slots=True)
class Figures:
    """The follow-ups in numbers for /stats and the operator's page (counts, never text)."""

    planned: int = 0  # waiting for their day now
    # Since the database was created (counters: they outlive the rows, which go with their
    # memories): posted; counted sent though their process died while posting (never twice);
    # refused (DMs closed); dropped, by reason (memory.followups.choose.Skip, BY_PERSON).
    sent: int = 0
    unconfirmed: int = 0
    blocked: int = 0
    dropped: Mapping[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.planned or self.sent or self.unconfirmed or self.blocked or self.dropped)


async def figures(store: Store) -> Figures:
    """The follow-ups planned now, and those sent, refused and dropped since the start."""
    found = await counts(store)
    prefix = "followup_dropped:"
    return Figures(
        planned=found.get("followups_planned", 0),
        sent=found.get("followup_sent", 0),
        unconfirmed=found.get("followup_unconfirmed", 0),
        blocked=found.get("followup_blocked", 0),
        dropped={k.removeprefix(prefix): v for k, v in found.items() if k.startswith(prefix)},
    )
