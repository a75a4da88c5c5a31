"""An id a person saw (a message's, a memory's, an anchor's, a position's, a lore entry's) is
never given to another row once its own is erased, on both backends: `/forget-message 33`
typed later never reaches a newer message that took #33."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory import Engine, Incoming
from memory.backends.chat import ChatResult
from memory.manage import context, forgetting
from memory.store import Store, open_store
from memory.store.tables import history
from memory.write.worker import ReflectionWorker
from tests.fakes.canary import reflection_request

ALICE, STORY, GUILD = 1, 10, "111"
# One fact per exchange, far apart (dedup would merge close ones into one row).
FACTS = (
    ("violoncelle", "Joue du violoncelle dans un orchestre"),
    ("Lisbonne", "Est née à Lisbonne au bord du Tage"),
    ("apiculture", "Garde trois ruches sur son toit"),
    ("marathon", "Court le marathon de Berlin chaque année"),
)
TABLES = ("messages", "memories", "anchors", "positions", "lore_entries")


class Embedder:
    model = "letters"

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        return [[0.01 + t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts]


class Chat:
    """Replies, and reflections that turn each exchange's fact into a memory, an anchor and a
    position."""

    model = "fake-chat"

    async def chat(self, messages: Any, **_: Any) -> ChatResult:
        asked = reflection_request({"messages": list(messages)})
        if asked is None:
            return ChatResult("Noté.")
        topic, fact = next(f for f in FACTS if f[0] in asked["user_message"])
        return ChatResult(json.dumps({
            "memories": [{"text": fact, "kind": "fact", "scope": "global", "confidence": 0.95}],
            "summary": "On discute.",
            "new_anchors": [f"Marie a parlé de {topic}"],
            "positions": [{"topic": topic, "idea": f"{topic} compte pour Marie",
                           "justification": "elle l'a dit", "action": "create"}],
        }))  # fmt: skip


async def _exchange(engine: Engine, worker: ReflectionWorker, n: int) -> str:
    topic, _ = FACTS[n]
    source = f"m{n}"
    await engine.turn(Incoming(source, ALICE, "Marie", STORY, GUILD, f"Parlons de {topic}"))
    assert await worker.run_due() == 1
    return source


async def _ids(store: Store) -> dict[str, set[int]]:
    return {t: {int(r[0]) for r in await store.fetchall(f"SELECT id FROM {t}")} for t in TABLES}


async def _lore(store: Store, n: int) -> int:
    entry = await context.add_lore(
        store, keywords=f"mot{n}", content=f"Une légende {n}", guild_id=int(GUILD)
    )
    return entry.id


async def test_the_ids_of_the_newest_rows_erased_are_never_given_again(store: Store) -> None:
    engine = Engine(store, embedder=Embedder(), chat=Chat())
    worker = ReflectionWorker(store, Chat(), character_name="Écho")
    await _exchange(engine, worker, 0)
    newest = await _exchange(engine, worker, 1)
    await _lore(store, 0)
    newest_lore = await _lore(store, 1)
    seen = await _ids(store)
    assert all(seen.values()), seen  # one row at least of each kind to erase

    message = await forgetting.resolve(store, newest)
    await forgetting.forget_message(store, message, actor_id=ALICE, engine=None)
    await context.remove_lore(store, newest_lore, guild_id=int(GUILD))
    left = await _ids(store)
    for table in TABLES:  # the newest of each kind went: its id is free to be reused
        assert max(left[table], default=0) < max(seen[table]), table

    await _exchange(engine, worker, 2)
    await _lore(store, 2)
    now = await _ids(store)
    for table in TABLES:
        given = now[table] - left[table]
        assert given, table
        assert min(given) > max(seen[table]), (table, sorted(given), max(seen[table]))


async def test_people_erasing_while_others_talk_never_get_an_id_twice(store: Store) -> None:
    """Concurrent twin: people talk, erase their newest message and add and remove lore at
    once, in random order; no id of any kind is ever seen on two rows."""
    rng = random.Random(20)
    engine = Engine(store, embedder=Embedder(), chat=Chat())
    given: dict[str, list[int]] = {t: [] for t in TABLES}

    async def collect() -> None:
        for table, ids in (await _ids(store)).items():
            given[table] += sorted(set(ids) - set(given[table]))

    async def person(user: int) -> None:
        for n in range(3):
            await asyncio.sleep(rng.uniform(0, 0.01))
            source = f"u{user}:{n}"
            await engine.turn(Incoming(source, user, f"p{user}", STORY + user, GUILD, f"salut {n}"))
            await collect()
            if rng.random() < 0.6:
                stored = await history.by_source(store, source)
                await forgetting.forget_message(store, stored, actor_id=user, engine=None)
            entry = await _lore(store, user * 10 + n)
            await collect()
            if rng.random() < 0.6:
                await context.remove_lore(store, entry, guild_id=int(GUILD))

    await asyncio.gather(*(person(u) for u in range(2, 8)))
    await collect()
    for table in ("messages", "lore_entries"):
        assert len(given[table]) == len(set(given[table])), table
        assert len(given[table]) >= 6 * 3, table


async def test_an_old_database_keeps_its_messages_and_stops_reusing_their_ids(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite3"
    async with await open_store(path, migrate_to=18) as old:
        for n in range(3):
            await old.transact(lambda tx, n=n: history.add_user_message(
                tx, source_id=f"m{n}", story_id=STORY, user_id=ALICE, author_name="Marie",
                content=f"message {n}", now=float(n)))  # fmt: skip
        before = await _rows(old)
    async with await open_store(path) as new:
        assert await _rows(new) == before
        newest = await history.by_source(new, "m2")
        await forgetting.forget_message(new, newest, actor_id=ALICE, engine=None)
        again = await new.transact(lambda tx: history.add_user_message(
            tx, source_id="m3", story_id=STORY, user_id=ALICE, author_name="Marie",
            content="message 3", now=3.0))  # fmt: skip
        assert again is not None and again > max(r[0] for r in before)
        migrated = await _schema(new, "messages")
    async with await open_store(tmp_path / "fresh.sqlite3") as fresh:
        assert migrated == await _schema(fresh, "messages")  # same table and indexes as a new file


async def _rows(store: Store) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in await store.fetchall("SELECT * FROM messages ORDER BY id")]


async def _schema(store: Store, table: str) -> list[tuple[str, str]]:
    rows = await store.fetchall(
        "SELECT name, sql FROM sqlite_master WHERE tbl_name = ? ORDER BY name", (table,)
    )
    return [(str(r[0]), " ".join(str(r[1]).split())) for r in rows if r[1] is not None]
