"""Keyword recall on PostgreSQL finds what SQLite's FTS5 finds: the same texts in both, the same
words asked, the same memories back (SQLite is the oracle). Run by `make test-pg`."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import asyncpg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.model import Kind, Scope
from memory.recall.lexical import RARE_TERM_CAP, keyword_hits
from memory.store import Store, Tx, open_store
from memory.store.tables import memories

USER, STORY, GUILD = 1, 10, "111"

# Accents, case, ligatures, apostrophes, hyphens, digits, in French and English; prefixes of
# each other ("jardin" / "jardinage") so that prefix matching is exercised.
WORDS = [
    "Élodie", "elodie", "café", "CAFÉ", "cafés", "naïve", "garden-party", "garden", "l'été",
    "été", "jardinage", "jardin", "Noël", "noel", "cœur", "piano", "Pianos", "2024", "chat",
    "chats", "château", "ça", "où", "tea", "night", "d'accord",
]  # fmt: skip


async def _hits(
    store: Store, texts: list[str], query: str, cap: int
) -> set[tuple[int, tuple[str, ...]]]:
    async def fill(tx: Tx) -> list[int]:
        await tx.execute("DELETE FROM memories")
        ids = []
        for text in texts:
            memory = await memories.insert(
                tx, user_id=USER, text=text, kind=Kind.FACT, scope=Scope.GLOBAL,
                story_id=STORY, origin=GUILD, confidence=1.0, now=1.0,
            )  # fmt: skip
            ids.append(memory.id)
        return ids

    ids = await store.transact(fill)
    place = {memory_id: n for n, memory_id in enumerate(ids)}
    got = await keyword_hits(store, user_id=USER, story_id=STORY, origin=GUILD, text=query, cap=cap)
    return {(place[i], words) for i, words in got.items()}


_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)


def test_postgresql_recalls_by_keyword_what_sqlite_recalls(postgres: Any) -> None:
    url = asyncio.run(postgres.create())

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(_text, max_size=25), _text, st.integers(min_value=1, max_value=6))
    def compare(texts: list[str], query: str, cap: int) -> None:
        async def run() -> None:
            with tempfile.TemporaryDirectory() as tmp:
                async with (
                    await open_store(Path(tmp) / "k.sqlite3") as lite,
                    await open_store(url) as pg,
                ):
                    expected = await _hits(lite, texts, query, cap)
                    assert await _hits(pg, texts, query, cap) == expected

        asyncio.run(run())

    try:
        compare()
    finally:
        asyncio.run(postgres.drop(url))


# --- a term's cost is the asker's (issue 28) --------------------------------------------------

BOB, NEWCOMER = 3, 2
PEOPLE = (USER, NEWCOMER, BOB)
# Words most memories hold, none a stopword (as tests/memory/store/test_keywords.py sends them).
COMMON = (
    "people house think little always letter place thought years something going another music "
    "friend work family dinner weekend city school morning evening garden coffee movie train "
    "holiday brother sister mother father birthday"
).split()


async def _bulk(url: str, sql: str, *args: object) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "INSERT INTO memories (user_id, scope, origin, kind, text, confidence, created_at,"
            f" updated_at, content_hash) {sql}", *args
        )  # fmt: skip
        await conn.execute("ANALYZE memories")
    finally:
        await conn.close()


async def _others(url: str, first: int, count: int) -> None:
    """`count` memories of 500 other people, four common words each, by one INSERT."""
    texts = [" ".join(COMMON[k : k + 4]) for k in range(0, 32, 4)]
    await _bulk(
        url,
        "SELECT 1000 + i % 500, 'global', $3, 'fact', ($4::text[])[1 + i % 8] || ' number ' || i,"
        " 1.0, 0, 0, lpad(to_hex(i), 64, '0') FROM generate_series($1::bigint, $2) i",
        first, first + count - 1, GUILD, texts,
    )  # fmt: skip


async def _plans(store: Store, user_id: int) -> tuple[int, list[str]]:
    """The buffers the person's keyword recall of the common words reads (EXPLAIN ANALYZE of
    the store's own query) and the indexes its plan scans (a sequential scan named so)."""
    asked: list[tuple[str, Any]] = []
    fetchall = store.fetchall

    async def spy(sql: str, args: Any = ()) -> Any:
        asked.append((sql, args))
        return await fetchall(sql, args)

    store.fetchall = spy  # type: ignore[method-assign]
    try:
        await keyword_hits(
            store, user_id=user_id, story_id=STORY, origin=GUILD, text=" ".join(COMMON)
        )
    finally:
        del store.fetchall
    buffers, indexes = 0, []
    for sql, args in asked:
        [row] = await store.fetchall("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, args)
        plan = json.loads(row[0])[0]["Plan"] if isinstance(row[0], str) else row[0][0]["Plan"]
        buffers += plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
        nodes = [plan]
        while nodes:
            node = nodes.pop()
            if "Index Name" in node or node["Node Type"] == "Seq Scan":
                indexes.append(node.get("Index Name", "Seq Scan"))
            nodes += node.get("Plans", [])
    return buffers, indexes


async def test_a_persons_keyword_recall_reads_what_their_own_memories_hold(
    store: Store, url: str
) -> None:
    """The plan starts from the person: the pages one message's 32 terms read barely move from
    500 to 50,000 memories of others, for Alice (ten memories), a newcomer and Bob (2,000
    memories holding three of the words), and a term reads about what its cap returns."""

    async def alice(tx: Tx) -> None:
        for n in range(10):
            await memories.insert(
                tx, user_id=USER, text=f"Entry {n}: the people at the house, always",
                kind=Kind.FACT, scope=Scope.GLOBAL, story_id=STORY, origin=GUILD,
                confidence=1.0, now=1.0,
            )  # fmt: skip

    await store.transact(alice)
    await _bulk(
        url,
        "SELECT $1, 'global', $2, 'fact', 'people house always ' || i, 1.0, 0, 0,"
        " lpad(to_hex(i), 64, '0') FROM generate_series(1, 2000) i",
        BOB, GUILD,
    )  # fmt: skip
    await _others(url, 1, 500)
    few = {user: await _plans(store, user) for user in PEOPLE}
    await _others(url, 501, 49_500)
    many = {user: await _plans(store, user) for user in PEOPLE}
    # Beside 500 others the plan reads Alice's rows (memories_by_user, 3 pages a term), beside
    # 50,000 her tagged entries (BitmapAnd with memories_words, 6): 96 then 195 pages. Bob's
    # terms stop at their cap: 96 then 147 pages; main's index (everyone's words under one GIN,
    # a prefix collecting all of them, and a pending list) read 2,416 then 3,887.
    for user in PEOPLE:
        assert many[user][0] <= 2.5 * few[user][0], (user, few[user][0], many[user][0])
        assert set(many[user][1]) <= {"memories_words", "memories_by_user"}, many[user][1]
    assert many[BOB][0] <= 2 * (RARE_TERM_CAP + 1) * len(COMMON), many[BOB][0]
