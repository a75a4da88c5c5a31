"""A person's memories that changed: their history, undoing a replacement, correcting one.

Every operation takes the caller's user id: another person's memory id answers exactly like a
missing one (NotFound) and changes nothing. A correction is a new version that replaces the old
one, through the same rules as a memory the person adds (the filters a person's words pass, the
dedup against their other memories), the old wording kept as history.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from dataclasses import dataclass

from memory.errors import InvalidInput, NotFound
from memory.model import MANUAL_EXCHANGE, Candidate, Memory
from memory.store import Store, Tx
from memory.store.tables import counters, memories, memory_versions
from memory.store.tables.memory_versions import Revision
from memory.text import clean
from memory.write.apply import with_index
from memory.write.dedup import Action
from memory.write.dedup_index import DedupIndex
from memory.write.dedup_pool import IndexBuilder
from memory.write.reflection import MAX_MEMORY_CHARS
from memory.write.supersede import replace
from memory.write.voice import as_memory

# The longest text a correction may have: a memory's.
MAX_CHARS = MAX_MEMORY_CHARS


@dataclass(frozen=True, slots=True)
class Chain:
    """A memory as it is now, since when, and its earlier versions, oldest first."""

    memory: Memory
    since: float
    earlier: tuple[Revision, ...]
    source: str  # the exchange its current wording came from ('manual:...': the person's)
    dropped: int = 0  # its oldest versions dropped to keep the history bounded


async def history(store: Store, user_id: int, memory_id: int) -> Chain:
    """Return the caller's memory with its earlier versions; NotFound for another's id."""
    memory = await memories.get(store, user_id, memory_id)
    if memory is None:
        raise NotFound(f"no memory #{memory_id}")
    earlier = await memory_versions.history(store, user_id, memory_id)
    since = earlier[-1].valid_until if earlier else memory.created_at
    source = await memory_versions.wording_source(store, memory_id)
    dropped = await memory_versions.dropped(store, user_id, memory_id)
    return Chain(memory, since, tuple(earlier), source, dropped)


async def replaced_until(store: Store, user_id: int, ids: Collection[int]) -> dict[int, float]:
    """Of the caller's memories `ids`, those that replaced an earlier version, and when."""
    return await memory_versions.replaced_until(store, user_id, ids)


async def restore(store: Store, user_id: int, memory_id: int) -> Memory:
    """Undo the last replacement of the caller's memory (the current wording kept as history);
    NotFound for another's id or a memory that never changed."""
    now = time.time()
    found = await store.transact(
        lambda tx: memory_versions.restore(tx, user_id, memory_id, now=now)
    )
    if found is None:
        raise NotFound(f"no earlier version of memory #{memory_id}")
    await store.transact(lambda tx: counters.bump(tx, "memories_restored"))
    return found


async def edit(
    store: Store,
    user_id: int,
    memory_id: int,
    text: str,
    *,
    now: float | None = None,
    builder: IndexBuilder | None = None,
) -> Memory:
    """Correct the caller's memory: `text` becomes its current wording (in the third person,
    as /remember stores it), the old one history.
    NotFound for another's id; InvalidInput for an empty or too long text, or one that says
    what another of their memories already does."""
    text = clean(text)
    if not text or len(text) > MAX_MEMORY_CHARS:
        raise InvalidInput(f"a memory is 1 to {MAX_MEMORY_CHARS} characters")
    memory = await memories.get(store, user_id, memory_id)
    if memory is None:
        raise NotFound(f"no memory #{memory_id}")
    text = as_memory(text, memory.kind, limit=MAX_MEMORY_CHARS)
    when = time.time() if now is None else now
    story = memory.story_id if memory.story_id is not None else 0
    origin = memory.origin or ""

    async def run(tx: Tx, index: DedupIndex) -> Memory:
        current = await memory_versions.get_in(tx, user_id, memory_id)
        if current is None:  # forgotten meanwhile
            raise NotFound(f"no memory #{memory_id}")
        if current.text == text:
            raise InvalidInput(f"memory #{memory_id} already says this")
        # Off the loop, as merge_candidate decides (a common word walks all their memories).
        decision = await asyncio.to_thread(index.decide, text)
        other = decision.target
        if decision.action is not Action.CREATE and other is not None and other.id != memory_id:
            raise InvalidInput(f"memory #{other.id} already says this")
        candidate = Candidate(text=text, kind=current.kind, scope=current.scope, confidence=1.0)
        edited = await replace(
            tx,
            index,
            current,
            candidate,
            exchange_id=f"{MANUAL_EXCHANGE}{user_id}:{when}",
            ended_by="edit",
            now=when,
        )
        await counters.bump(tx, "memories_edited")
        return edited

    return await with_index(store, user_id, story, origin, run, builder=builder)
