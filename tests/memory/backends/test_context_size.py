"""The context a chat server takes: read in its refusals (the words real servers use), asked
where each server says it (the loopback fakes speaking as they do), asked once however many
turns need it at once, and the budget kept within it."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from memory.backends.context_size import ContextSizes, ask_context, refused_context
from memory.context.budget import within
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai import (
    llama_cpp_python_words,
    llama_server_words,
    serve_fake_openai,
    vllm_words,
)

MODEL = "SmolLM2-135M-Instruct"


@pytest.mark.parametrize(
    ("words", "context"),
    [
        # llama-cpp-python 0.3.36 with --n_ctx 512, verbatim.
        (
            "This model's maximum context length is 512 tokens. However, you requested 736 "
            "tokens (731 in the messages, 5 in the completion). Please reduce the length of the "
            "messages or completion.",
            512,
        ),
        # llama.cpp's server.
        (
            "request (4476 tokens) exceeds the available context size (4096 tokens), try "
            "increasing it",
            4096,
        ),
        # vLLM, its three phrasings.
        (
            "This model's maximum context length is 1536 tokens. However, your request has 4176 "
            "input tokens. Please reduce the length of the input messages.",
            1536,
        ),
        (
            "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum "
            "context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - "
            "2778).",
            4096,
        ),
        (
            "This model's maximum context length is 2048 tokens. However, you requested 2100 "
            "tokens (1100 in the messages, 1000 in the completion).",
            2048,
        ),
    ],
)
def test_a_refusal_names_the_servers_context(words: str, context: int) -> None:
    assert refused_context(words) == context


@pytest.mark.parametrize(
    "words",
    [
        # An older llama.cpp says no number.
        "the request exceeds the available context size, try increasing it",
        "failed to parse grammar",
        "response_format.type: Input should be 'text' or 'json_object'",
        # A number that is no context.
        "This model's maximum context length is 3 tokens.",
    ],
)
def test_other_refusals_name_no_context(words: str) -> None:
    assert refused_context(words) is None


@pytest.mark.parametrize("says", ["props", "models"])
async def test_llama_cpp_and_vllm_say_their_context(says: str, http: httpx.AsyncClient) -> None:
    async with serve_fake_openai() as fake:
        fake.context, fake.says_context = 2048, says
        assert await ask_context(http, "openai", fake.url, fake.models[0]) == 2048


async def test_llama_cpp_python_says_nothing_of_its_context(http: httpx.AsyncClient) -> None:
    async with serve_fake_openai() as fake:
        fake.context = 512
        assert await ask_context(http, "openai", fake.url, MODEL) is None


async def test_ollama_says_the_models_trained_context(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    assert await ask_context(http, "ollama", ollama.url, "llama3.1:8b") == 131072
    ollama.trained_context = None
    assert await ask_context(http, "ollama", ollama.url, "llama3.1:8b") is None
    assert [p for path, p in ollama.calls if path == "/api/show"][-1] == {"model": "llama3.1:8b"}


async def test_many_callers_at_once_ask_the_server_once(http: httpx.AsyncClient) -> None:
    async with serve_fake_openai() as fake:
        fake.context, fake.says_context = 1024, "props"
        fake.delay = 0.0
        sizes = ContextSizes()

        async def ask() -> int | None:
            return await ask_context(http, "openai", fake.url, MODEL)

        found = await asyncio.gather(*(sizes.resolve(fake.url, MODEL, ask) for _ in range(30)))
        assert found == [1024] * 30
        assert sum(1 for path, _ in fake.calls if path == "/props") == 1


async def test_a_server_that_is_down_is_asked_again_later(http: httpx.AsyncClient) -> None:
    async with serve_fake_openai() as fake:
        url = fake.url
    sizes = ContextSizes()

    async def ask() -> int | None:
        return await ask_context(http, "openai", url, MODEL, deadline=1.0)

    assert await sizes.resolve(url, MODEL, ask) is None
    async with serve_fake_openai() as fake:
        fake.context, fake.says_context = 700, "models"

        async def ask_again() -> int | None:
            return await ask_context(http, "openai", fake.url, MODEL)

        assert await sizes.resolve(fake.url, MODEL, ask_again) == 700


async def test_what_a_server_says_replaces_what_it_refused_at_and_is_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    saved: list[tuple[str, str, int, str]] = []

    async def save(server: str, model: str, tokens: int, source: str) -> None:
        saved.append((server, model, tokens, source))

    sizes = ContextSizes(known={("http://x", MODEL): (512, "refusal")}, on_learned=save)
    caplog.set_level("INFO", logger="memory.backends.context_size")

    async def ask() -> int | None:
        return 4096

    assert await sizes.resolve("http://x/", MODEL, ask) == 4096
    await sizes.learn("http://x", MODEL, 4096, "server")
    assert saved == [("http://x", MODEL, 4096, "server")]
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"chat server http://x (model {MODEL}) takes 4096 tokens of context (it says so): "
        "prompts capped to it"
    ]


@pytest.mark.parametrize(
    ("server", "length", "reply"),
    [(None, 8192, 1024), (16384, 8192, 1024), (512, 512, 256), (4096, 4096, 1024)],
)
def test_the_budget_is_the_smaller_context_with_room_for_its_prompt(
    server: int | None, length: int, reply: int
) -> None:
    budget = within(8192, 1024, server)
    assert (budget.context_length, budget.response_tokens) == (length, reply)
    assert budget.prompt >= budget.response_tokens or server is None or server >= 8192


def test_the_fakes_refuse_in_the_words_the_parser_reads() -> None:
    for words in (llama_cpp_python_words, llama_server_words, vllm_words):
        assert refused_context(words(512, 600, 100)["error"]["message"]) == 512
