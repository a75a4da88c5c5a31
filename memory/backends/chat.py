"""Chat backends: Ollama's native API and OpenAI-compatible servers; the protocols the engine
takes (`ChatBackend`, `Embedder`); a deadline that names its setting (`Deadlined`).

Each client takes an injectable `httpx.AsyncClient` (the I/O seam: tests give it a loopback
server) and sends through memory.backends.http, which bounds each call by its deadline and its
body's size and turns every failure into the typed errors of memory.errors. A structured
request goes through memory.backends.structured: the mode each server accepts is learned. A
turn's reply streams (memory.backends.streaming) from a server that can, learned the same way.
The context each server takes is asked of it once, or read in its refusal of a prompt too long
(memory.backends.context_size); a stream that reported no prompt token count is counted by the
server now and then (memory.backends.token_count). The embedding clients are in
memory.backends.embedders.

Every message goes out with its chat-template control tokens broken (memory.text), whoever wrote
it: Ollama and llama.cpp apply the model's template to the text and tokenize the result, so a
`<|im_start|>` or an `[INST]` in a message, a name, a card or a memory would become a real role
marker. The operator's persona is treated the same, since a card may have written it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import httpx

from memory.backends.context_size import ContextSizes, ask_context, refused_context
from memory.backends.http import (
    ACCEPT_ENCODING,
    bounded,
    decode,
    post_json,
    read_capped,
    timeouts,
)
from memory.backends.redact import NO_SECRETS, Secrets, redact
from memory.backends.streaming import ChatStream, EmptyStream, Piece, about_stream, streamed
from memory.backends.structured import (
    OLLAMA_MODES,
    OPENAI_MODES,
    Mode,
    Negotiator,
    ollama_format,
    prompted,
    response_format,
)
from memory.backends.token_count import TokenCounter
from memory.errors import BackendRefused, BackendResponseError, BackendUnavailable
from memory.text import break_control_tokens

log = logging.getLogger(__name__)

Message = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ChatResult:
    """A chat reply, with the token counts the backend reported (None when it did not)."""

    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class ChatBackend(Protocol):
    """A chat server: `chat` answers whole (structured requests: the reflection), `stream`
    yields a reply's pieces as the model writes them (a turn)."""

    model: str

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult: ...

    def stream(
        self, messages: Sequence[Message], *, deadline: float, max_tokens: int | None = None
    ) -> ChatStream: ...


def stream_of(
    backend: ChatBackend,
    messages: Sequence[Message],
    *,
    deadline: float,
    max_tokens: int | None = None,
) -> ChatStream:
    """The backend's stream of a reply; for a backend that only answers whole (`chat`, as
    written before streaming existed), its reply as one piece."""
    stream = getattr(backend, "stream", None)
    if stream is not None:
        result: ChatStream = stream(messages, deadline=deadline, max_tokens=max_tokens)
        return result

    async def whole(out: ChatStream) -> AsyncGenerator[str, None]:
        reply = await backend.chat(messages, deadline=deadline, max_tokens=max_tokens)
        out.prompt_tokens, out.completion_tokens = reply.prompt_tokens, reply.completion_tokens
        out.streamed = False
        yield reply.content

    return ChatStream(whole)


def context_size_of(backend: ChatBackend) -> Callable[[], Awaitable[int | None]] | None:
    """What tells the context this backend's server takes (None: a backend that cannot say,
    as written before it could)."""
    found: Callable[[], Awaitable[int | None]] | None = getattr(backend, "context_size", None)
    return found


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
    server accepts, learned once (memory.backends.structured); the context this server takes,
    asked once or learned from its refusal (memory.backends.context_size)."""

    http: httpx.AsyncClient
    base_url: str
    url: str
    model: str
    modes: Negotiator
    sizes: ContextSizes
    kind: Literal["ollama", "openai"]
    server_modes: tuple[Mode, ...]
    headers: Mapping[str, str]
    secrets: Secrets
    counter: TokenCounter | None = None
    # A stream that ended before its first event is asked again whole (OpenAI-compatible
    # servers: llama-cpp-python refuses a prompt over its context so); an Ollama stream that
    # breaks there fails, as a server that went down.
    whole_after_empty = False

    async def context_size(self) -> int | None:
        """The context this server takes for the model (None: it says none, and has refused
        no prompt yet): asked of it the first time, then known."""

        async def ask() -> int | None:
            return await ask_context(
                self.http,
                self.kind,
                self.base_url,
                self.model,
                headers=self.headers,
                secrets=self.secrets,
            )

        return await self.sizes.resolve(self.base_url, self.model, ask)

    async def _learn_refusal(self, exc: BackendResponseError) -> None:
        """Learn the context a refusal names (a prompt too long for the server)."""
        text = exc.detail if isinstance(exc, BackendRefused) else str(exc)
        tokens = refused_context(text)
        if tokens is not None:
            await self.sizes.learn(self.base_url, self.model, tokens, "refusal")

    def _format(self, mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | str | None:
        raise NotImplementedError

    def _payload(
        self,
        messages: Sequence[Message],
        format_: dict[str, Any] | str | None,
        max_tokens: int | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _parsed(self, data: Any) -> ChatResult:
        raise NotImplementedError

    def _piece(self, data: Any) -> Piece:
        raise NotImplementedError

    async def _send(
        self,
        messages: Sequence[Message],
        format_: dict[str, Any] | str | None,
        deadline: float,
        max_tokens: int | None,
    ) -> ChatResult:
        payload = self._payload(messages, format_, max_tokens, stream=False)
        try:
            data = await post_json(
                self.http,
                self.url,
                payload,
                deadline=deadline,
                cap=MAX_CHAT_BODY,
                headers=self.headers,
                secrets=self.secrets,
            )
        except BackendResponseError as exc:
            await self._learn_refusal(exc)
            raise
        return self._parsed(data)

    def _block(self, data: Any) -> tuple[str, int | None, int | None]:
        result = self._parsed(data)
        return result.content, result.prompt_tokens, result.completion_tokens

    def stream(
        self, messages: Sequence[Message], *, deadline: float, max_tokens: int | None = None
    ) -> ChatStream:
        """The reply's pieces as the model writes them, when this server streams (learned
        from its first answer, kept by the Negotiator); otherwise its whole reply, once."""
        sent = [{**m, "content": break_control_tokens(m["content"])} for m in messages]

        async def pieces(out: ChatStream) -> AsyncGenerator[str, None]:
            loop = asyncio.get_running_loop()
            end = loop.time() + deadline
            if self.modes.streams(self.base_url, self.model) is False:
                async for piece in self._whole(out, sent, deadline, max_tokens):
                    yield piece
                return
            payload = self._payload(sent, None, max_tokens, stream=True)
            received = False
            try:
                async for piece in streamed(
                    self.http,
                    self.url,
                    payload,
                    deadline=deadline,
                    cap=MAX_CHAT_BODY,
                    parse=self._piece,
                    block=self._block,
                    out=out,
                    headers=self.headers,
                    secrets=self.secrets,
                ):
                    if not received:
                        received = True
                        await self.modes.learn_streams(self.base_url, self.model, out.streamed)
                    yield piece
            except EmptyStream:
                if received or not self.whole_after_empty:
                    raise
                # Asked again whole: its answer says what went wrong (llama-cpp-python refuses
                # so a prompt longer than its context, with the context in its words).
                result = await self._after_empty(sent, end, max_tokens)
                out.prompt_tokens, out.completion_tokens = (
                    result.prompt_tokens,
                    result.completion_tokens,
                )
                out.streamed = False
                yield result.content
                return
            except BackendResponseError as exc:
                await self._learn_refusal(exc)
                if received or not about_stream(exc, self.url):
                    raise
                log.warning(
                    "chat server %s refused to stream (%s): asked whole from now on",
                    self.base_url,
                    exc,
                )
                await self.modes.learn_streams(self.base_url, self.model, False)
                left = max(0.001, end - loop.time())
                async for piece in self._whole(out, sent, left, max_tokens):
                    yield piece
                return
            if out.prompt_tokens is None and out.streamed and self.counter is not None:
                text = "\n".join(m["content"] for m in sent)
                out.counted = await self.counter.count(text)

        return ChatStream(pieces)

    async def _after_empty(
        self, messages: Sequence[Message], end: float, max_tokens: int | None
    ) -> ChatResult:
        """The whole answer, after a stream that ended before its first event. The server may
        close the connection that stream came on as the next request takes it (llama-cpp-python
        does): a request dropped so is sent once more."""
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            try:
                return await self._send(messages, None, max(0.001, end - loop.time()), max_tokens)
            except BackendUnavailable as exc:
                cause = exc.__cause__
                dropped = isinstance(cause, httpx.TransportError) and not isinstance(
                    cause, httpx.TimeoutException
                )
                if attempt == 2 or not dropped:
                    raise
        raise AssertionError("unreachable")

    async def _whole(
        self,
        out: ChatStream,
        messages: Sequence[Message],
        deadline: float,
        max_tokens: int | None,
    ) -> AsyncGenerator[str, None]:
        result = await self._send(messages, None, deadline, max_tokens)
        out.prompt_tokens, out.completion_tokens = result.prompt_tokens, result.completion_tokens
        out.streamed = False
        yield result.content

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
    """Chat from Ollama's `/api/chat`: a turn streamed (NDJSON), a structured request whole,
    `schema` sent as `format` (or as "json", or in the prompt: see memory.backends.structured)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        model: str,
        *,
        num_ctx: int = 8192,
        modes: Negotiator | None = None,
        sizes: ContextSizes | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/api/chat"
        self.model = model
        self.num_ctx = num_ctx
        self.modes = modes or Negotiator()
        self.sizes = sizes or ContextSizes()
        self.secrets = secrets

    server_modes = OLLAMA_MODES
    kind: Literal["ollama", "openai"] = "ollama"

    def _format(self, mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | str | None:
        return ollama_format(mode, schema)

    headers: Mapping[str, str] = {}

    def _payload(
        self,
        messages: Sequence[Message],
        format_: dict[str, Any] | str | None,
        max_tokens: int | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "stream": stream,
            "options": {"num_ctx": self.num_ctx},
        }
        if format_ is not None:
            payload["format"] = format_
        if max_tokens is not None:
            payload["options"]["num_predict"] = max_tokens
        return payload

    def _parsed(self, data: Any) -> ChatResult:
        message = data.get("message") if isinstance(data, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise BackendResponseError(
                self.secrets.redact(f"{self.url}: the answer has no message content")
            )
        return ChatResult(
            content, _int(data.get("prompt_eval_count")), _int(data.get("eval_count"))
        )

    def _piece(self, data: Any) -> Piece:
        # A line: {"message": {"content": piece}, "done": false}; the last has the counts.
        if not isinstance(data, dict):
            raise BackendResponseError(self.secrets.redact(f"{self.url}: a line is not an object"))
        message = data.get("message")
        content = message.get("content", "") if isinstance(message, dict) else ""
        text = content if isinstance(content, str) else ""
        if data.get("done") is True:
            return Piece(
                text, True, _int(data.get("prompt_eval_count")), _int(data.get("eval_count"))
            )
        return Piece(text)


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
        sizes: ContextSizes | None = None,
        secrets: Secrets = NO_SECRETS,
    ) -> None:
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/v1/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.modes = modes or Negotiator()
        self.sizes = sizes or ContextSizes()
        # The key it sends is one even when the configuration's were not given.
        self.secrets = secrets.including(api_key)
        # Its streams may report no prompt count (llama-cpp-python's never do): then the
        # server counts now and then (memory.backends.token_count).
        self.counter = TokenCounter(
            http, self.base_url, model, headers=self.headers, secrets=self.secrets
        )

    server_modes = OPENAI_MODES
    kind: Literal["ollama", "openai"] = "openai"
    whole_after_empty = True

    def _format(self, mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | str | None:
        return response_format(mode, schema)

    def _payload(
        self,
        messages: Sequence[Message],
        format_: dict[str, Any] | str | None,
        max_tokens: int | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if format_ is not None:
            payload["response_format"] = format_
        if stream:
            # The token counts in the last event (OpenAI, vLLM, llama.cpp, Ollama's /v1); a
            # server that refuses the option is asked whole from then on.
            payload.update(stream=True, stream_options={"include_usage": True})
        return payload

    def _parsed(self, data: Any) -> ChatResult:
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

    def _piece(self, data: Any) -> Piece:
        # An event: {"choices": [{"delta": {"content": piece}, "finish_reason": null}]}; the
        # usage comes in the last one (with no choice at all when asked by stream_options).
        if not isinstance(data, dict):
            raise BackendResponseError(
                self.secrets.redact(f"{self.url}: an event is not an object")
            )
        given = data.get("usage")
        usage: dict[str, Any] = given if isinstance(given, dict) else {}
        counts = (_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))
        choices = data.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        choice: dict[str, Any] = first if isinstance(first, dict) else {}
        delta = choice.get("delta")
        content = delta.get("content") if isinstance(delta, dict) else None
        # The chunk with a finish_reason is the last with text: the usage, then [DONE], may
        # follow, and a server that ends there without [DONE] has ended.
        text = content if isinstance(content, str) else ""
        return Piece(text, False, *counts, finished=choice.get("finish_reason") is not None)


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

    def stream(
        self, messages: Sequence[Message], *, deadline: float, max_tokens: int | None = None
    ) -> ChatStream:
        """The inner stream, the whole of it bounded by `deadline` under this one's name."""

        async def pieces(out: ChatStream) -> AsyncGenerator[str, None]:
            loop = asyncio.get_running_loop()
            # Set before the inner deadlines, so it expires first and names itself; each wait
            # for a piece is bounded by the same end (a timeout never spans a yield).
            end = loop.time() + deadline
            inner = stream_of(self.inner, messages, deadline=deadline, max_tokens=max_tokens)
            async with inner:
                while True:
                    try:
                        async with asyncio.timeout_at(end):
                            piece = await anext(inner, None)
                    except TimeoutError:
                        raise BackendUnavailable(
                            f"{self.name}: no answer within {deadline:g} s"
                        ) from None
                    if piece is None:
                        break
                    out.counts_of(inner)
                    yield piece
            out.counts_of(inner)

        return ChatStream(pieces)
