"""Which dated memories a follow-up comes back to, and when: a pure function of plain values.

A memory is followed up when the code says so, never the model: of a kind that holds events
(a fact, a promise, an episode), meaning a day that had not passed when it was said, said
within WINDOW_DAYS, the person having asked for follow-ups, the character allowed to. It is due
the day after its last day, at the end of the quiet hours, in the character's time zone. At the
time it is sent it is checked again (`check`): still meaning that day, not spoken of since the
day began, the person still in, at an allowed hour, not too late, and the person seen lately
in the place it would be posted.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

# How long after a memory was said it may still be followed up: a month, as the issue asks
# (an event mentioned in passing two months ago is no longer "coming").
WINDOW_DAYS = 30
# Days after the event a follow-up may still go out (the bot was down, the person's one a day
# was taken): past them "how did it go?" comes too late to ask.
LATE_DAYS = 3
# The person must have spoken in a channel within these days for a follow-up to be posted
# there (a DM needs no such sign: it is theirs).
SPOKE_WITHIN_DAYS = 14
DAY = 86_400.0


class Skip(enum.StrEnum):
    """Why a follow-up due is not sent (counted, and shown by /followups as dropped)."""

    OFF = "off"  # the person (or the place's default) does not want them
    FORGOTTEN = "forgotten"  # the memory is gone
    REPLACED = "replaced"  # the memory no longer means that day
    SPOKEN = "spoken"  # the person spoke of it since the day began
    LATE = "late"  # too many days after the event
    SILENT = "silent"  # the character does not follow up
    AWAY = "away"  # the person has not spoken in that channel lately
    UNREACHABLE = "unreachable"  # the place is gone, or the character plays there no more
    BLOCKED = "blocked"  # the person refused a DM follow-up before: not tried again
    FAILED = "failed"  # the chat server could not write it, MAX_ATTEMPTS times


@dataclass(frozen=True, slots=True)
class Hours:
    """The quiet hours (local, [start, end), may wrap midnight) and the character's zone."""

    zone: tzinfo
    quiet_from: int = 21
    quiet_until: int = 9

    def quiet(self, at: float) -> bool:
        """Whether `at` falls in the quiet hours."""
        hour = datetime.fromtimestamp(at, self.zone).hour
        start, end = self.quiet_from, self.quiet_until
        if start == end:
            return False
        return start <= hour < end if start < end else hour >= start or hour < end

    def day(self, at: float) -> date:
        """The local day of `at`."""
        return datetime.fromtimestamp(at, self.zone).date()

    def midnight(self, day: date) -> float:
        """The moment `day` begins."""
        return datetime.combine(day, time(0), self.zone).timestamp()

    def morning(self, day: date) -> float:
        """The first allowed moment of `day`: the end of the quiet hours."""
        return datetime.combine(day, time(self.quiet_until), self.zone).timestamp()

    def next_allowed(self, at: float) -> float:
        """`at` if it is outside the quiet hours, else the first moment after them."""
        if not self.quiet(at):
            return at
        today = self.morning(self.day(at))
        return today if today > at else self.morning(self.day(at) + timedelta(days=1))


@dataclass(frozen=True, slots=True)
class Dated:
    """A memory with the days it means, as the planner reads it."""

    memory_id: int
    user_id: int  # the person's real id
    kind: str
    first_day: date
    last_day: date
    said_at: float
    # The last time the person's words touched it (written, confirmed, reworded).
    touched_at: float
    origin: str
    # The place it was said (None: not in a conversation: /remember, an import).
    story_id: int | None
    character: str


@dataclass(frozen=True, slots=True)
class Plan:
    """A follow-up to plan: which memory, about which day, due when."""

    memory_id: int
    event_day: date
    due_at: float


FOLLOWED_KINDS = frozenset({"fact", "promise", "episode"})


def choose(
    memories: Sequence[Dated],
    *,
    now: float,
    hours: Hours,
    wanted: Collection[int],
    silent: Collection[str] = frozenset(),
) -> list[Plan]:
    """The follow-ups to plan among these memories: the eligible ones of the people who want
    them (`wanted`: real ids), by characters not `silent`, each due the morning after its last
    day (or at once, outside the quiet hours, if that morning has passed)."""
    plans = []
    for m in memories:
        if m.kind not in FOLLOWED_KINDS or m.story_id is None:
            continue
        if m.user_id not in wanted or m.character in silent:
            continue
        if now - m.said_at > WINDOW_DAYS * DAY:
            continue
        if m.last_day < hours.day(m.said_at):  # already over when it was said
            continue
        if hours.day(now) > m.last_day + timedelta(days=LATE_DAYS):
            continue
        due = max(hours.morning(m.last_day + timedelta(days=1)), hours.next_allowed(now))
        plans.append(Plan(m.memory_id, m.last_day, due))
    return plans


@dataclass(frozen=True, slots=True)
class Now:
    """What is true of a follow-up at the moment it would be sent."""

    wanted: bool  # the person still wants follow-ups
    days: tuple[tuple[date, date], ...] | None  # the memory's days now (None: forgotten)
    touched_at: float  # the last time the person's words touched the memory
    dm: bool
    last_spoke_there: float  # the person's last message in that place (0: never)
    silent: bool = False
    blocked: bool = False  # a DM follow-up to the person was refused before


def check(event_day: date, facts: Now, *, now: float, hours: Hours) -> Skip | None:
    """Why a follow-up about `event_day` must not be sent now (None: send it). Quiet hours are
    not a reason to drop it: the caller moves it to `hours.next_allowed`."""
    if facts.days is None:
        return Skip.FORGOTTEN
    if not facts.wanted:
        return Skip.OFF
    if facts.silent:
        return Skip.SILENT
    if facts.blocked:
        return Skip.BLOCKED
    if all(last != event_day for _, last in facts.days):
        return Skip.REPLACED
    first = min(first for first, last in facts.days if last == event_day)
    if facts.touched_at >= hours.midnight(first):
        return Skip.SPOKEN
    if hours.day(now) > event_day + timedelta(days=LATE_DAYS):
        return Skip.LATE
    if not facts.dm and now - facts.last_spoke_there > SPOKE_WITHIN_DAYS * DAY:
        return Skip.AWAY
    return None
