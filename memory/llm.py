"""Chat and embedding backends: Ollama's native API and OpenAI-compatible servers.

Each client takes an injectable `httpx.AsyncClient` (the I/O seam: tests give it a loopback
server). httpx timeouts bound each read; `deadline` bounds the whole call. Failures become the
typed errors of memory.errors: BackendUnavailable (unreachable, timeout, 5xx: retry later) or
BackendResponseError (an error body, or content that cannot be used).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from memory.errors import BackendResponseError, BackendUnavailable

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


async def _post(
    http: httpx.AsyncClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    deadline: float,
    headers: Mapping[str, str] | None = None,
) -> Any:
    try:
        async with asyncio.timeout(deadline):
            response = await http.post(url, json=payload, headers=headers)
            body = response.content
    except TimeoutError:
        raise BackendUnavailable(f"{url}: no answer within {deadline:g} s") from None
    except httpx.HTTPError as exc:
        raise BackendUnavailable(f"{url}: {type(exc).__name__}: {exc}") from exc
    try:
        data = json.loads(body) if body else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if response.status_code >= 500 or response.status_code == 429:
        raise BackendUnavailable(f"{url}: HTTP {response.status_code}: {_describe(error)}")
    if response.status_code >= 400 or error:
        raise BackendResponseError(f"{url}: HTTP {response.status_code}: {_describe(error)}")
    if data is None:
        raise BackendResponseError(f"{url}: the answer is not JSON")
    return data


def _describe(error: object) -> str:
    if isinstance(error, dict):
        error = error.get("message", error)
    return str(error)[:300] if error else "no detail"


def _vectors(data: Any, key: str, count: int, url: str) -> list[list[float]]:
    vectors = data.get(key) if isinstance(data, dict) else None
    if not isinstance(vectors, list) or len(vectors) != count:
        raise BackendResponseError(f"{url}: expected {count} embeddings")
    out: list[list[float]] = []
    for vector in vectors:
        if isinstance(vector, dict):  # OpenAI: {"embedding": [...], "index": i}
            vector = vector.get("embedding")
        if not isinstance(vector, list) or not vector:
            raise BackendResponseError(f"{url}: an embedding is not a list of numbers")
        try:
            floats = [float(x) for x in vector]
        except (TypeError, ValueError):
            raise BackendResponseError(f"{url}: an embedding is not a list of numbers") from None
        if not all(math.isfinite(x) for x in floats):
            raise BackendResponseError(f"{url}: an embedding holds NaN or infinity")
        out.append(floats)
    if len({len(v) for v in out}) > 1:
        raise BackendResponseError(f"{url}: embeddings of different dimensions")
    return out


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
                headers=self.headers,
            )
        return _vectors(data, self.vectors_key, len(texts), self.url)


class OllamaEmbedder(_HttpEmbedder):
    """Embeddings from Ollama's `/api/embed`."""

    path = "/api/embed"
    vectors_key = "embeddings"


class OllamaChat:
    """Chat from Ollama's `/api/chat`, non-streaming; `schema` is sent as `format`."""

    def __init__(
        self, http: httpx.AsyncClient, base_url: str, model: str, *, num_ctx: int = 8192
    ) -> None:
        self.http = http
        self.url = base_url.rstrip("/") + "/api/chat"
        self.model = model
        self.num_ctx = num_ctx

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "stream": False,
            "options": {"num_ctx": self.num_ctx},
        }
        if schema is not None:
            payload["format"] = dict(schema)
        if max_tokens is not None:
            payload["options"]["num_predict"] = max_tokens
        data = await _post(self.http, self.url, payload, deadline=deadline)
        message = data.get("message") if isinstance(data, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise BackendResponseError(f"{self.url}: the answer has no message content")
        return ChatResult(
            content, _int(data.get("prompt_eval_count")), _int(data.get("eval_count"))
        )


async def ollama_health(http: httpx.AsyncClient, base_url: str, *, deadline: float) -> list[str]:
    """Return the models an Ollama server has (after checking `/api/version` answers)."""
    base = base_url.rstrip("/")
    try:
        async with asyncio.timeout(deadline):
            (await http.get(base + "/api/version")).raise_for_status()
            tags = (await http.get(base + "/api/tags")).json()
    except TimeoutError:
        raise BackendUnavailable(f"{base}: no answer within {deadline:g} s") from None
    except (httpx.HTTPError, json.JSONDecodeError) as exc:
        raise BackendUnavailable(f"{base}: {type(exc).__name__}: {exc}") from exc
    models = tags.get("models") if isinstance(tags, dict) else None
    return [str(m.get("name")) for m in models or [] if isinstance(m, dict)]


class OpenAIEmbedder(_HttpEmbedder):
    """Embeddings from an OpenAI-compatible `/v1/embeddings` (llama.cpp, vLLM, LM Studio)."""

    path = "/v1/embeddings"
    vectors_key = "data"


class OpenAIChat:
    """Chat from an OpenAI-compatible `/v1/chat/completions`; `schema` as a json_schema format."""

    def __init__(
        self, http: httpx.AsyncClient, base_url: str, model: str, *, api_key: str | None = None
    ) -> None:
        self.http = http
        self.url = base_url.rstrip("/") + "/v1/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:
        payload: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reflection", "schema": dict(schema)},
            }
        data = await _post(self.http, self.url, payload, deadline=deadline, headers=self.headers)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise BackendResponseError(f"{self.url}: the answer has no message content")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return ChatResult(
            content, _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        )
