"""Task prefixes: which models get which, what reaches the embedding server from the turn and
from the indexer, and that changing the document prefix re-embeds (and only that)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import httpx
import pytest

from bot.config import load_settings
from bot.runtime import with_prefixes
from memory import Engine, manage
from memory.backends.embedders import OllamaEmbedder
from memory.store import Store
from memory.vectors.indexer import Indexer
from memory.vectors.prefixes import NONE, Prefixed, TaskPrefixes, known_prefixes, prefixes_of
from tests.fakes.ollama import FakeOllama

STORY, GUILD = 10, "111"
NOMIC = TaskPrefixes("search_query: ", "search_document: ")
E5 = TaskPrefixes("query: ", "query: ")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("nomic-embed-text", NOMIC),
        ("nomic-embed-text:v1.5", NOMIC),
        ("multilingual-e5-small-q4", E5),
        ("intfloat/multilingual-e5-large", E5),
        ("jeffh/intfloat-e5-base-v2:f16", E5),
        ("all-MiniLM-L6-v2", NONE),
        ("bge-m3", NONE),
        ("intfloat/e5-mistral-7b-instruct", NONE),  # an instruction, not a prefix
    ],
)
def test_known_prefixes_by_model_family(model: str, expected: TaskPrefixes) -> None:
    assert known_prefixes(model) == expected


async def test_the_config_sets_or_clears_the_prefixes(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    config = tmp_path / "config.toml"
    bare = OllamaEmbedder(http, "http://127.0.0.1:9", "unused")
    config.write_text("[llm]\n", encoding="utf-8")
    assert prefixes_of(with_prefixes(load_settings(config), bare)) == NOMIC
    config.write_text('[llm]\nquery_prefix = ""\n', encoding="utf-8")
    assert prefixes_of(with_prefixes(load_settings(config), bare)) == TaskPrefixes(
        "", "search_document: "
    )
    config.write_text(
        '[llm]\nembedding_model = "bge-m3"\ndocument_prefix = "doc: "\n', encoding="utf-8"
    )
    assert prefixes_of(with_prefixes(load_settings(config), bare)) == TaskPrefixes("", "doc: ")


async def _remember(store: Store, user_id: int, text: str) -> None:
    await manage.remember(store, user_id=user_id, story_id=STORY, origin=GUILD, text=text, now=1.0)


async def test_memories_and_messages_reach_the_server_with_their_prefixes(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    embedder = Prefixed(OllamaEmbedder(http, ollama.url, "nomic-embed-text"), NOMIC)
    for text in ("Has a ginger cat called Felix", "Plays the cello on Thursdays"):
        await _remember(store, 1, text)
    await Indexer(store, embedder).run_once()
    assert sorted(ollama.embedded_texts()) == [
        "search_document: Has a ginger cat called Felix",
        "search_document: Plays the cello on Thursdays",
    ]
    recall = await Engine(store, embedder=embedder).recall(
        user_id=1, story_id=STORY, origin=GUILD, text="  how is my cat Felix?"
    )
    assert not recall.degraded
    assert ollama.embedded_texts()[-1] == "search_query: how is my cat Felix?"


async def test_changing_the_document_prefix_re_embeds_and_the_query_prefix_does_not(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    bare = OllamaEmbedder(http, ollama.url, "nomic-embed-text")
    for i in range(5):
        await _remember(store, 1, f"Memory number {i} about {'tea' if i % 2 else 'rain'}")
    # Vectors stored without a prefix keep their hash: an upgrade re-embeds nothing.
    assert await Indexer(store, bare).run_once() == 5
    assert await Indexer(store, Prefixed(bare, TaskPrefixes("q: ", ""))).run_once() == 0
    assert await Indexer(store, Prefixed(bare, TaskPrefixes("q: ", "d: "))).run_once() == 5
    assert await Indexer(store, Prefixed(bare, TaskPrefixes("other: ", "d: "))).run_once() == 0
    assert await Indexer(store, bare).run_once() == 5


async def test_concurrent_passes_and_turns_embed_each_memory_once_with_its_prefix(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    embedder = Prefixed(OllamaEmbedder(http, ollama.url, "nomic-embed-text"), NOMIC)
    people = range(1, 6)
    for person in people:
        for i in range(4):
            await _remember(store, person, f"Person {person} keeps hobby {i} close")
    engine = Engine(store, embedder=embedder)
    indexer = Indexer(store, embedder, batch_size=3)
    turns = [
        engine.recall(user_id=p, story_id=STORY, origin=GUILD, text=f"hobby {p}") for p in people
    ]
    results = await asyncio.gather(indexer.run_once(), indexer.run_once(), *turns)
    assert sum(r for r in results[:2] if isinstance(r, int)) == 20
    sent = Counter(ollama.embedded_texts())
    documents = [t for t in sent if not t.startswith("search_query: ")]
    assert len(documents) == 20 and all(t.startswith("search_document: ") for t in documents)
    assert all(sent[t] == 1 for t in documents)
    assert {f"search_query: hobby {p}" for p in people} <= set(sent)
