"""Turns against a chat server whose context is smaller than [context] context_length (8,192
by default; the server's 512, as llama-cpp-python started with --n_ctx 512): no prompt over the
server's context reaches it once the context is known, whether the server says it (llama.cpp's
/props) or only refuses (llama-cpp-python, whose streamed refusal is an empty stream); the
context learned is said once in the log and kept; and a server whose streams report no token
count still calibrates the estimator. On the `store` fixture's backend."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from memory import Engine, Incoming, MemoryConfig
from memory.backends.chat import Deadlined, OpenAIChat
from memory.backends.token_count import COUNT_EVERY
from memory.context.prompt import Character
from memory.errors import BackendRefused
from memory.manage import setup
from memory.store import Store
from memory.turn.admission import BoundedChat
from tests.fakes.openai import FakeOpenAI, serve_fake_openai

GUILD = "111"
MODEL = "SmolLM2-135M-Instruct"
# A persona of about 1,800 of the fake's tokens: alone more than the server's 512.
PERSONA = "Écho aime les longues histoires, les trains de nuit et le café noir. " * 120
SERVER_CONTEXT = 512


def _message(
    user: int, text: str = "Raconte-moi une histoire de train, s'il te plaît."
) -> Incoming:
    return Incoming(f"t:{user}:{text}", user, f"p{user}", 10 + user, GUILD, text)


async def _engine(store: Store, fake: FakeOpenAI, http: httpx.AsyncClient) -> Engine:
    """An engine as memory.open builds it: the client's context sizes kept in the store."""
    sizes = await setup.context_sizes(store)
    client = OpenAIChat(http, fake.url, MODEL, sizes=sizes)
    return Engine(
        store,
        embedder=None,
        chat=Deadlined(BoundedChat(client, limit=4), "chat_timeout"),
        character=Character("Écho", PERSONA),
        config=MemoryConfig(),
        server_context=client.context_size,
    )


def _llama_cpp_python(fake: FakeOpenAI) -> None:
    """The fake as llama-cpp-python 0.3.36 with --n_ctx 512: it says its context nowhere,
    streams without usage, refuses a long streamed prompt with an empty stream."""
    fake.context, fake.says_context = SERVER_CONTEXT, None
    fake.stream.on, fake.stream_usage, fake.counts = True, False, True


def _max_tokens(fake: FakeOpenAI) -> list[int]:
    return [int(p["max_tokens"]) for p in fake.chats() if "max_tokens" in p]


async def test_a_server_that_says_its_context_never_gets_a_longer_prompt(
    store: Store, http: httpx.AsyncClient
) -> None:
    async with serve_fake_openai() as fake:
        fake.context, fake.says_context, fake.stream.on = SERVER_CONTEXT, "props", True
        engine = await _engine(store, fake, http)
        reply = await engine.turn(_message(1))
        plan = await engine.preview(user_id=1, user_name="p1", story_id=11, origin=GUILD)
    assert reply is not None and reply.text == "D'accord."
    assert fake.prompts and max(fake.prompts) < SERVER_CONTEXT
    assert _max_tokens(fake) == [SERVER_CONTEXT // 2]
    # What /context shows says why the prompt is smaller than context_length.
    assert plan.budget.context_length == SERVER_CONTEXT
    assert any("512 tokens of context" in note for note in plan.notes)


async def test_many_turns_at_once_while_the_context_is_learned_each_fit(
    store: Store, http: httpx.AsyncClient
) -> None:
    async with serve_fake_openai() as fake:
        fake.context, fake.says_context, fake.stream.on = SERVER_CONTEXT, "props", True
        fake.delay = 0.01
        engine = await _engine(store, fake, http)
        replies = await asyncio.gather(*(engine.turn(_message(user)) for user in range(1, 21)))
    assert all(r is not None and r.text == "D'accord." for r in replies)
    assert len(fake.prompts) == 20 and max(fake.prompts) < SERVER_CONTEXT
    assert sum(1 for path, _ in fake.calls if path == "/props") == 1


async def test_a_refusal_teaches_the_context_once_and_a_restart_keeps_it(
    store: Store, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with serve_fake_openai() as fake:
        _llama_cpp_python(fake)
        engine = await _engine(store, fake, http)
        with pytest.raises(BackendRefused, match="maximum context length is 512 tokens"):
            await engine.turn(_message(1))
        reply = await engine.turn(_message(1, "Et ensuite ?"))
        # A new process on the same database: the first prompt already fits.
        again = await _engine(store, fake, http)
        sent = len(fake.prompts)
        other = await again.turn(_message(2))
    assert reply is not None and other is not None
    assert fake.prompts[0] >= SERVER_CONTEXT  # the one refused (streamed, then asked whole)
    assert max(fake.prompts[2:]) < SERVER_CONTEXT and len(fake.prompts) == sent + 1
    learned = [r for r in caplog.records if "tokens of context" in r.getMessage()]
    assert [r.getMessage() for r in learned] == [
        f"chat server {fake.url} (model {MODEL}) takes 512 tokens of context (it refused a "
        "longer prompt): prompts capped to it"
    ]
    assert PERSONA[:40] not in caplog.text
    assert await setup.learned_context(store, fake.url, MODEL) == (512, "refusal")


async def test_streams_without_a_token_count_still_calibrate(
    store: Store, http: httpx.AsyncClient
) -> None:
    async with serve_fake_openai() as fake:
        _llama_cpp_python(fake)
        fake.context = None
        engine = await _engine(store, fake, http)
        for turn in range(COUNT_EVERY + 1):
            assert (
                await engine.turn(_message(1, f"Message numéro {turn} sur les trains.")) is not None
            )
        estimator = await engine.context.estimator()
    counted = [p for path, p in fake.calls if path == "/extras/tokenize/count"]
    # The first turn and one in COUNT_EVERY after are counted by the server.
    assert len(counted) == 2
    assert estimator.samples == 2 and estimator.rejected == COUNT_EVERY - 1
    assert 0.5 < estimator.factor < 1.5


async def test_a_server_that_counts_nothing_leaves_the_estimate_uncalibrated(
    store: Store, http: httpx.AsyncClient
) -> None:
    async with serve_fake_openai() as fake:
        _llama_cpp_python(fake)
        fake.context, fake.counts = None, False
        engine = await _engine(store, fake, http)
        for turn in range(3):
            assert await engine.turn(_message(1, f"Message {turn}.")) is not None
        estimator = await engine.context.estimator()
    asked = [path for path, _ in fake.calls if path in ("/extras/tokenize/count", "/tokenize")]
    assert asked == ["/extras/tokenize/count"]  # tried once, then never again
    assert estimator.samples == 0 and estimator.rejected == 3
