"""Read-only queries of the operator's page, one thing at a time: people and one person's
memories, the last turns with their selections and plans, stories and their history."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from memory.model import Memory, Reason, Selected, Turn
from memory.store.dashboard import CANDIDATES, RATIO, SERVED
from memory.store.db import Store
from memory.store.memories import MEMORY_COLUMNS, MEMORY_FROM, from_row
from memory.store.timings import TurnPlan, blocks_from_json

# A person's display name as they last wrote it, anywhere.
_LAST_NAME = (
    "(SELECT author_name FROM messages WHERE user_id = {uid} AND user_id IS NOT NULL"
    " ORDER BY id DESC LIMIT 1)"
)

# The orders a person's memories can be listed in: name → ORDER BY (ties by id).
MEMORY_ORDERS: dict[str, str] = {
    "id": "m.id",
    "created": "m.created_at",
    "updated": "m.updated_at",
    "kind": "m.kind",
    "served": SERVED,
    "candidates": CANDIDATES,
    "ratio": f"coalesce({RATIO}, -1.0)",
}
KINDS = ("fact", "preference", "promise", "episode", "rule")
SCOPES = ("global", "story")


@dataclass(frozen=True, slots=True)
class PersonRow:
    user_id: int
    name: str | None
    memories: int
    last_turn_at: float | None


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which of a person's memories to list, in which order, which page."""

    kind: str | None = None
    scope: str | None = None
    never_served: bool = False
    text: str = ""
    order: str = "id"
    descending: bool = True
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True, slots=True)
class StoryRow:
    story_id: int
    messages: int
    last_message_at: float | None


@dataclass(frozen=True, slots=True)
class Revision:
    """A former rolling summary of a story."""

    at: float
    summary: str


@dataclass(frozen=True, slots=True)
class StateChange:
    field: str
    delta: float
    at: float
    user_id: int | None


async def people(store: Store, *, limit: int, offset: int) -> tuple[list[PersonRow], int]:
    """One row per person with memories or turns, the latest turn first; and how many."""
    ids = "SELECT user_id FROM memories UNION SELECT user_id FROM turns"
    total = await store.fetchone(f"SELECT count(*) FROM ({ids})")
    rows = await store.fetchall(
        f"SELECT p.user_id, {_LAST_NAME.format(uid='p.user_id')},"
        " (SELECT count(*) FROM memories WHERE user_id = p.user_id),"
        " (SELECT max(created_at) FROM turns WHERE user_id = p.user_id) AS last_turn"
        f" FROM ({ids}) p ORDER BY last_turn DESC NULLS LAST, p.user_id"
        " LIMIT ? OFFSET ?",
        (limit, offset),
    )
    found = [PersonRow(int(r[0]), r[1], int(r[2]), r[3]) for r in rows]
    return found, int(total[0]) if total else 0


async def person_name(store: Store, user_id: int) -> str | None:
    row = await store.fetchone(f"SELECT {_LAST_NAME.format(uid='?')}", (user_id,))
    return str(row[0]) if row and row[0] is not None else None


async def names(store: Store, user_ids: Collection[int]) -> dict[int, str]:
    """The display name each of these people last wrote under (those with a message kept)."""
    wanted = sorted(set(user_ids))
    found: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        rows = await store.fetchall(
            "SELECT user_id, author_name FROM messages m WHERE id IN (SELECT max(id) FROM"
            f" messages WHERE user_id IN ({', '.join('?' * len(batch))}) GROUP BY user_id)",
            tuple(batch),
        )
        found.update((int(r[0]), str(r[1])) for r in rows)
    return found


async def person_memories(
    store: Store, user_id: int, chosen: MemoryFilter
) -> tuple[list[Memory], int]:
    """One page of a person's memories as filtered and ordered; and how many match."""
    where = ["m.user_id = ?"]
    params: list[object] = [user_id]
    if chosen.kind in KINDS:
        where.append("m.kind = ?")
        params.append(chosen.kind)
    if chosen.scope in SCOPES:
        where.append("m.scope = ?")
        params.append(chosen.scope)
    if chosen.never_served:
        where.append(f"{SERVED} = 0")
    if chosen.text:
        # lower() folds ASCII only: "É" matches only "É".
        where.append("instr(lower(m.text), lower(?)) > 0")
        params.append(chosen.text)
    clause = " AND ".join(where)
    # The counters' joins only when a filter or the order reads them; the page's ids first,
    # then their rows: sorting 50k whole rows (texts) cost 250 ms, their ids 10 (bench/web.py).
    order = MEMORY_ORDERS.get(chosen.order, "m.id")
    joins = MEMORY_FROM if chosen.never_served or not order.startswith("m.") else "FROM memories m"
    total = await store.fetchone(f"SELECT count(*) {joins} WHERE {clause}", params)
    direction = "DESC" if chosen.descending else "ASC"
    ids = await store.fetchall(
        f"SELECT m.id {joins} WHERE {clause}"
        f" ORDER BY {order} {direction}, m.id {direction} LIMIT ? OFFSET ?",
        (*params, chosen.limit, chosen.offset),
    )
    rank = {int(r[0]): i for i, r in enumerate(ids)}
    rows = await store.fetchall(
        f"SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE m.id IN ({', '.join('?' * len(rank))})",
        list(rank),
    ) if rank else []  # fmt: skip
    found = sorted((from_row(r) for r in rows), key=lambda m: rank[m.id])
    return found, int(total[0]) if total else 0


@dataclass(frozen=True, slots=True)
class Answered:
    """The message a turn answered: the person's last one in the story when the turn ran (it
    is stored before the turn is recorded)."""

    message_id: int
    at: float


# The person's last message in the story when the turn was recorded.
_ANSWERED = (
    "(SELECT {column} FROM messages m WHERE m.user_id = t.user_id AND m.story_id = t.story_id"
    " AND m.role = 'user' AND m.created_at <= t.created_at ORDER BY m.id DESC LIMIT 1)"
)


async def recent_turns(
    store: Store, *, limit: int, user_id: int | None = None
) -> list[tuple[Turn, str, Answered | None]]:
    """The last recorded turns, newest first, each with what it selected (as the memories are
    now, like /why), where it was (a server id, or 'dm') and the message it answered (None:
    no longer stored)."""
    where, params = ("WHERE t.user_id = ?", (user_id,)) if user_id is not None else ("", ())
    rows = await store.fetchall(
        "SELECT t.id, t.user_id, t.story_id, t.origin, t.degraded, t.created_at,"
        f" {_ANSWERED.format(column='m.id')}, {_ANSWERED.format(column='m.created_at')}"
        f" FROM turns t {where} ORDER BY t.id DESC LIMIT ?",
        (*params, limit),
    )
    if not rows:
        return []
    ids = [int(r[0]) for r in rows]
    marks = ", ".join("?" * len(ids))
    chosen = await store.fetchall(
        f"SELECT {MEMORY_COLUMNS}, s.reason, s.score, s.matched, s.turn_id {MEMORY_FROM}"
        " JOIN turn_selections s ON s.memory_id = m.id"
        f" WHERE s.turn_id IN ({marks}) ORDER BY s.turn_id, s.position",
        ids,
    )
    by_turn: dict[int, list[Selected]] = {i: [] for i in ids}
    for r in chosen:
        by_turn[int(r["turn_id"])].append(
            Selected(from_row(r), Reason(r["reason"]), r["score"], tuple(r["matched"].split()))
        )
    turns = [
        Turn(int(r[0]), int(r[1]), int(r[2]), tuple(by_turn[int(r[0])]), bool(r[4]), float(r[5]))
        for r in rows
    ]
    return [
        (t, str(r[3]), None if r[6] is None else Answered(int(r[6]), float(r[7])))
        for t, r in zip(turns, rows, strict=True)
    ]


async def plans(store: Store, turn_ids: Sequence[int]) -> dict[int, TurnPlan]:
    """The recorded context plans of these turns."""
    if not turn_ids:
        return {}
    marks = ", ".join("?" * len(turn_ids))
    rows = await store.fetchall(
        "SELECT turn_id, latency_ms, strategy, tokens, budget, decisions FROM turn_plans"
        f" WHERE turn_id IN ({marks})",
        list(turn_ids),
    )
    return {
        int(r[0]): TurnPlan(int(r[0]), float(r[1]), str(r[2]), int(r[3]), int(r[4]),
                            blocks_from_json(str(r[5])))
        for r in rows
    }  # fmt: skip


async def stories(store: Store, *, limit: int) -> list[StoryRow]:
    """Stories with a history, anchors, positions or state, the latest message first."""
    rows = await store.fetchall(
        "WITH ids AS (SELECT story_id FROM messages UNION SELECT story_id FROM anchors"
        " UNION SELECT story_id FROM positions UNION SELECT story_id FROM story_state"
        " UNION SELECT story_id FROM story_summaries)"
        " SELECT i.story_id, (SELECT count(*) FROM messages WHERE story_id = i.story_id),"
        " (SELECT max(created_at) FROM messages WHERE story_id = i.story_id) AS last"
        " FROM ids i ORDER BY last DESC NULLS LAST, i.story_id LIMIT ?",
        (limit,),
    )
    return [StoryRow(int(r[0]), int(r[1]), r[2]) for r in rows]


async def speakers(store: Store, story_ids: Collection[int]) -> dict[int, list[int]]:
    """The people with a message kept in each of these stories, by id."""
    wanted = sorted(set(story_ids))
    found: dict[int, list[int]] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        rows = await store.fetchall(
            "SELECT DISTINCT story_id, user_id FROM messages WHERE role = 'user' AND story_id IN"
            f" ({', '.join('?' * len(batch))}) ORDER BY story_id, user_id",
            tuple(batch),
        )
        for r in rows:
            found.setdefault(int(r[0]), []).append(int(r[1]))
    return found


async def revisions(store: Store, story_id: int, *, limit: int) -> list[Revision]:
    """The story's former rolling summaries, latest first."""
    rows = await store.fetchall(
        "SELECT at, summary FROM summary_revisions WHERE story_id = ?"
        " ORDER BY at DESC, id DESC LIMIT ?",
        (story_id, limit),
    )
    return [Revision(float(r[0]), str(r[1])) for r in rows]


async def state_changes(store: Store, story_id: int, *, limit: int) -> list[StateChange]:
    """What the reflections moved the story's state by, latest first."""
    rows = await store.fetchall(
        "SELECT field, delta, at, user_id FROM state_changes WHERE story_id = ?"
        " ORDER BY id DESC LIMIT ?",
        (story_id, limit),
    )
    return [StateChange(str(r[0]), float(r[1]), float(r[2]), r[3]) for r in rows]
