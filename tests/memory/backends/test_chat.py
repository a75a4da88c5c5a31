"""The backend clients over an injected httpx transport, and over a loopback server."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.backends.chat import MAX_CHAT_BODY, ChatResult, OllamaChat, OpenAIChat, ollama_health
from memory.backends.embedders import MAX_EMBED_BODY, OllamaEmbedder, OpenAIEmbedder, _vectors
from memory.errors import BackendError, BackendResponseError, BackendUnavailable
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


# --- malformed answers, over the loopback server -------------------------------------------

_EMBED_MODES = [
    "huge_int", "long_int", "deep", "float32_overflow", "not_list", "huge_length", "per_token",
]  # fmt: skip
_CHAT_MODES = ["huge_int", "deep", "not_list", "huge_length"]


@pytest.mark.parametrize("mode", _EMBED_MODES)
async def test_a_malformed_embeddings_answer_is_a_response_error(
    ollama: FakeOllama, http: httpx.AsyncClient, mode: str
) -> None:
    ollama.set("/api/embed", mode)
    started = time.monotonic()
    with pytest.raises(BackendResponseError):
        await OllamaEmbedder(http, ollama.url, "e").embed(["a"], deadline=5)
    assert time.monotonic() - started < 1.0  # refused at once, not after the deadline


async def test_a_server_answering_a_vector_per_token_says_what_to_do_in_one_line(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.set("/api/embed", "per_token")
    with pytest.raises(BackendResponseError) as raised:
        await OllamaEmbedder(http, ollama.url, "e").embed(["a"], deadline=5)
    said = str(raised.value)
    assert "one vector per token" in said and "embedding_base_url" in said
    assert "--pooling" in said and "\n" not in said


def test_an_openai_answer_with_a_vector_per_token_is_recognised() -> None:
    answer = {"data": [{"embedding": [[0.1, 0.2], [0.3, 0.4]], "index": 0}]}
    with pytest.raises(BackendResponseError, match="one vector per token"):
        _vectors(answer, "data", 1, "http://127.0.0.1:1/v1")


@pytest.mark.parametrize("mode", _CHAT_MODES)
async def test_a_malformed_chat_answer_is_a_response_error(
    ollama: FakeOllama, http: httpx.AsyncClient, mode: str
) -> None:
    ollama.set("/api/chat", mode)
    with pytest.raises(BackendResponseError):
        await OllamaChat(http, ollama.url, "m").chat(
            [{"role": "user", "content": "hi"}], deadline=5
        )


async def test_impossible_token_counts_are_ignored_and_the_reply_kept(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    # 400-digit counts would overflow the estimator's division and SQLite: they are not counts.
    ollama.set("/api/chat", "long_int")
    result = await OllamaChat(http, ollama.url, "m").chat([], deadline=5)
    assert result == ChatResult("Long live the count.", None, None)


@pytest.mark.parametrize(
    ("endpoint", "cap"), [("/api/embed", MAX_EMBED_BODY), ("/api/chat", MAX_CHAT_BODY)]
)
async def test_an_endless_body_is_read_up_to_the_cap_and_no_further(
    ollama: FakeOllama, http: httpx.AsyncClient, endpoint: str, cap: int
) -> None:
    ollama.set(endpoint, "huge_body")
    started = time.monotonic()
    with pytest.raises(BackendResponseError, match="larger than"):
        if endpoint == "/api/embed":
            await OllamaEmbedder(http, ollama.url, "e").embed(["a"], deadline=10)
        else:
            await OllamaChat(http, ollama.url, "m").chat([], deadline=10)
    assert time.monotonic() - started < 2.0
    await asyncio.sleep(0.05)  # let the server notice the hang-up
    # The server would have sent 1 GiB; it stopped once the client stopped reading (what it
    # managed to send past the cap sat in socket buffers).
    assert ollama.body_bytes_sent < cap + 16 * 1024 * 1024


async def test_concurrent_calls_against_a_misbehaving_server_each_fail_cleanly(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.set("/api/chat", "huge_body")
    ollama.set("/api/embed", "deep")
    chat = OllamaChat(http, ollama.url, "m")
    embedders = [OllamaEmbedder(http, ollama.url, "e") for _ in range(10)]
    outcomes = await asyncio.gather(
        *(chat.chat([], deadline=10) for _ in range(10)),
        *(e.embed(["a"], deadline=10) for e in embedders),
        return_exceptions=True,
    )
    assert [type(o) for o in outcomes] == [BackendResponseError] * 20
    # Ten bodies of 1 GiB were offered at once; each was cut at the cap.
    assert ollama.body_bytes_sent < 10 * (MAX_CHAT_BODY + 16 * 1024 * 1024)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(),
            st.floats(allow_nan=True, allow_infinity=True),
            st.booleans(),
            st.none(),
            st.text(max_size=5),
            st.lists(st.floats(), max_size=3),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_any_embedding_values_give_float32_vectors_or_a_response_error(values: list[Any]) -> None:
    try:
        [vector] = _vectors({"embeddings": [values]}, "embeddings", 1, "http://x")
    except BackendResponseError:
        return
    stored = np.asarray(vector, dtype=np.float32)  # what the indexer writes
    assert np.isfinite(stored).all() and len(vector) == len(values)


# --- no credential in an error text --------------------------------------------------------


async def test_a_failing_backend_never_shows_the_password_of_its_url(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    with_password = ollama.url.replace("http://", "http://echo:s3cr3t-pw@")
    ollama.set("/api/chat", "500")
    ollama.set("/api/embed", "error")
    failures: list[BaseException] = []
    for call in (
        OllamaChat(http, with_password, "m").chat([], deadline=5),
        OllamaEmbedder(http, with_password, "e").embed(["a"], deadline=5),
        OllamaEmbedder(http, "http://echo:s3cr3t-pw@127.0.0.1:9", "e").embed(["a"], deadline=2),
        ollama_health(http, "http://echo:s3cr3t-pw@127.0.0.1:9", deadline=2),
    ):
        with pytest.raises(BackendError) as caught:
            await call
        failures.append(caught.value)
    for failure in failures:
        assert "s3cr3t" not in str(failure) and "echo:" not in str(failure)
    assert "http://***@127.0.0.1" in str(failures[0])  # still says which server failed


async def test_an_api_key_that_cannot_be_sent_is_not_shown(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    # A key pasted with a stray character: httpx cannot encode the header.
    embedder = OpenAIEmbedder(http, ollama.url, "e", api_key="sk-sécret-key")
    with pytest.raises(BackendUnavailable) as caught:
        await embedder.embed(["a"], deadline=5)
    assert "sécret" not in str(caught.value) and "sk-" not in str(caught.value)


async def test_a_huge_model_listing_is_cut_by_the_health_check(
    ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.models = ["m" * 1000] * (MAX_CHAT_BODY // 1000)
    with pytest.raises(BackendUnavailable, match="larger than"):
        await ollama_health(http, ollama.url, deadline=5)
