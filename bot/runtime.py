"""Build the engine and its resources from the settings; shared by the bot and the terminal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx

from bot.config import Settings
from memory.engine import Engine, MemoryConfig
from memory.indexer import Indexer
from memory.llm import ChatBackend, Embedder, OllamaChat, OllamaEmbedder, OpenAIChat, OpenAIEmbedder
from memory.model import Kind
from memory.read.prompt import Character
from memory.store.db import Store
from memory.write.worker import ReflectionWorker


@dataclass
class Runtime:
    """Everything a front end (Discord or terminal) talks to."""

    settings: Settings
    store: Store
    http: httpx.AsyncClient
    chat: ChatBackend
    embedder: Embedder
    engine: Engine
    worker: ReflectionWorker
    indexer: Indexer


def backends(settings: Settings, http: httpx.AsyncClient) -> tuple[ChatBackend, Embedder]:
    """Return the chat backend and the embedder the settings name."""
    llm = settings.llm
    if llm.backend == "openai":
        key = llm.api_key.get_secret_value() if llm.api_key else None
        return (
            OpenAIChat(http, llm.base_url, llm.chat_model, api_key=key),
            OpenAIEmbedder(http, llm.embeddings_url, llm.embedding_model, api_key=key),
        )
    return (
        OllamaChat(http, llm.base_url, llm.chat_model, num_ctx=llm.num_ctx),
        OllamaEmbedder(http, llm.embeddings_url, llm.embedding_model),
    )


def character(settings: Settings) -> Character:
    c = settings.character
    return Character(name=c.name, persona=c.persona, rules=tuple(c.rules))


def memory_config(settings: Settings) -> MemoryConfig:
    m = settings.memory
    return MemoryConfig(
        limit=m.memories_per_turn,
        semantic_slots=m.semantic_slots,
        threshold=m.cosine_threshold,
        relative_sd=m.relative_sd if m.eligibility == "relative" else None,
        cosine_floor=m.cosine_floor,
        quotas={Kind(k): v for k, v in m.quotas.items()},
        turn_embedding_timeout=m.turn_embedding_timeout,
        chat_deadline=settings.llm.chat_timeout,
    )


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Open the database and the HTTP client, build the engine; close everything on exit."""
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0)) as http,
        await Store.open(settings.storage.path) as store,
    ):
        chat, embedder = backends(settings, http)
        engine = Engine(
            store,
            embedder=embedder,
            chat=chat,
            character=character(settings),
            config=memory_config(settings),
        )
        worker = ReflectionWorker(
            store, chat, character_name=settings.character.name,
            deadline=settings.llm.reflection_timeout,
        )  # fmt: skip
        yield Runtime(
            settings, store, http, chat, embedder, engine, worker, Indexer(store, embedder)
        )
