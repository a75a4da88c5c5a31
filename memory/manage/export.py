"""A person's own data: everything stored about them as one JSON document, and its import.

An import checks the whole file before it writes anything: the first item that cannot be a
memory is named, with why, and nothing is written. Imported memories keep their pin, dates,
earlier versions and the days they mean, and go through dedup (importing a file twice adds
nothing); each one is served where it was learned, as any other.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from memory.character.cast import Characters
from memory.errors import InvalidInput
from memory.manage import casting
from memory.manage.privacy import served_where
from memory.model import DM_ORIGIN, MANUAL_EXCHANGE, Candidate, Kind, Memory, Scope
from memory.store import Store, Tx
from memory.store.queries import personal
from memory.store.tables import characters as cast_store
from memory.store.tables import counters, memories, memory_dates, memory_versions, privacy
from memory.text import clean
from memory.write.apply import merge_candidate
from memory.write.dedup_index import DedupIndex, build_index
from memory.write.reflection import MAX_MEMORY_CHARS

EXPORT_VERSION = 2

# SQLite integers are signed 64-bit: an id outside is refused before it reaches a query.
_SQLITE_INT = range(-(2**63), 2**63)
# Dates are POSIX seconds; past this (year 5138) a number is not one.
MAX_DATE = 1e11

E = TypeVar("E", Kind, Scope)


async def export(
    store: Store, user_id: int, *, default_served: str, cast: Characters | None = None
) -> dict[str, Any]:
    """Return everything stored about the person, JSON-ready: what every character keeps
    (each memory and message names its character's key; with the `cast`, under the ids its
    characters have for them even where none was recorded: casting.person_ids)."""
    choice = await privacy.memories_served(store, user_id)
    everywhere = (choice or default_served) == privacy.EVERYWHERE
    home = await cast_store.recorded_home(store)
    held: list[tuple[Memory, str]] = []
    earlier: dict[int, list[dict[str, Any]]] = {}
    days: dict[int, list[tuple[date, date]]] = {}
    dropped: dict[int, int] = {}
    said: list[dict[str, Any]] = []
    made: dict[str, list[dict[str, Any]]] = {}
    owners: dict[int, str | None] = {}
    for person, key in await casting.person_ids(store, user_id, cast):
        character = key or home
        held += [(m, character) for m in await memories.list_for_user(store, person)]
        for v in await memory_versions.for_user(store, person):
            earlier.setdefault(v.memory_id, []).append(_version_json(v))
        dropped.update(await memory_versions.dropped_for_user(store, person))
        days.update(await memory_dates.for_user(store, person))
        for m in await personal.messages(store, person):
            # Said to the character whose story holds it: under the person's own id, any
            # character's while memories were shared.
            story = int(m["story_id"])
            if story not in owners:
                owners[story] = (await casting.story_owner(store, story))[1]
            said.append({**m, "character": owners[story] or character})
        for kind, rows in (await personal.derived(store, person)).items():
            made.setdefault(kind, []).extend(rows)
    return {
        "version": EXPORT_VERSION,
        "user_id": user_id,
        "exported_at": time.time(),
        "privacy": {"memories_served": choice, "default": default_served},
        "memories": [
            {
                "id": m.id,
                "character": character,
                "text": m.text,
                "kind": m.kind.value,
                "scope": m.scope.value,
                "story_id": m.story_id,
                "origin": m.origin,
                "confidence": m.confidence,
                "pinned": m.pinned,
                "created_at": m.created_at,
                "updated_at": m.updated_at,
                "candidate_count": m.candidate_count,
                "served_count": m.served_count,
                "semantic_count": m.semantic_count,
                "served": served_where(m, everywhere=everywhere),
                "history": earlier.get(m.id, []),
                # Its oldest versions no longer kept (only the newest are): how many.
                "versions_dropped": dropped.get(m.id, 0),
                "dates": [
                    {"first_day": first.isoformat(), "last_day": last.isoformat()}
                    for first, last in days.get(m.id, [])
                ],
            }
            for m, character in sorted(held, key=lambda pair: pair[0].id)
        ],
        "messages": sorted(said, key=lambda m: m["id"]),
        "derived": made,
    }


def _version_json(v: memory_versions.Revision) -> dict[str, Any]:
    """An earlier version of a memory as the export writes it (oldest first in "history")."""
    return {
        "text": v.text,
        "kind": v.kind.value,
        "scope": v.scope.value,
        "story_id": v.story_id,
        "confidence": v.confidence,
        "valid_from": v.valid_from,
        "valid_until": v.valid_until,
        "came_from": v.came_from,
        "ended_by": v.ended_by,
    }


def nothing_stored(data: Mapping[str, Any]) -> bool:
    """Whether an export holds nothing at all: no memory, message, derived item or choice."""
    derived = data["derived"]
    return (
        not data["memories"]
        and not data["messages"]
        and not any(derived.values())
        and data["privacy"]["memories_served"] is None
    )


@dataclass(frozen=True, slots=True)
class Imported:
    """One memory of an export file, checked."""

    text: str
    kind: Kind
    scope: Scope
    story_id: int
    origin: str
    confidence: float
    pinned: bool
    created_at: float | None
    updated_at: float | None
    # Its earlier versions, oldest first: (text, valid_from, valid_until, ended_by).
    history: tuple[tuple[str, float, float, str], ...] = ()
    # The days its relative dates mean (first, last included), as the write path resolved them.
    dates: tuple[tuple[date, date], ...] = ()
    # How many of its oldest versions its first database no longer kept.
    versions_dropped: int = 0


def parse(data: object) -> list[Imported]:
    """Check a whole export file; InvalidInput names the first bad item and why."""
    items = data.get("memories") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise InvalidInput('not an `echo-bot export` file (no "memories" list)')
    version = data.get("version", EXPORT_VERSION) if isinstance(data, Mapping) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInput(f"version {version!r} is not an export version (a whole number)")
    if version > EXPORT_VERSION:
        raise InvalidInput(
            f"export version {version} is newer than this Écho reads (up to {EXPORT_VERSION}):"
            " update Écho, then import it"
        )
    return [_item(index, item) for index, item in enumerate(items)]


def _item(index: int, item: object) -> Imported:
    where = f"memories[{index}]"
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where}: not an object")

    def bad(field: str, why: str) -> InvalidInput:
        return InvalidInput(f"{where}: {field} {why}")

    text = item.get("text")
    if not isinstance(text, str) or not 1 <= len(clean(text)) <= MAX_MEMORY_CHARS:
        raise bad("text", f"must be 1 to {MAX_MEMORY_CHARS} characters")
    kind = _choice(item.get("kind"), Kind)
    if kind is None:
        raise bad("kind", f"must be one of {', '.join(k.value for k in Kind)}")
    scope = _choice(item.get("scope"), Scope)
    if scope is None:
        raise bad("scope", "must be global or story")
    story = item.get("story_id")
    if story is None and scope is Scope.GLOBAL:
        story = 0
    if not isinstance(story, int) or isinstance(story, bool) or story not in _SQLITE_INT:
        raise bad("story_id", "must be a 64-bit integer (required for a story memory)")
    origin = item.get("origin", DM_ORIGIN)
    if not isinstance(origin, str) or not (origin == DM_ORIGIN or _server_id(origin)):
        raise bad("origin", 'must be "dm" or a server id')
    confidence = _number(item.get("confidence", 1.0))
    if confidence is None or not 0.0 <= confidence <= 1.0:
        raise bad("confidence", "must be a number from 0 to 1")
    pinned = item.get("pinned", False)
    if not isinstance(pinned, bool):
        raise bad("pinned", "must be true or false")
    stamps = []
    for field in ("created_at", "updated_at"):
        value = item.get(field)
        stamp = None if value is None else _number(value)
        if value is not None and (stamp is None or not 0.0 <= stamp < MAX_DATE):
            raise bad(field, "must be a date in seconds since 1970")
        stamps.append(stamp)
    created, updated = stamps
    if created is not None and updated is not None and updated < created:
        raise bad("updated_at", "is before created_at")
    earlier = tuple(_history(where, item.get("history", [])))
    days = tuple(_days(where, item.get("dates", [])))
    gone = item.get("versions_dropped", 0)
    if not isinstance(gone, int) or isinstance(gone, bool) or gone not in _SQLITE_INT or gone < 0:
        raise bad("versions_dropped", "must be a whole number, 0 or more")
    return Imported(
        clean(text),
        kind,
        scope,
        story,
        origin,
        confidence,
        pinned,
        created,
        updated,
        earlier,
        days,
        gone,
    )


def _history(where: str, value: object) -> list[tuple[str, float, float, str]]:
    """A memory's earlier versions in an export file, checked."""
    if not isinstance(value, list):
        raise InvalidInput(f"{where}: history must be a list")
    out = []
    for n, version in enumerate(value):
        at = f"{where}.history[{n}]"
        if not isinstance(version, Mapping):
            raise InvalidInput(f"{at}: not an object")
        text = version.get("text")
        if not isinstance(text, str) or not 1 <= len(clean(text)) <= MAX_MEMORY_CHARS:
            raise InvalidInput(f"{at}: text must be 1 to {MAX_MEMORY_CHARS} characters")
        start, end = _number(version.get("valid_from")), _number(version.get("valid_until"))
        if start is None or end is None or not 0.0 <= start <= end < MAX_DATE:
            raise InvalidInput(f"{at}: valid_from and valid_until must be dates, in order")
        ended = version.get("ended_by", "edit")
        if ended not in memory_versions.ENDED_BY:
            raise InvalidInput(
                f"{at}: ended_by must be one of {', '.join(memory_versions.ENDED_BY)}"
            )
        out.append((clean(text), start, end, str(ended)))
    return out


def _days(where: str, value: object) -> list[tuple[date, date]]:
    """The days a memory means in an export file, checked."""
    if not isinstance(value, list):
        raise InvalidInput(f"{where}: dates must be a list")
    out = []
    for n, span in enumerate(value):
        at = f"{where}.dates[{n}]"
        first = _day(span.get("first_day")) if isinstance(span, Mapping) else None
        last = _day(span.get("last_day")) if isinstance(span, Mapping) else None
        if first is None or last is None or last < first:
            raise InvalidInput(f"{at}: first_day and last_day must be days (YYYY-MM-DD), in order")
        out.append((first, last))
    return out


def _day(value: object) -> date | None:
    # Only the form the export writes: fromisoformat alone also takes "20261208".
    if not isinstance(value, str) or len(value) != 10:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return None
    return day if day.isoformat() == value else None


def _choice(value: object, enum: type[E]) -> E | None:
    try:
        return enum(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _server_id(origin: str) -> bool:
    return origin.isascii() and origin.isdigit() and int(origin) in _SQLITE_INT


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


async def import_memories(
    store: Store, user_id: int, data: object, *, now: float | None = None
) -> dict[str, int]:
    """Check the file, then add its memories to the person in one transaction (through dedup,
    with their pins and dates); return what happened, by action. A memory the person already
    has as it is in the file (same text, kind, scope and place) is left alone ("unchanged"),
    so that importing a file again writes nothing, rules included (dedup leaves rules apart)."""
    items = parse(data)
    when = time.time() if now is None else now

    async def run(tx: Tx) -> dict[str, int]:
        done: dict[str, int] = {}
        indexes: dict[tuple[int, str], DedupIndex] = {}
        held = {_same(m) for m in await memories.list_for_user(tx, user_id)}
        for n, item in enumerate(items):
            if _same(item) in held:
                done["unchanged"] = done.get("unchanged", 0) + 1
                continue
            key = (item.story_id, item.origin)
            if key not in indexes:
                pool = await memories.merge_pool(tx, user_id, item.story_id, item.origin)
                # Seconds at 100k memories: off the event loop (the import holds the write).
                indexes[key] = await asyncio.to_thread(build_index, pool)
            candidate = Candidate(item.text, item.kind, item.scope, confidence=item.confidence)
            outcome, memory = await merge_candidate(
                tx,
                indexes[key],
                candidate,
                exchange_id=f"{MANUAL_EXCHANGE}{user_id}:{when}:{n}",
                user_id=user_id,
                story_id=item.story_id,
                origin=item.origin,
                now=when,
            )
            if outcome.action == "created":
                created = item.created_at if item.created_at is not None else when
                await personal.restore(
                    tx,
                    user_id,
                    memory.id,
                    pinned=item.pinned,
                    created_at=created,
                    updated_at=max(created, item.updated_at or created),
                )
                await _restore_history(
                    tx, memory, item, source=f"{MANUAL_EXCHANGE}{user_id}:import:{when}"
                )
                # A file may hold more than are kept (by hand, or an older Écho): the newest.
                await memory_versions.bound(tx, memory, dropped=item.versions_dropped)
                await memory_dates.record(tx, memory.id, item.dates)
            elif item.pinned and not memory.pinned:
                await memories.set_pinned(tx, user_id, memory.id, True)
            await counters.bump(tx, f"memories_{outcome.action}")
            done[outcome.action] = done.get(outcome.action, 0) + 1
            held.add(_same(item))
        return done

    return await store.transact(run)


async def _restore_history(tx: Tx, memory: Memory, item: Imported, *, source: str) -> None:
    """Put back an imported memory's earlier versions (their words came with the file)."""
    for text, start, end, ended in item.history:
        await memory_versions.insert_version(
            tx,
            memory.id,
            memory_versions.Revision(
                0,
                memory.id,
                memory.user_id,
                text,
                memory.kind,
                memory.scope,
                memory.story_id,
                memory.confidence,
                start,
                end,
                source,
                ended,
                "",
            ),
        )


def _same(m: Memory | Imported) -> tuple[str, Kind, Scope, int, str]:
    """What makes an imported memory one the person already has."""
    story = (m.story_id or 0) if m.scope is Scope.STORY else 0
    return (m.text, m.kind, m.scope, story, m.origin or DM_ORIGIN)
