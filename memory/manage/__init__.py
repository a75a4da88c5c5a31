"""What a person can do with their own memories: see why, list, pin, forget, add; the figures
of /stats. (Their whole data: export.py; where memories are served: privacy.py.)

Every operation takes the caller's user id and reaches only that user's memories: another
person's memory id answers exactly like a missing one (NotFound) and changes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import tzinfo

from memory.errors import InvalidInput, NotFound, StoreError
from memory.manage import forgetting
from memory.model import MANUAL_EXCHANGE, Candidate, Kind, Memory, Scope, Turn
from memory.store import Store, Tx
from memory.store.queries import erasure, figures, provenance
from memory.store.tables import counters, history, memories, outbox, sent_messages, turns
from memory.text import clean
from memory.write.apply import Outcome, dated, merge_candidate, record_dates, with_index
from memory.write.dedup_index import DedupIndex
from memory.write.dedup_pool import IndexBuilder
from memory.write.reflection import MAX_MEMORY_CHARS
from memory.write.voice import as_memory

log = logging.getLogger(__name__)


async def record_sent(store: Store, exchange_id: str, message_ids: Sequence[int]) -> int:
    """Record the messages a front end posted for an exchange's reply (each chunk, in order);
    return how many. Nothing is recorded when the reply is not stored (the turn failed, or the
    exchange was erased meanwhile)."""
    if not message_ids:
        return 0
    now = time.time()
    try:
        return await store.transact(
            lambda tx: sent_messages.record(tx, exchange_id, message_ids, now=now)
        )
    except StoreError as exc:  # the reply is out; only a later deletion of it goes unseen
        log.warning("posts of exchange %s not recorded (%s)", exchange_id, exc)
        return 0


async def exchange_of_sent(store: Store, message_id: int) -> str | None:
    """The exchange a message the bot posted belongs to, or None (not one of its replies)."""
    return await sent_messages.exchange_of(store, message_id)


async def posts_of(store: Store, exchange_id: str) -> list[int]:
    """The messages a front end posted for an exchange's reply, in order; the greeting's first
    when one was sent with it (`greeting_of`)."""
    return await sent_messages.of_exchange(store, exchange_id)


async def greeting_of(store: Store, exchange_id: str) -> str | None:
    """The character's greeting sent with the reply to this exchange, if one was."""
    found = await history.by_source(store, f"{exchange_id}:greeting")
    return found.content if found else None


async def forget_posts(store: Store, message_ids: Sequence[int]) -> None:
    """Forget that these posts carried a reply (a front end deletes them itself)."""
    await store.transact(lambda tx: sent_messages.forget_posts(tx, message_ids))


async def why(store: Store, user_id: int, story_id: int) -> Turn | None:
    """Return the caller's last turn in this story with the memories it used."""
    return await turns.last(store, user_id, story_id)


async def list_memories(
    store: Store, user_id: int, *, never_served: bool = False, query: str = ""
) -> list[Memory]:
    """Return the caller's memories, newest first, optionally only those never served."""
    found = await memories.list_for_user(store, user_id)
    if never_served:
        found = [m for m in found if m.served_count == 0]
    if query:
        needle = clean(query).casefold()
        found = [m for m in found if needle in m.text.casefold() or needle == str(m.id)]
    return found


@dataclass(frozen=True, slots=True)
class Learned:
    """When a memory was said, and where: the message it was learned from (its source id and
    story) while that message is stored; "" and 0 when it is gone or the person wrote it."""

    at: float
    origin: str = ""
    story_id: int = 0
    source_id: str = ""


async def learned(store: Store, user_id: int, found: Sequence[Memory]) -> dict[int, Learned]:
    """When and where each of the caller's memories was learned, by memory id."""
    sources = await provenance.learned_from(store, user_id, [m.id for m in found])
    out = {}
    for m in found:
        source = sources.get(m.id)
        if source is None:
            out[m.id] = Learned(m.created_at, m.origin or "")
        else:
            out[m.id] = Learned(source[2], m.origin or "", source[1], source[0])
    return out


async def get(store: Store, user_id: int, memory_id: int) -> Memory:
    """Return one of the caller's memories; NotFound for a missing or another person's id."""
    memory = await memories.get(store, user_id, memory_id)
    if memory is None:
        raise NotFound(f"no memory #{memory_id}")
    return memory


async def set_pinned(store: Store, user_id: int, memory_id: int, pinned: bool) -> Memory:
    """Pin or unpin one of the caller's memories."""
    if not await store.transact(lambda tx: memories.set_pinned(tx, user_id, memory_id, pinned)):
        raise NotFound(f"no memory #{memory_id}")
    return await get(store, user_id, memory_id)


async def forget(store: Store, user_id: int, memory_id: int) -> Memory:
    """Erase one of the caller's memories for real: row, vector, counters, traces (see
    forgetting.forget_memory, which also says what still holds the words)."""
    return (await forgetting.forget_memory(store, user_id, memory_id)).memory


async def remember(
    store: Store,
    *,
    user_id: int,
    story_id: int,
    origin: str,
    text: str,
    kind: Kind = Kind.FACT,
    scope: Scope = Scope.GLOBAL,
    now: float | None = None,
    builder: IndexBuilder | None = None,
    zone: tzinfo | None = None,
) -> Outcome:
    """Add a memory the person wrote themself; it goes through dedup like any other (its
    index built by `builder`, the worker's, in another process when large), its relative dates
    dated as a reflection's are (in `zone`; None: the machine's). Written in the first person,
    it is stored in the third, as reflections write (memory.write.voice); the outcome's `text`
    is the wording stored."""
    text = clean(text)
    if not text or len(text) > MAX_MEMORY_CHARS:
        raise InvalidInput(f"a memory is 1 to {MAX_MEMORY_CHARS} characters")
    text = as_memory(text, kind, limit=MAX_MEMORY_CHARS)
    when = time.time() if now is None else now
    candidate, spans = dated(
        Candidate(text=text, kind=kind, scope=scope, confidence=1.0), when, zone
    )

    async def run(tx: Tx, index: DedupIndex) -> Outcome:
        outcome, memory = await merge_candidate(
            tx,
            index,
            candidate,
            exchange_id=f"{MANUAL_EXCHANGE}{user_id}:{when}",
            user_id=user_id,
            story_id=story_id,
            origin=origin,
            now=when,
        )
        await record_dates(tx, outcome, memory, spans)
        await counters.bump(tx, f"memories_{outcome.action}")
        return replace(outcome, text=memory.text)

    return await with_index(store, user_id, story_id, origin, run, builder=builder)


@dataclass(frozen=True, slots=True)
class Stats:
    """Server-wide figures for /stats (no memory text)."""

    memories: int
    users: int
    degraded_turns: int
    turns: int
    outbox_pending: int
    rejections: Mapping[str, int]
    reflection_failures: Mapping[str, int]
    # Why reflections were given up: after retries (by error), or over a person's backlog.
    reflection_drops: Mapping[str, int] = field(default_factory=dict)
    # What the latest failed reflection said (the backend's own words, redacted).
    last_reflection_error: str | None = None
    # Erasures whose bytes are still in the database files (a reader holds an old snapshot).
    erasures_pending: int = 0
    # Memories that changed: replaced by a reflection, edited, restored; and the replacements a
    # reflection proposed that the code refused, by reason.
    changes: Mapping[str, int] = field(default_factory=dict)
    changes_refused: Mapping[str, int] = field(default_factory=dict)
    # What was followed of what people did on Discord: messages deleted and forgotten, replies
    # deleted and dropped from the history, edits followed.
    followed: Mapping[str, int] = field(default_factory=dict)
    # Messages kept off the record, reflections skipped for it, receipts sent or not delivered.
    kept: Mapping[str, int] = field(default_factory=dict)


# The counters of `Stats.followed` (memory.manage.forgetting bumps them).
FOLLOWED = ("deletions_followed", "deleted_replies_followed", "edits_followed")
# The counters of `Stats.kept` (forgetting, the write path, receipts bump them).
KEPT = ("kept_off_record", "reflection_skipped_off_record", "receipts_sent", "receipts_undelivered")


async def stats(store: Store) -> Stats:
    """Return the figures an operator needs to see memory working (or not)."""
    held, users, turn_total = await figures.everywhere(store)
    named = await counters.read_all(store)
    return Stats(
        memories=held,
        users=users,
        degraded_turns=named.get("degraded_turns", 0),
        turns=turn_total,
        outbox_pending=await outbox.pending_count(store),
        rejections={
            k.removeprefix("memories_rejected:"): v
            for k, v in named.items()
            if k.startswith("memories_rejected:")
        },
        reflection_failures={
            k.removeprefix("reflection_failed:"): v
            for k, v in named.items()
            if k.startswith("reflection_failed:")
        },
        reflection_drops={
            k.removeprefix("reflection_dropped_"): v
            for k, v in named.items()
            if k.startswith("reflection_dropped_")
        },
        last_reflection_error=await outbox.last_error(store),
        erasures_pending=len(await erasure.pending(store)),
        changes={
            k.removeprefix("memories_"): v
            for k, v in named.items()
            if k in ("memories_superseded", "memories_edited", "memories_restored")
        },
        changes_refused={
            k.removeprefix("supersession_refused:"): v
            for k, v in named.items()
            if k.startswith("supersession_refused:")
        },
        followed={k: named[k] for k in FOLLOWED if k in named},
        kept={k: named[k] for k in KEPT if k in named},
    )


@dataclass(frozen=True, slots=True)
class ServerStats:
    """One server's figures for its moderators' /stats (no memory text)."""

    memories: int
    people: int
    turns: int
    degraded_turns: int
    reflections_waiting: int
    # Erasures whose bytes are still in the database files: the files are shared by every
    # server, so this one is the bot's.
    erasures_pending: int = 0


async def server_stats(store: Store, guild_id: int) -> ServerStats:
    """Return the figures of what was said in this server only."""
    found = await figures.server(store, str(guild_id))
    return ServerStats(*found, erasures_pending=len(await erasure.pending(store)))
