"""Streamed chat replies from both backends: the pieces come whole however the bytes are cut,
every rule of a whole reply holds over the stream, and a server that cannot stream is learned
once and asked whole from then on."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.backends import chat as chat_module
from memory.backends.chat import ChatBackend, OllamaChat, OpenAIChat
from memory.backends.redact import Secrets
from memory.backends.streaming import about_stream
from memory.backends.structured import Negotiator
from memory.errors import (
    BackendError,
    BackendRefused,
    BackendResponseError,
    BackendUnavailable,
)
from memory.manage import setup
from memory.store import Store
from tests.fakes.ollama import FakeOllama, serve_fake_ollama
from tests.fakes.openai import FakeOpenAI, serve_fake_openai
from tests.memory.test_text import CONTROL_TOKENS, control_tokens_in

# Multi-byte characters (2, 3 and 4 bytes in UTF-8) so that a cut falls inside one.
REPLY = "Bonjour Zoé, ça va ? Le café est chaud ☕ et le thé 🍵 attend. Fin."
KEY = "sk-live-0123456789abcdefghij"


def _ndjson(pieces: Sequence[str], *, done: bool = True) -> bytes:
    lines = [{"message": {"role": "assistant", "content": p}, "done": False} for p in pieces]
    if done:
        lines.append({"message": {"content": ""}, "done": True, "prompt_eval_count": 31,
                      "eval_count": 7})  # fmt: skip
    return b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)


def _sse(pieces: Sequence[str], *, done: bool = True, crlf: bool = False) -> bytes:
    end = b"\r\n" if crlf else b"\n"
    events = [
        {"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces
    ]
    out = b"".join(b"data: " + json.dumps(e, ensure_ascii=False).encode() + end * 2 for e in events)
    if done:
        out += b": a comment line" + end
        out += b"data: " + json.dumps({"choices": [], "usage": {"prompt_tokens": 31,
                                       "completion_tokens": 7}}).encode() + end * 2  # fmt: skip
        out += b"data: [DONE]" + end * 2
    return out


def _cut(body: bytes, cuts: Sequence[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    return [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True) if b > a]


def _serving(chunks: Sequence[bytes], content_type: str, **headers: str) -> httpx.AsyncClient:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type, **headers},
                              content=body())  # fmt: skip

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def _collect(chat: ChatBackend, text: str = "Salut", deadline: float = 5) -> list[str]:
    async with chat.stream([{"role": "user", "content": text}], deadline=deadline) as stream:
        return [piece async for piece in stream]


def _pieces(text: str) -> list[str]:
    return [text[i : i + 3] for i in range(0, len(text), 3)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40),
    openai=st.booleans(),
    crlf=st.booleans(),
)
async def test_any_cut_of_the_bytes_gives_the_same_text(
    cuts: list[int], openai: bool, crlf: bool
) -> None:
    body = _sse(_pieces(REPLY), crlf=crlf) if openai else _ndjson(_pieces(REPLY))
    kind = "text/event-stream" if openai else "application/x-ndjson"
    async with _serving(_cut(body, cuts), kind) as http:
        chat = OpenAIChat(http, "http://x", "m") if openai else OllamaChat(http, "http://x", "m")
        stream = chat.stream([{"role": "user", "content": "Salut"}], deadline=5)
        async with stream:
            pieces = [piece async for piece in stream]
    assert "".join(pieces) == REPLY
    assert (stream.prompt_tokens, stream.completion_tokens, stream.streamed) == (31, 7, True)


@pytest.mark.parametrize("openai", [False, True])
async def test_a_gzipped_stream_is_inflated_and_another_coding_refused(openai: bool) -> None:
    body = _sse(_pieces(REPLY)) if openai else _ndjson(_pieces(REPLY))
    kind = "text/event-stream" if openai else "application/x-ndjson"
    packed = gzip.compress(body)
    chunks = [packed[i : i + 7] for i in range(0, len(packed), 7)]
    async with _serving(chunks, kind, **{"content-encoding": "gzip"}) as http:
        chat = OpenAIChat(http, "http://x", "m") if openai else OllamaChat(http, "http://x", "m")
        assert "".join(await _collect(chat)) == REPLY
    async with _serving([body], kind, **{"content-encoding": "br"}) as http:
        chat = OpenAIChat(http, "http://x", "m") if openai else OllamaChat(http, "http://x", "m")
        with pytest.raises(BackendResponseError, match="encoded as 'br'"):
            await _collect(chat)


@pytest.mark.parametrize("openai", [False, True])
async def test_a_stream_without_its_end_is_an_error_after_its_pieces(openai: bool) -> None:
    body = _sse(["Un ", "deux"], done=False) if openai else _ndjson(["Un ", "deux"], done=False)
    kind = "text/event-stream" if openai else "application/x-ndjson"
    async with _serving([body], kind) as http:
        chat = OpenAIChat(http, "http://x", "m") if openai else OllamaChat(http, "http://x", "m")
        got: list[str] = []
        with pytest.raises(BackendUnavailable, match="ended before the reply was complete"):
            async with chat.stream([{"role": "user", "content": "x"}], deadline=5) as stream:
                async for piece in stream:
                    got.append(piece)
    assert got == ["Un ", "deux"]


async def test_an_openai_stream_ending_on_its_finish_reason_is_complete() -> None:
    # Some llama.cpp forks end on the chunk with a finish_reason, without [DONE].
    last = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    body = _sse(["Un ", "deux"], done=False) + b"data: " + json.dumps(last).encode() + b"\n\n"
    async with _serving([body], "text/event-stream") as http:
        assert await _collect(OpenAIChat(http, "http://x", "m")) == ["Un ", "deux"]


@pytest.fixture(params=["ollama", "openai"])
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeOllama | FakeOpenAI]:
    if request.param == "ollama":
        async with serve_fake_ollama() as ollama:
            yield ollama
    else:
        async with serve_fake_openai() as openai:
            yield openai


def _client(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient, **kw: Any
) -> OllamaChat | OpenAIChat:
    if isinstance(fake, FakeOllama):
        return OllamaChat(http, fake.url, "llama3.1:8b", **kw)
    return OpenAIChat(http, fake.url, "m", **kw)


def _requests(fake: FakeOllama | FakeOpenAI) -> list[dict[str, Any]]:
    if isinstance(fake, FakeOllama):
        return [p for path, p in fake.calls if path == "/api/chat"]
    return fake.chats()


async def test_pieces_arrive_one_by_one_from_a_streaming_server(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.chat_reply = lambda payload: REPLY
    fake.stream.on = True
    chat = _client(fake, http)
    pieces = await _collect(chat)
    assert "".join(pieces) == REPLY and len(pieces) > 5
    assert _requests(fake)[0]["stream"] is True
    assert chat.modes.streams(chat.base_url, chat.model) is True


async def test_a_server_answering_in_one_block_is_learned_once(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.chat_reply = lambda payload: REPLY
    chat = _client(fake, http)
    assert await _collect(chat) == [REPLY]  # the block is the reply
    assert await _collect(chat) == [REPLY]
    sent = _requests(fake)
    assert len(sent) == 2
    assert [p.get("stream") is True for p in sent] == [True, False]


async def test_a_server_refusing_to_stream_is_asked_whole_once_learned(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.chat_reply = lambda payload: REPLY
    fake.stream.refuse = True
    saved: list[tuple[str, str, bool]] = []

    async def save(server: str, model: str, streams: bool) -> None:
        saved.append((server, model, streams))

    chat = _client(fake, http, modes=Negotiator(on_streams=save))
    assert await _collect(chat) == [REPLY]
    assert await _collect(chat) == [REPLY]
    sent = _requests(fake)
    # One refused request, then whole: the refusal is never sent again.
    assert [p.get("stream") is True for p in sent] == [True, False, False]
    assert saved == [(fake.url, chat.model, False)]


async def test_a_known_non_streaming_server_is_never_asked_to_stream(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.stream.on = True
    known = {(fake.url, "m"): False, (fake.url, "llama3.1:8b"): False}
    chat = _client(fake, http, modes=Negotiator(streams=known))
    assert await _collect(chat) == ["D'accord."]
    assert [p.get("stream") is True for p in _requests(fake)] == [False]


async def test_the_body_cap_holds_over_a_stream(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 64 * 1024
    monkeypatch.setattr(chat_module, "MAX_CHAT_BODY", cap)
    fake.stream.on = fake.stream.endless = True
    got: list[str] = []
    with pytest.raises(BackendResponseError, match="larger than"):
        async with _client(fake, http).stream([{"role": "user", "content": "x"}],
                                              deadline=10) as stream:  # fmt: skip
            async for piece in stream:
                got.append(piece)
    assert got[:1] == ["D'accord."] and len(got) > 100
    # The client stopped reading at the cap; what the server had written past it sat in
    # the sockets' buffers.
    assert sum(len(p) for p in got) < cap
    assert fake.stream.bytes_sent < cap + 8 * 1024 * 1024


async def test_a_dripping_stream_is_stopped_by_the_deadline(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.chat_reply = lambda payload: REPLY
    fake.stream.on = True
    fake.stream.delay = 30.0
    got: list[str] = []
    with pytest.raises(BackendUnavailable, match=r"no answer within 0\.3 s"):
        async with _client(fake, http).stream([{"role": "user", "content": "x"}],
                                              deadline=0.3) as stream:  # fmt: skip
            async for piece in stream:
                got.append(piece)
    assert got == ["Bonjour"]  # the first piece, then nothing within the deadline


@pytest.mark.parametrize("how", ["drop", "malformed"])
async def test_a_stream_that_breaks_keeps_its_pieces_then_raises(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient, how: str
) -> None:
    fake.chat_reply = lambda payload: REPLY
    fake.stream.on = True
    if how == "drop":
        fake.stream.drop_after = 3
    else:
        fake.stream.malformed_after = 3
    got: list[str] = []
    with pytest.raises(BackendError):
        async with _client(fake, http).stream([{"role": "user", "content": "x"}],
                                              deadline=5) as stream:  # fmt: skip
            async for piece in stream:
                got.append(piece)
    assert "".join(got) == "Bonjour Zoé, ça"


async def test_template_tokens_are_broken_in_a_streamed_request(
    fake: FakeOllama | FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.stream.on = True
    stuffed = "Salut " + " ".join(CONTROL_TOKENS)
    await _collect(_client(fake, http), stuffed)
    sent = _requests(fake)[0]
    assert sent["stream"] is True
    assert control_tokens_in(json.dumps(sent["messages"], ensure_ascii=False)) == []


def _quoting_key(
    status: int, body: bytes, content_type: str
) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": content_type}, content=body)

    return handler


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        # Refused at once, the key quoted back (OpenAI's own wording).
        (401, json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}."}}).encode(),
         "application/json"),
        # An error event midway, quoting the key.
        (200, _sse(["Un "], done=False)
         + b"data: " + json.dumps({"error": {"message": f"key {KEY} revoked"}}).encode()
         + b"\n\n", "text/event-stream"),
        # A line that is not JSON, carrying the key.
        (200, _sse(["Un "], done=False) + f"data: {{{KEY}\n\n".encode(), "text/event-stream"),
    ],
)  # fmt: skip
async def test_the_key_quoted_back_in_a_streamed_error_is_never_shown(
    status: int, body: bytes, kind: str
) -> None:
    transport = httpx.MockTransport(_quoting_key(status, body, kind))
    async with httpx.AsyncClient(transport=transport) as http:
        chat = OpenAIChat(http, "http://x", "m", api_key=KEY, secrets=Secrets.of(KEY))
        with pytest.raises(BackendError) as caught:
            await _collect(chat)
    assert KEY not in str(caught.value) and KEY[:12] not in str(caught.value)


async def test_whether_a_server_streams_is_kept_across_restarts(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    first = OllamaChat(http, ollama.url, "llama3.1:8b", modes=await setup.negotiator(store,
                       override=None))  # fmt: skip
    assert await _collect(first) == ["D'accord."]  # one block: learned and saved
    # A restart: the next process reads it and never asks this server to stream.
    again = OllamaChat(http, ollama.url, "llama3.1:8b", modes=await setup.negotiator(store,
                       override=None))  # fmt: skip
    assert await _collect(again) == ["D'accord."]
    assert [p["stream"] for p in _requests(ollama)] == [True, False]


@pytest.mark.parametrize(
    ("detail", "about"),
    [("stream is not supported", True), ("Unknown parameter: 'stream_options'", True),
     ("streaming disabled for this key", True), ("upstream connect error", False),
     ("model 'm' not found", False)],
)  # fmt: skip
def test_only_a_refusal_naming_stream_is_about_streaming(detail: str, about: bool) -> None:
    refused = BackendRefused(f"http://x: HTTP 400: {detail}", status=400, detail=detail)
    assert about_stream(refused, "http://x") is about
