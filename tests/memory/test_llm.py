"""The backend clients over an injected httpx transport, and over a loopback server."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx
import pytest

from memory.errors import BackendResponseError, BackendUnavailable
from memory.llm import OllamaChat, OllamaEmbedder, OpenAIChat, OpenAIEmbedder, ollama_health
from tests.fakes.ollama import FakeOllama

Handler = Callable[[httpx.Request], httpx.Response]


def _client(handler: Handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_ollama_chat_sends_format_and_num_ctx_and_reads_token_counts() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"message": {"content": "{}"}, "prompt_eval_count": 42,
                                         "eval_count": 3})  # fmt: skip

    async with _client(handler) as http:
        chat = OllamaChat(http, "http://x", "m", num_ctx=4096)
        result = await chat.chat([{"role": "user", "content": "hi"}], schema={"type": "object"},
                                 deadline=5)  # fmt: skip
        await chat.chat([{"role": "user", "content": "hi"}], deadline=5, max_tokens=300)
    assert (result.content, result.prompt_tokens, result.completion_tokens) == ("{}", 42, 3)
    assert seen[0]["format"] == {"type": "object"}
    assert seen[0]["options"] == {"num_ctx": 4096} and seen[0]["stream"] is False
    # The reply's reserved space caps its length; the reflection's call is not capped.
    assert seen[1]["options"] == {"num_ctx": 4096, "num_predict": 300}


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (500, {"error": "boom"}, BackendUnavailable),
        (429, {}, BackendUnavailable),
        (404, {"error": "model 'm' not found"}, BackendResponseError),
        (200, {"error": "in-band failure"}, BackendResponseError),
        (200, {"message": {}}, BackendResponseError),
    ],
)
async def test_error_bodies_become_typed_exceptions(
    status: int, body: dict[str, object], error: type[Exception]
) -> None:
    async with _client(lambda r: httpx.Response(status, json=body)) as http:
        with pytest.raises(error):
            await OllamaChat(http, "http://x", "m").chat([], deadline=5)


async def test_invalid_json_is_a_response_error() -> None:
    async with _client(lambda r: httpx.Response(200, content=b"{nope")) as http:
        with pytest.raises(BackendResponseError, match="not JSON"):
            await OllamaEmbedder(http, "http://x", "e").embed(["a"], deadline=5)


async def test_embeddings_must_be_finite_lists_of_the_right_count() -> None:
    bodies = [
        {"embeddings": [[0.1, 0.2]]},
        {"embeddings": [[0.1, "x"], [0.3, 0.4]]},
        {"embeddings": [[0.1, float("nan")], [0.3, 0.4]]},
        {"embeddings": [[0.1], [0.3, 0.4]]},
    ]
    for body in bodies:
        content = json.dumps(body).replace("NaN", "NaN").encode()
        async with _client(lambda r, c=content: httpx.Response(200, content=c)) as http:
            with pytest.raises(BackendResponseError):
                await OllamaEmbedder(http, "http://x", "e").embed(["a", "b"], deadline=5)


async def test_openai_compatible_clients() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == "Bearer k"
        if request.url.path == "/v1/embeddings":
            return httpx.Response(200, json={"data": [{"embedding": [1.0, 0.0], "index": 0}]})
        body = json.loads(request.content)
        assert body["response_format"]["type"] == "json_schema" and body["max_tokens"] == 64
        usage = {"prompt_tokens": 7, "completion_tokens": 1}
        return httpx.Response(
            200, json={"choices": [{"message": {"content": "ok"}}], "usage": usage}
        )

    async with _client(handler) as http:
        vectors = await OpenAIEmbedder(http, "http://x", "e", api_key="k").embed(["a"], deadline=5)
        result = await OpenAIChat(http, "http://x", "m", api_key="k").chat(
            [], schema={"type": "object"}, deadline=5, max_tokens=64
        )
    assert vectors == [[1.0, 0.0]] and (result.content, result.prompt_tokens) == ("ok", 7)


async def test_a_dripping_server_is_cut_by_the_overall_deadline(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    # Each byte arrives within httpx's read timeout, so only the overall deadline can stop it.
    ollama.set("/api/embed", "drip", delay=0.2)
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match="no answer within 1 s"):
        await OllamaEmbedder(http, ollama.url, "e").embed(["a"], deadline=1.0)
    assert time.monotonic() - started < 1.5


async def test_connection_refused_is_unavailable() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(BackendUnavailable):
            await OllamaEmbedder(http, "http://127.0.0.1:9", "e").embed(["a"], deadline=2)


async def test_health_lists_the_models(ollama: FakeOllama, http: httpx.AsyncClient) -> None:
    assert await ollama_health(http, ollama.url, deadline=5) == ["llama3.1:8b", "nomic-embed-text"]
