"""Chat and embedding backends: Ollama's native API and OpenAI-compatible servers.

Each client takes an injectable `httpx.AsyncClient` (the I/O seam: tests give it a loopback
server). `deadline` bounds the whole call and is the only bound on it: each request carries
its own httpx timeouts, set from the deadline, so a client's shorter read timeout cannot cut a
slow reply (the client's connect timeout is kept when shorter). A body is streamed and
abandoned past a cap. Failures become the typed errors of memory.errors, and nothing else:
BackendUnavailable (unreachable, deadline expired, 429, 5xx: retry later), BackendRefused (a
4xx, or a 5xx whose body says the request itself was refused), or BackendResponseError (an
in-band error, or content that cannot be used: too large, not JSON, nested too deeply, numbers
beyond float32). Their texts carry the server's own message, shortened, never the request's
content, and are redacted (memory.redact): they reach /stats, the logs and the outbox.
A structured request goes through memory.structured: the mode each server accepts is learned.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
import numpy as np

from memory.backend_errors import answered_error
from memory.errors import BackendResponseError, BackendUnavailable
from memory.redact import redact
from memory.structured import (
    OLLAMA_MODES,
    OPENAI_MODES,
    Mode,
    Negotiator,
    ollama_format,
    prompted,
    response_format,
)

Message = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ChatResult:
    """A chat reply, with the token counts the backend reported (None when it did not)."""

    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class ChatBackend(Protocol):
    model: str

    async def chat(
        self, messages: Sequence[Message], *, schema: Mapping[str, Any] | None = None,
        deadline: float, max_tokens: int | None = None,
    ) -> ChatResult: ...  # fmt: skip


class Embedder(Protocol):
    model: str

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]: ...


# The largest embeddings answer read: the indexer's batch of 32 texts at 4,096 dimensions (the
# widest common models) is 2.9 MB of JSON (measured: 22.5 bytes a float32 as JSON); 32 MB is 11x it.
MAX_EMBED_BODY = 32 * 1024 * 1024
# The largest chat answer read: a whole 131,072-token window spent on output, 4 characters a token,
# every one JSON-escaped to 6 bytes, is 3.1 MB; the reply is cut far shorter and the reflection
# parser keeps 64 KB of it, so nothing useful is longer. Also bounds the health check's listings.
MAX_CHAT_BODY = 4 * 1024 * 1024
# Dimensions of one embedding: 4x the widest common model (4,096: Qwen3-Embedding-8B, NV-Embed-v2).
MAX_EMBEDDING_DIM = 16_384
# Vectors are stored as float32: a larger magnitude would be stored as infinity.
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# A token count is kept only as an integer SQLite can store (and a float can divide).
_MAX_COUNT = 2**63 - 1


async def _post(
    http: httpx.AsyncClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    deadline: float,
    cap: int,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """POST `payload` and return the JSON answer; every failure is a BackendError whose text
    carries no credential."""
    try:
        async with asyncio.timeout(deadline):
            async with http.stream(
                "POST", url, json=payload, headers=headers, timeout=_timeouts(http, deadline)
            ) as response:
                status = response.status_code
                body = await _read(response, cap)
    except TimeoutError:
        raise BackendUnavailable(redact(f"{url}: no answer within {deadline:g} s")) from None
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
        # UnicodeError: a header value outside ASCII (an API key pasted with a stray character).
        raise BackendUnavailable(redact(f"{url}: {type(exc).__name__}: {exc}")) from exc
    data, problem = _decode(body, cap)
    error = answered_error(url, status, data)
    if error is not None:
        raise error
    if data is None:
        raise BackendResponseError(redact(f"{url}: {problem}"))
    return data


def _timeouts(http: httpx.AsyncClient, deadline: float) -> httpx.Timeout:
    """A request's own httpx timeouts: the deadline, so that the client's shorter read, write
    or pool timeouts never cut it (a 70 s reply on a CPU against a 30 s read timeout); the
    client's connect timeout when it is shorter (a server that is down is said at once)."""
    connect = http.timeout.connect
    return httpx.Timeout(deadline, connect=deadline if connect is None else min(connect, deadline))


async def _read(response: httpx.Response, cap: int) -> bytes | None:
    """Return the body, or None as soon as it is known to pass `cap` bytes."""
    declared = response.headers.get("content-length", "")
    # Lengths compared as digit strings first: int() of a 5,000-digit one raises ValueError.
    digits = declared.isascii() and declared.isdigit()
    if digits and (len(declared) > len(str(cap)) or int(declared) > cap):
        return None
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > cap:
            return None  # leaving the stream closes the connection: the rest is never read
    return bytes(body)


def _decode(body: bytes | None, cap: int) -> tuple[Any, str]:
    """Return the parsed JSON (None when unusable) and, when unusable, why."""
    if body is None:
        return None, f"the answer is larger than {cap // (1024 * 1024)} MB"
    if not body:
        return None, "the answer is empty"
    try:
        return json.loads(body), ""
    except ValueError:  # not JSON, not UTF-8, or an integer longer than Python converts
        return None, "the answer is not JSON"
    except RecursionError:
        return None, "the answer is JSON nested too deeply"


def _vectors(data: Any, key: str, count: int, url: str) -> list[list[float]]:
    vectors = data.get(key) if isinstance(data, dict) else None
    if not isinstance(vectors, list) or len(vectors) != count:
        raise BackendResponseError(redact(f"{url}: expected {count} embeddings"))
    out: list[list[float]] = []
    for vector in vectors:
        if isinstance(vector, dict):  # OpenAI: {"embedding": [...], "index": i}
            vector = vector.get("embedding")
        if not isinstance(vector, list) or not vector or len(vector) > MAX_EMBEDDING_DIM:
            raise BackendResponseError(redact(f"{url}: an embedding is not a list of numbers"))
        floats = [_float32(x) for x in vector]
        if any(x is None for x in floats):
            raise BackendResponseError(
                redact(f"{url}: an embedding holds something else than float32 numbers")
            )
        out.append([x for x in floats if x is not None])
    if len({len(v) for v in out}) > 1:
        raise BackendResponseError(redact(f"{url}: embeddings of different dimensions"))
    return out


def _float32(value: object) -> float | None:
    """The value as a float that float32 holds (finite), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not -_FLOAT32_MAX <= value <= _FLOAT32_MAX:
        return None  # compared as integers: float() of a 400-digit one raises OverflowError
    number = float(value)
    return number if -_FLOAT32_MAX <= number <= _FLOAT32_MAX else None  # NaN fails both


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT:
        return value
    return None


class _HttpEmbedder:
    """Embeddings over HTTP, one request at a time: the turn and the indexer queue on `lock`,
    which is why the turn bounds its whole wait (lock included) with asyncio.wait_for."""

    path = ""
    vectors_key = ""

    def __init__(
        self, http: httpx.AsyncClient, base_url: str, model: str, *, api_key: str | None = None
    ) -> None:
        self.http = http
        self.url = base_url.rstrip("/") + self.path
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.lock = asyncio.Lock()

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        async with self.lock:
            data = await _post(
                self.http,
                self.url,
                {"model": self.model, "input": list(texts)},
                deadline=deadline,
                cap=MAX_EMBED_BODY,
                headers=self.headers,
            )
        return _vectors(data, self.vectors_key, len(texts), self.url)


class OllamaEmbedder(_HttpEmbedder):
    """Embeddings from Ollama's `/api/embed`."""

    path = "/api/embed"
    vectors_key = "embeddings"


class _StructuredChat:
    """What both chat clients share: a plain call, or a structured one sent in the mode this
    server accepts, learned once (memory.structured)."""

    base_url: str
    model: str
    modes: Negotiator
    server_modes: tuple[Mode, ...]

    def _format(self, mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | str | None:
        raise NotImplementedError

    async def _send(
        self,
        messages: Sequence[Message],
        format_: dict[str, Any] | str | None,
        deadline: float,
        max_tokens: int | None,
    ) -> ChatResult:
        raise NotImplementedError

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:
        if schema is None:
            return await self._send(messages, None, deadline, max_tokens)

        async def attempt(mode: Mode, left: float) -> ChatResult:
            sent = prompted(mode, messages, schema)
            return await self._send(sent, self._format(mode, schema), left, max_tokens)

        return await self.modes.send(
            self.base_url, self.model, self.server_modes, attempt, deadline=deadline
        )


class OllamaChat(_StructuredChat):
    """Chat from Ollama's `/api/chat`, non-streaming; `schema` is sent as `format` (or as
    "json", or in the prompt: see memory.structured)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        num_ctx: int = 8192,
        modes: Negotiator | None = None,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/api/chat"
        self.model = model
        self.num_ctx = num_ctx
        self.modes = modes or Negotiator()

    server_modes = OLLAMA_MODES

    def _format(self, mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | str | None:
        return ollama_format(mode, schema)

    async def _send(
        self,
        messages: Sequence[Message],
        format_: dict[str, Any] | str | None,
        deadline: float,
        max_tokens: int | None,
    ) -> ChatResult:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "stream": False,
            "options": {"num_ctx": self.num_ctx},
        }
        if format_ is not None:
            payload["format"] = format_
        if max_tokens is not None:
            payload["options"]["num_predict"] = max_tokens
        data = await _post(self.http, self.url, payload, deadline=deadline, cap=MAX_CHAT_BODY)
        message = data.get("message") if isinstance(data, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise BackendResponseError(redact(f"{self.url}: the answer has no message content"))
        return ChatResult(
            content, _int(data.get("prompt_eval_count")), _int(data.get("eval_count"))
        )


async def ollama_health(http: httpx.AsyncClient, base_url: str, *, deadline: float) -> list[str]:
    """Return the models an Ollama server has (after checking `/api/version` answers)."""
    base = base_url.rstrip("/")
    body: bytes | None = None
    try:
        async with asyncio.timeout(deadline):
            for path in ("/api/version", "/api/tags"):
                timeout = _timeouts(http, deadline)
                async with http.stream("GET", base + path, timeout=timeout) as response:
                    response.raise_for_status()
                    body = await _read(response, MAX_CHAT_BODY)
    except TimeoutError:
        raise BackendUnavailable(redact(f"{base}: no answer within {deadline:g} s")) from None
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
        raise BackendUnavailable(redact(f"{base}: {type(exc).__name__}: {exc}")) from exc
    tags, problem = _decode(body, MAX_CHAT_BODY)
    if tags is None:
        raise BackendUnavailable(redact(f"{base}/api/tags: {problem}"))
    models = tags.get("models") if isinstance(tags, dict) else None
    if not isinstance(models, list):
        return []
    return [m["name"] for m in models if isinstance(m, dict) and isinstance(m.get("name"), str)]


class OpenAIEmbedder(_HttpEmbedder):
    """Embeddings from an OpenAI-compatible `/v1/embeddings` (llama.cpp, vLLM, LM Studio)."""

    path = "/v1/embeddings"
    vectors_key = "data"


class OpenAIChat(_StructuredChat):
    """Chat from an OpenAI-compatible `/v1/chat/completions`; `schema` as the `response_format`
    this server accepts, learned (see memory.structured)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        modes: Negotiator | None = None,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/v1/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.modes = modes or Negotiator()

    server_modes = OPENAI_MODES

    def _format(self, mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | str | None:
        return response_format(mode, schema)

    async def _send(
        self,
        messages: Sequence[Message],
        format_: dict[str, Any] | str | None,
        deadline: float,
        max_tokens: int | None,
    ) -> ChatResult:
        payload: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if format_ is not None:
            payload["response_format"] = format_
        data = await _post(
            self.http, self.url, payload, deadline=deadline, cap=MAX_CHAT_BODY, headers=self.headers
        )
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise BackendResponseError(redact(f"{self.url}: the answer has no message content"))
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return ChatResult(
            content, _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        )


class Deadlined:
    """A chat backend whose deadline has a name: when it expires, the error says which setting
    it was and how long the call waited ("chat_timeout: no answer within 120 s"), whatever
    the call was waiting for (a free chat slot, the server, a structured-output probe)."""

    def __init__(self, inner: ChatBackend, name: str) -> None:
        self.inner = inner
        self.name = name
        self.model = inner.model

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:
        try:
            # Started before the inner deadlines, so it expires first and names itself.
            async with asyncio.timeout(deadline):
                return await self.inner.chat(
                    messages, schema=schema, deadline=deadline, max_tokens=max_tokens
                )
        except TimeoutError:
            raise BackendUnavailable(f"{self.name}: no answer within {deadline:g} s") from None
