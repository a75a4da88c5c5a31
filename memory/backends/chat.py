"""Chat backends: Ollama's native API and OpenAI-compatible servers; the protocols the engine
takes (`ChatBackend`, `Embedder`); a deadline that names its setting (`Deadlined`).

Each client takes an injectable `httpx.AsyncClient` (the I/O seam: tests give it a loopback
server) and sends through memory.backends.http, which bounds each call by its deadline and its
body's size and turns every failure into the typed errors of memory.errors. A structured
request goes through memory.backends.structured: the mode each server accepts is learned. The
embedding
clients are in memory.backends.embedders.

Every message goes out with its chat-template control tokens broken (memory.text), whoever wrote
it: Ollama and llama.cpp apply the model's template to the text and tokenize the result, so a
`<|im_start|>` or an `[INST]` in a message, a name, a card or a memory would become a real role
marker. The operator's persona is treated the same, since a card may have written it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from memory.backends.http import (
    ACCEPT_ENCODING,
    bounded,
    decode,
    post_json,
    read_capped,
    timeouts,
)
from memory.backends.redact import NO_SECRETS, Secrets, redact
from memory.backends.structured import (
    OLLAMA_MODES,
    OPENAI_MODES,
    Mode,
    Negotiator,
    ollama_format,
    prompted,
    response_format,
)
from memory.errors import BackendResponseError, BackendUnavailable
from memory.text import break_control_tokens

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


# The largest chat answer read: a whole 131,072-token window spent on output, 4 characters a token,
# every one JSON-escaped to 6 bytes, is 3.1 MB; the reply is cut far shorter and the reflection
# parser keeps 64 KB of it, so nothing useful is longer. Also bounds the health check's listings.
MAX_CHAT_BODY = 4 * 1024 * 1024
# A token count is kept only as an integer SQLite can store (and a float can divide).
_MAX_COUNT = 2**63 - 1


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT:
        return value
    return None


class _StructuredChat:
    """What both chat clients share: a plain call, or a structured one sent in the mode this
    server accepts, learned once (memory.backends.structured)."""

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
        messages = [{**m, "content": break_control_tokens(m["content"])} for m in messages]
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
    "json", or in the prompt: see memory.backends.structured)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        num_ctx: int = 8192,
        modes: Negotiator | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/api/chat"
        self.model = model
        self.num_ctx = num_ctx
        self.modes = modes or Negotiator()
        self.secrets = secrets

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
        data = await post_json(
            self.http, self.url, payload, deadline=deadline, cap=MAX_CHAT_BODY, secrets=self.secrets
        )
        message = data.get("message") if isinstance(data, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise BackendResponseError(
                self.secrets.redact(f"{self.url}: the answer has no message content")
            )
        return ChatResult(
            content, _int(data.get("prompt_eval_count")), _int(data.get("eval_count"))
        )


async def ollama_health(http: httpx.AsyncClient, base_url: str, *, deadline: float) -> list[str]:
    """Return the models an Ollama server has (after checking `/api/version` answers)."""
    base = base_url.rstrip("/")
    body: bytes | str = b""
    async with bounded(base, deadline):
        for path in ("/api/version", "/api/tags"):
            timeout = timeouts(http, deadline)
            headers = {"Accept-Encoding": ACCEPT_ENCODING}
            async with http.stream(
                "GET", base + path, headers=headers, timeout=timeout
            ) as response:
                response.raise_for_status()
                body = await read_capped(response, MAX_CHAT_BODY)
    tags, problem = decode(body)
    if tags is None:
        raise BackendUnavailable(redact(f"{base}/api/tags: {problem}"))
    models = tags.get("models") if isinstance(tags, dict) else None
    if not isinstance(models, list):
        return []
    return [m["name"] for m in models if isinstance(m, dict) and isinstance(m.get("name"), str)]


class OpenAIChat(_StructuredChat):
    """Chat from an OpenAI-compatible `/v1/chat/completions`; `schema` as the `response_format`
    this server accepts, learned (see memory.backends.structured)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        modes: Negotiator | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/v1/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.modes = modes or Negotiator()
        # The key it sends is one even when the configuration's were not given.
        self.secrets = secrets.including(api_key)

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
        data = await post_json(
            self.http, self.url, payload, deadline=deadline, cap=MAX_CHAT_BODY,
            headers=self.headers, secrets=self.secrets,
        )  # fmt: skip
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise BackendResponseError(
                self.secrets.redact(f"{self.url}: the answer has no message content")
            )
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
