"""Pure rendering of a story's shared context for moderators (anchors, positions, with what was
dropped and why), a person's privacy setting, and a server's own figures."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence

from bot.render import count, defang
from memory.manage import ServerStats
from memory.manage.story import HeldAnchor, Positions


def _day(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).date().isoformat()


def mention(user_id: int) -> str:
    """A person as Discord shows them (replies never ping)."""
    return f"<@{user_id}>"


Names = Callable[[int], str]


def render_anchors(anchors: Sequence[HeldAnchor], *, name: Names = mention) -> str:
    """The held anchors with their ids and where each came from, then the last dropped ones
    with who dropped them and why."""

    def _who(user_id: int | None) -> str:
        return "a reflection" if user_id is None else name(user_id)

    held = [a for a in anchors if a.dropped_at is None]
    dropped = [a for a in anchors if a.dropped_at is not None]
    lines = [f"**Anchors** ({len(held)})" if held else "No anchors held here."]
    for a in held:
        source = f"added by {_who(a.added_by)}" if a.added_by is not None else "by a reflection"
        if a.added_by is None and a.speaker:
            source += f" on {defang(a.speaker)}'s message"
        lines.append(f"`#{a.id}` {defang(a.text)} ({source}, {_day(a.created_at)})")
    if dropped:
        lines.append(f"**Dropped** (last {len(dropped)})")
    for a in dropped:
        assert a.dropped_at is not None
        lines.append(
            f"`#{a.id}` {defang(a.text)} — dropped by {_who(a.dropped_by)} on "
            f"{_day(a.dropped_at)}: {defang(a.drop_reason or '')}"
        )
    return "\n".join(lines)


def render_positions(found: Positions, *, name: Names = mention) -> str:
    """The character's positions with their ids, then the last ones a moderator dropped."""
    lines = [] if found.held else ["No positions yet."]
    for p in found.held:
        since = _day(p.anchored_at)
        lines.append(f"`#{p.id}` **{defang(p.topic)}** — {defang(p.idea)} (re-anchored {since})")
    if found.dropped:
        lines.append(f"**Dropped** (last {len(found.dropped)})")
    for d in found.dropped:
        lines.append(
            f"{defang(d.topic)} — dropped by {name(d.dropped_by)} on {_day(d.dropped_at)}: "
            f"{defang(d.reason)}"
        )
    return "\n".join(lines)


def render_server_stats(stats: ServerStats) -> str:
    """One server's figures."""
    return "\n".join(
        [
            f"Memories learned in this server: {stats.memories} "
            f"(of {count(stats.people, 'person', 'people')})",
            f"Turns here: {stats.turns} · without recall by meaning: {stats.degraded_turns}",
            f"Reflections waiting from here: {stats.reflections_waiting}",
            f"Erasures pending (bytes still in the database files): {stats.erasures_pending}",
        ]
    )
