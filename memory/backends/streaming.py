"""Streamed chat replies: the pieces of text a server sends as the model writes them.

Two wire formats, read by the same bounded loop (`streamed`):

    Ollama      `/api/chat` with "stream": true answers application/x-ndjson: one JSON object
                a line, `message.content` a piece, the last line `done: true` with the token
                counts (`prompt_eval_count`, `eval_count`).
    OpenAI      `/v1/chat/completions` with "stream": true answers text/event-stream: events of
                `data: {...}` lines, `choices[0].delta.content` a piece, `usage` in the last
                one when the server gives it, then `data: [DONE]` (some servers end on the
                chunk with a `finish_reason` instead).

The rules of a whole reply hold over the stream: one deadline for all of it (each read is
bounded by the same end, never by a timeout spanning a yield), MAX_CHAT_BODY bytes in all
(sent and decoded, memory.backends.http.capped_chunks), errors redacted. Lines are split on
bytes, so a line or a UTF-8 character cut between network chunks is whole again before it is
decoded. A stream that ends before its last line or event, or a line that is not JSON, is a
BackendError raised where it happens: the text already yielded stays the caller's.

A stream that ends before its first line or event, or whose connection breaks then, is an
`EmptyStream`: a server that fails a request after answering 200 ends so (llama-cpp-python,
asked to stream a prompt longer than its context, closes the connection), and the client asks
it again whole, once, to read its words.

A server that answers in another media type (application/json: one block) has not streamed: the
block is read as the non-streamed answer is, and `ChatStream.streamed` says so, for the
client to remember (memory.backends.structured.Negotiator keeps it per server).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from memory.backends.error_words import answered_error
from memory.backends.http import ACCEPT_ENCODING, capped_chunks, decode, failures, timeouts
from memory.backends.redact import NO_SECRETS, Secrets
from memory.errors import BackendError, BackendRefused, BackendResponseError, BackendUnavailable

NDJSON = "application/x-ndjson"
EVENT_STREAM = "text/event-stream"
# A refusal about streaming itself (a server or proxy that cannot stream says which parameter:
# "stream", "stream_options", "streaming"), not a proxy's "upstream".
_ABOUT_STREAM = re.compile(r"(?i)\bstream")
# The longest line kept while waiting for its end: a piece is a token or a few, its JSON well
# under a kilobyte; a server that never sends a newline is stopped here, not at MAX_CHAT_BODY.
MAX_LINE_BYTES = 256 * 1024


class EmptyStream(BackendUnavailable):
    """The stream ended before its first line or event: the server said nothing of why."""


class ChatStream:
    """A reply's pieces of text as they arrive (iterate it), then what the server reported:
    the token counts (None when it gave none) and whether it streamed at all (False, known
    with the first piece: it answered in one block, yielded as one piece). Close it
    (`aclose`, or `async with`) when left early: the connection and a chat slot are given
    back then."""

    def __init__(self, pieces: Callable[[ChatStream], AsyncGenerator[str, None]]) -> None:
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.streamed = True
        # The stream ended with its end mark ([DONE]) but no reply said complete: a server that
        # stops a reply when another request comes (llama-cpp-python's, by default) ends so.
        self.cut_short = False
        # The server's tokenizer's count of the messages' texts alone, without their chat
        # template: asked of a server whose stream reported no prompt count (`prompt_tokens`).
        self.counted: int | None = None
        self._pieces = pieces(self)

    def __aiter__(self) -> ChatStream:
        return self

    async def __anext__(self) -> str:
        return await self._pieces.__anext__()

    async def aclose(self) -> None:
        await self._pieces.aclose()

    async def __aenter__(self) -> ChatStream:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def counts_of(self, other: ChatStream) -> None:
        """Take what `other` reported (a wrapper passing an inner stream on)."""
        self.prompt_tokens, self.completion_tokens = other.prompt_tokens, other.completion_tokens
        self.streamed = other.streamed
        self.cut_short = other.cut_short
        self.counted = other.counted


class Lines:
    """Bytes in, whole lines out (without their line end, a CR before the LF dropped), however
    the bytes were cut into chunks."""

    def __init__(self, *, limit: int = MAX_LINE_BYTES) -> None:
        self._rest = bytearray()
        self.limit = limit

    def feed(self, data: bytes) -> list[bytes]:
        """The lines `data` completes; BackendResponseError for a line past the limit."""
        if b"\n" not in data:  # a long line in small chunks is not split again each time
            self._rest += data
            lines: list[bytes] = []
        else:
            *lines, rest = bytes(self._rest + data).split(b"\n")
            self._rest = bytearray(rest)
        if len(self._rest) > self.limit:
            raise BackendResponseError("a line of the answer is too long")
        return [line[:-1] if line.endswith(b"\r") else line for line in lines]

    def close(self) -> bytes:
        """What is left: a last line without its line end (b"" when none)."""
        rest, self._rest = bytes(self._rest), bytearray()
        return rest[:-1] if rest.endswith(b"\r") else rest


class Events:
    """Server-sent event lines in, each event's data out (its `data:` lines joined by newlines)
    when the blank line that ends it arrives; comments and other fields are skipped."""

    def __init__(self) -> None:
        self._data: list[bytes] = []

    def line(self, line: bytes) -> bytes | None:
        """The data of the event this line ends, or None."""
        if not line:
            data, self._data = self._data, []
            return b"\n".join(data) if data else None
        field, colon, value = line.partition(b":")
        if field == b"data" and colon:
            self._data.append(value[1:] if value.startswith(b" ") else value)
        return None


@dataclass(slots=True)
class Piece:
    """What one line or event says: text, whether it is the last, the counts it reports."""

    text: str = ""
    done: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # The reply's text is complete (an OpenAI `finish_reason`): the end of the stream may
    # come next without its [DONE].
    finished: bool = False


Parse = Callable[[Any], Piece]


def _json(line: bytes, url: str, secrets: Secrets) -> Any:
    data, problem = decode(line)
    if data is None:
        raise BackendResponseError(secrets.redact(f"{url}: a line of the answer: {problem}"))
    error = answered_error(url, 200, data, secrets)
    if error is not None:  # an error sent midway ({"error": ...})
        raise error
    return data


async def streamed(
    http: httpx.AsyncClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    deadline: float,
    cap: int,
    parse: Parse,
    block: Callable[[Any], tuple[str, int | None, int | None]],
    out: ChatStream,
    headers: Mapping[str, str] | None = None,
    secrets: Secrets = NO_SECRETS,
) -> AsyncIterator[str]:
    """POST `payload` and yield the reply's pieces as they arrive: `parse` reads each line
    (NDJSON) or event (server-sent events), by the media type answered. An answer of another
    type is one block: `block` reads its JSON (content, counts) and `out.streamed` is False.
    Every failure is a BackendError without `secrets`."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    sent = {**(headers or {}), "Accept-Encoding": ACCEPT_ENCODING}
    async with failures(url, deadline, secrets):
        request = http.build_request(
            "POST", url, json=payload, headers=sent, timeout=timeouts(http, deadline)
        )
        async with asyncio.timeout_at(end):
            response = await http.send(request, stream=True)
        try:
            chunks = capped_chunks(response, cap, end=end, url=url, secrets=secrets)
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if response.status_code >= 400 or kind not in (NDJSON, EVENT_STREAM):
                body = b"".join([chunk async for chunk in chunks])
                data, problem = decode(body)
                error = answered_error(url, response.status_code, data, secrets)
                if error is not None:
                    raise error
                if data is None:
                    raise BackendResponseError(secrets.redact(f"{url}: {problem}"))
                out.streamed = False
                text, out.prompt_tokens, out.completion_tokens = block(data)
                yield text
                return
            finished = started = False
            pieces = _pieces(chunks, kind == EVENT_STREAM, parse, url, secrets)
            async for piece in _started(pieces, url, secrets):
                started = True
                if piece.prompt_tokens is not None or piece.completion_tokens is not None:
                    out.prompt_tokens, out.completion_tokens = (
                        piece.prompt_tokens,
                        piece.completion_tokens,
                    )
                if piece.text:
                    yield piece.text
                finished = finished or piece.finished
                if piece.done:
                    # An event stream's [DONE] after no finish_reason: stopped, not finished.
                    out.cut_short = kind == EVENT_STREAM and not finished
                    return
            if finished:
                return
            if not started:
                raise EmptyStream(secrets.redact(f"{url}: the answer ended before its first event"))
            raise BackendUnavailable(
                secrets.redact(f"{url}: the answer ended before the reply was complete")
            )
        finally:
            await response.aclose()


async def _started(
    pieces: AsyncIterator[Piece], url: str, secrets: Secrets
) -> AsyncIterator[Piece]:
    """The pieces; a connection that breaks before the first is an EmptyStream (llama-cpp-python
    closes it so when it refuses a streamed prompt too long for its context)."""
    first = True
    try:
        async for piece in pieces:
            first = False
            yield piece
    except httpx.TimeoutException:
        raise
    except httpx.HTTPError as exc:
        if not first:
            raise
        reason = f"{type(exc).__name__}: {exc}"
        raise EmptyStream(
            secrets.redact(f"{url}: the answer ended before its first event ({reason})")
        ) from exc


async def _pieces(
    chunks: AsyncIterator[bytes], events: bool, parse: Parse, url: str, secrets: Secrets
) -> AsyncIterator[Piece]:
    lines, sse = Lines(), Events()

    def read(raw: bytes) -> Piece | None:
        if events:
            data = sse.line(raw)
            if data is None:
                return None
            if data.strip() == b"[DONE]":
                return Piece(done=True)
            return parse(_json(data, url, secrets))
        return parse(_json(raw, url, secrets)) if raw.strip() else None

    async for chunk in chunks:
        try:
            complete = lines.feed(chunk)
        except BackendResponseError as exc:
            raise BackendResponseError(secrets.redact(f"{url}: {exc}")) from None
        for raw in complete:
            piece = read(raw)
            if piece is not None:
                yield piece
    last = lines.close()
    piece = read(last) if last else None
    if piece is None and events:
        # The last event, ended without its blank line: the stream's end ends it.
        piece = read(b"")
    if piece is not None:
        yield piece


def about_stream(exc: BackendError, url: str) -> bool:
    """Whether a refusal, or an error answered in band, is about streaming (then the server is
    asked again without it)."""
    if isinstance(exc, BackendRefused):
        return bool(_ABOUT_STREAM.search(exc.detail))
    return isinstance(exc, BackendResponseError) and bool(
        _ABOUT_STREAM.search(str(exc).removeprefix(url))
    )
