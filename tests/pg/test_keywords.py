"""Keyword recall on PostgreSQL finds what SQLite's FTS5 finds: the same texts in both, the same
words asked, the same memories back (SQLite is the oracle). Run by `make test-pg`."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.model import Kind, Scope
from memory.read.recall import keyword_hits
from memory.store import memories
from memory.store.db import Store, Tx

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
                    await Store.open(Path(tmp) / "k.sqlite3") as lite,
                    await Store.open(url) as pg,
                ):
                    expected = await _hits(lite, texts, query, cap)
                    assert await _hits(pg, texts, query, cap) == expected

        asyncio.run(run())

    try:
        compare()
    finally:
        asyncio.run(postgres.drop(url))
