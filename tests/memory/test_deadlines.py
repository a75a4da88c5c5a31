"""Timeouts that hold: the deadline of a call is its only bound (a client's shorter read timeout
never cuts a slow reply), and an expired deadline says which one and how long it waited.

The client's read timeout here stands for the former 30 s one, scaled down: a reply on a CPU
took 30-70 s and was cut with "ReadTimeout:" whatever chat_timeout said."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from memory.backends.chat import ChatResult, Deadlined, OllamaChat, OpenAIChat
from memory.backends.embedders import OllamaEmbedder
from memory.errors import BackendError, BackendUnavailable
from memory.model import Exchange
from memory.store import Store
from memory.store.tables import outbox
from memory.turn.admission import BoundedChat
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai import FakeOpenAI, serve_fake_openai

READ_TIMEOUT = 0.2  # the client's own timeout, as the former 30 s one
SLOW = 0.5  # a reply slower than it
HELLO = [{"role": "user", "content": "Bonjour"}]


@pytest.fixture
async def short_read() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(READ_TIMEOUT, connect=5.0)) as client:
        yield client


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with serve_fake_openai() as fake:
        yield fake


async def test_a_reply_slower_than_the_clients_read_timeout_arrives_within_the_deadline(
    server: FakeOpenAI, ollama: FakeOllama, short_read: httpx.AsyncClient
) -> None:
    server.delay = SLOW
    ollama.set("/api/chat", "slow", delay=SLOW)
    ollama.set("/api/embed", "slow", delay=SLOW)
    openai = await OpenAIChat(short_read, server.url, "m").chat(HELLO, deadline=3)
    native = await OllamaChat(short_read, ollama.url, "m").chat(HELLO, deadline=3)
    vectors = await OllamaEmbedder(short_read, ollama.url, "e").embed(["a"], deadline=3)
    assert (openai.content, native.content, len(vectors)) == ("D'accord.", "D'accord.", 1)


async def test_concurrent_slow_replies_all_arrive(
    server: FakeOpenAI, short_read: httpx.AsyncClient
) -> None:
    server.delay = SLOW
    chat = BoundedChat(OpenAIChat(short_read, server.url, "m"), limit=4)
    results = await asyncio.gather(*(chat.chat(HELLO, deadline=3) for _ in range(8)))
    assert [r.content for r in results] == ["D'accord."] * 8


async def test_an_expired_deadline_names_itself_and_how_long_it_waited(
    server: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    server.delay = 2.0
    chat = Deadlined(BoundedChat(OpenAIChat(http, server.url, "m")), "chat_timeout")
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as caught:
        await chat.chat(HELLO, deadline=0.3)
    assert str(caught.value) == "chat_timeout: no answer within 0.3 s"
    assert time.monotonic() - started < 1.0


async def test_turns_waiting_for_a_chat_slot_say_the_same_deadline(
    server: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    # One slot, replies in 0.4 s, a 0.6 s deadline: the first turn is answered, the others
    # expire (waiting for the slot, then for the server), each saying which deadline.
    server.delay = 0.4
    chat = Deadlined(BoundedChat(OpenAIChat(http, server.url, "m"), limit=1), "chat_timeout")
    outcomes = await asyncio.gather(
        *(chat.chat(HELLO, deadline=0.6) for _ in range(3)), return_exceptions=True
    )
    assert isinstance(outcomes[0], ChatResult) and outcomes[0].content == "D'accord."
    for outcome in outcomes[1:]:
        assert isinstance(outcome, BackendError)
        assert str(outcome) == "chat_timeout: no answer within 0.6 s"


async def test_a_reflection_past_its_deadline_is_retried_and_says_reflection_timeout(
    store: Store, server: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    server.delay = 1.0
    exchange = Exchange("m1", 1, 10, "111", "Sam", "I play the cello", "Lovely!")
    await store.transact(lambda tx: outbox.enqueue(tx, exchange, now=0.0))
    chat = Deadlined(OpenAIChat(http, server.url, "m"), "reflection_timeout")
    worker = ReflectionWorker(store, chat, character_name="Ash", deadline=0.3)
    assert await worker.run_due() == 0
    row = await store.fetchone("SELECT status, last_error FROM outbox")
    assert row is not None and row["status"] == "pending"
    assert row["last_error"] == "BackendUnavailable: reflection_timeout: no answer within 0.3 s"
