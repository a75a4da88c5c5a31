"""Structured output with every backend: each server gets the mode it accepts, learned from its
own refusals once, then sent at once; the schema sent never holds a length or count limit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import pytest

from memory import manage
from memory.backends.chat import OllamaChat, OpenAIChat
from memory.backends.structured import LIMIT_KEYWORDS, SCHEMA_INSTRUCTION, Mode, Negotiator
from memory.errors import BackendRefused
from memory.model import Exchange
from memory.store import Store
from memory.store.tables import counters, memories, outbox
from memory.turn.admission import BoundedChat
from memory.write import reflection
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai import (
    LLAMA_CPP_PYTHON,
    LLAMA_SERVER,
    NO_JSON_MODE,
    FakeOpenAI,
    Refusal,
    keys_at_any_depth,
    schema_of,
    serve_fake_openai,
)


def _remembers_what_was_said(payload: dict[str, Any]) -> str:
    """A chat_reply: to a reflection, one memory quoting the user's message; to a turn, a
    reply."""
    messages = payload["messages"]
    try:
        said = json.loads(messages[-1]["content"])["user_message"]
    except (ValueError, KeyError, TypeError):
        return "D'accord."
    memory = {"text": f"Said {said}", "kind": "fact", "scope": "global", "confidence": 0.9}
    return json.dumps({"memories": [memory], "summary": "A talk."})


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with serve_fake_openai() as fake:
        fake.chat_reply = _remembers_what_was_said
        yield fake


async def _queue(store: Store, *said: str) -> None:
    for index, text in enumerate(said):
        exchange = Exchange(f"m{index}", 1, 10, "111", "Sam", text, "Nice!")
        await store.transact(lambda tx, e=exchange: outbox.enqueue(tx, e, now=0.0))


async def _memories(store: Store) -> list[str]:
    return sorted(m.text for m in await memories.list_for_user(store, 1))


def _system_prompt(payload: Mapping[str, Any]) -> str:
    return str(payload["messages"][0]["content"])


@pytest.mark.parametrize(
    ("refuses", "sent", "learned"),
    [
        # OpenAI, vLLM, LM Studio, llama-server with a schema it can compile.
        ({}, ["json_schema", "json_schema"], Mode.JSON_SCHEMA),
        # llama-cpp-python: json_schema is a 500 validation error; json_object + schema works.
        (LLAMA_CPP_PYTHON, ["json_schema", "json_object_schema", "json_object_schema"],
         Mode.JSON_OBJECT_SCHEMA),
        # llama-server that cannot build the grammar of the schema: plain json_object.
        (LLAMA_SERVER, ["json_schema", "json_object_schema", "json_object", "json_object"],
         Mode.JSON_OBJECT),
        # No JSON mode at all: the schema in the prompt, the tolerant parser does the rest.
        (NO_JSON_MODE, ["json_schema", "json_object_schema", "json_object", "none", "none"],
         Mode.NONE),
    ],
)  # fmt: skip
async def test_every_server_gets_its_memories_and_is_probed_only_once(
    store: Store,
    server: FakeOpenAI,
    http: httpx.AsyncClient,
    refuses: Mapping[str, Refusal],
    sent: list[str],
    learned: Mode,
) -> None:
    server.refuses = refuses
    await _queue(store, "I play the cello", "I live in Lyon")
    modes = Negotiator()
    chat = OpenAIChat(http, server.url, "smol", modes=modes)
    worker = ReflectionWorker(store, chat, character_name="Ash", deadline=5.0)
    assert await worker.run_due() == 2
    assert await _memories(store) == ["Said I live in Lyon", "Said I play the cello"]
    # The refusals cost no attempt: nothing failed, nothing waits for a retry.
    assert await counters.read_all(store, "reflection_failed") == {}
    # The second reflection sent the learned mode at once.
    assert server.modes_sent() == sent
    assert modes.mode(server.url, "smol") is learned
    last = server.chats()[-1]
    schema_in_prompt = SCHEMA_INSTRUCTION in _system_prompt(last)
    assert schema_in_prompt is (learned in (Mode.JSON_OBJECT, Mode.NONE))
    assert set(modes.refusals(server.url, "smol")) == set(refuses)


async def test_the_schema_sent_has_no_length_or_count_limit_at_any_depth(
    server: FakeOpenAI, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    # llama-server refuses a schema with big maxLength/maxItems ("failed to parse grammar"),
    # llama-cpp-python crashed on one: the reflection's schema is accepted at the first mode.
    server.refuse_limits = True
    schema = reflection.json_schema()
    messages = [{"role": "user", "content": "hi"}]
    await OpenAIChat(http, server.url, "m").chat(messages, schema=schema, deadline=5)
    await OpenAIChat(http, server.url, "m", modes=Negotiator(override=Mode.JSON_OBJECT_SCHEMA)
                     ).chat(messages, schema=schema, deadline=5)  # fmt: skip
    await OllamaChat(http, ollama.url, "m").chat(messages, schema=schema, deadline=5)
    assert server.modes_sent() == ["json_schema", "json_object_schema"]
    sent = [schema_of(p) for p in server.chats()]
    sent.append(next(p for path, p in ollama.calls if path == "/api/chat")["format"])
    for one in sent:
        assert one["properties"]["memories"]["items"]
        assert not keys_at_any_depth(one) & LIMIT_KEYWORDS
    # The parser still holds the limits: a 21st memory is dropped, with its reason.
    item = {"text": "x", "kind": "fact", "scope": "global", "confidence": 0.9}
    parsed = reflection.parse(json.dumps({"memories": [item] * 21, "summary": "s"}))
    assert len(parsed.candidates) == 20 and ("memories[20]", "too_many_items") in parsed.dropped


async def test_the_override_is_sent_at_once_and_its_refusal_reported(
    store: Store, server: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    chat = OpenAIChat(http, server.url, "m", modes=Negotiator(override=Mode.JSON_OBJECT))
    await _queue(store, "I play the cello")
    assert await ReflectionWorker(store, chat, character_name="Ash").run_due() == 1
    assert server.modes_sent() == ["json_object"]
    assert SCHEMA_INSTRUCTION in _system_prompt(server.chats()[0])

    # Forced to json_schema, llama-cpp-python refuses it every time: no other mode is tried,
    # the attempt fails with the server's own words (no traceback, no input), shown in /stats.
    server.refuses = LLAMA_CPP_PYTHON
    forced = OpenAIChat(http, server.url, "m", modes=Negotiator(override=Mode.JSON_SCHEMA))
    exchange = Exchange("m9", 1, 10, "111", "Sam", "I live in Lyon", "Nice!")
    await store.transact(lambda tx: outbox.enqueue(tx, exchange, now=0.0))
    assert await ReflectionWorker(store, forced, character_name="Ash").run_due() == 0
    assert server.modes_sent()[1:] == ["json_schema"]
    stats = await manage.stats(store)
    assert stats.reflection_failures == {"BackendRefused": 1}
    error = stats.last_reflection_error or ""
    assert error.startswith("BackendRefused: ") and error.endswith(
        "/v1/chat/completions: HTTP 500: response_format.type: Input should be 'text' or "
        "'json_object'"
    )


async def test_a_learned_mode_refused_later_is_learned_again_in_the_same_call(
    server: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    saved: list[Mode] = []

    async def save(server_url: str, model: str, mode: Mode) -> None:
        saved.append(mode)

    # Learned json_schema (from the database), then the server was swapped for llama-cpp-python.
    modes = Negotiator(known={(server.url, "m"): Mode.JSON_SCHEMA}, on_learned=save)
    server.refuses = LLAMA_CPP_PYTHON
    chat = OpenAIChat(http, server.url, "m", modes=modes)
    result = await chat.chat([{"role": "user", "content": "hi"}], schema={"type": "object"},
                             deadline=5)  # fmt: skip
    assert result.content == "D'accord."
    assert server.modes_sent() == ["json_schema", "json_object_schema"]
    assert saved == [Mode.JSON_OBJECT_SCHEMA]


async def test_a_refusal_that_is_not_about_the_format_is_not_negotiated(
    server: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    model_missing: Refusal = (400, {"error": {"message": "The model `m` does not exist",
                                              "type": "invalid_request_error"}})  # fmt: skip
    server.refuses = {"json_schema": model_missing}
    modes = Negotiator()
    with pytest.raises(BackendRefused, match="HTTP 400: The model `m` does not exist"):
        await OpenAIChat(http, server.url, "m", modes=modes).chat(
            [], schema={"type": "object"}, deadline=5
        )
    assert server.modes_sent() == ["json_schema"] and modes.mode(server.url, "m") is None


async def test_concurrent_first_requests_learn_the_mode_once_and_none_is_lost(
    server: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    server.refuses, server.delay = LLAMA_CPP_PYTHON, 0.05
    learned: list[Mode] = []

    async def save(server_url: str, model: str, mode: Mode) -> None:
        learned.append(mode)

    chat = BoundedChat(
        OpenAIChat(http, server.url, "m", modes=Negotiator(on_learned=save)), limit=8
    )
    asks = [
        [{"role": "user", "content": json.dumps({"user_message": f"fact {i}"})}] for i in range(6)
    ]
    results = await asyncio.gather(
        *(chat.chat(m, schema=reflection.json_schema(), deadline=5) for m in asks),
        *(chat.chat([{"role": "user", "content": "hello"}], deadline=5) for _ in range(6)),
    )
    reflections = [json.loads(r.content)["memories"][0]["text"] for r in results[:6]]
    assert reflections == [f"Said fact {i}" for i in range(6)]
    assert [r.content for r in results[6:]] == ["D'accord."] * 6
    modes = server.modes_sent()
    assert modes.count("json_schema") == 1 and modes.count("json_object_schema") == 6
    assert modes.count("none") == 6  # the turns never waited for the negotiation
    assert learned == [Mode.JSON_OBJECT_SCHEMA]


async def test_ollama_gets_the_schema_as_format_or_json_or_in_the_prompt(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    schema = reflection.json_schema()
    messages = [{"role": "system", "content": "Reflect."}, {"role": "user", "content": "hi"}]
    for mode in (None, Mode.JSON_OBJECT, Mode.NONE):
        chat = OllamaChat(http, ollama.url, "m", modes=Negotiator(override=mode))
        await chat.chat(messages, schema=schema, deadline=5)
    sent = [p for path, p in ollama.calls if path == "/api/chat"]
    assert sent[0]["format"] == schema and sent[1]["format"] == "json"
    assert "format" not in sent[2]
    assert [SCHEMA_INSTRUCTION in p["messages"][0]["content"] for p in sent] == [False, True, True]
    assert [len(p["messages"]) for p in sent] == [2, 2, 2]  # one system message, not two
