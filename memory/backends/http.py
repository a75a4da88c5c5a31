"""One JSON request to a model server, bounded: the deadline, the body's size, and every failure
turned into the typed errors of memory.errors.

`deadline` bounds the whole call and is the only bound on it: each request carries its own httpx
timeouts, set from the deadline, so a client's shorter read timeout cannot cut a slow reply (the
client's connect timeout is kept when shorter). A body is streamed and abandoned past a cap, the
cap counted on what it decodes to: a compressed body (one gzip or deflate coding, the only ones
asked for) is inflated here a bounded step at a time, never by httpx, whose decoders inflate a
980-byte chunk to a gigabyte at once; stacked or other codings are refused.
Failures become BackendUnavailable (unreachable, deadline expired, 429, 5xx: retry later),
BackendRefused (a 4xx, or a 5xx whose body says the request itself was refused), or
BackendResponseError (an in-band error, or content that cannot be used: too large, not JSON,
nested too deeply), and nothing else. Their texts carry the server's own message, shortened,
never the request's content, and are redacted (memory.backends.redact): they reach /stats,
the logs and the outbox. Apart from the chat clients (memory.backends.chat) and the embedders
(memory.backends.embedders) because both send their requests through it, and neither reads
what an answer means here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import zlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from memory.backends.error_words import answered_error
from memory.backends.redact import NO_SECRETS, Secrets
from memory.errors import BackendResponseError, BackendUnavailable

# What a request accepts: gzip and deflate, inflated here under the cap (see read_capped); not br
# or zstd, which httpx would ask for once their packages are installed.
ACCEPT_ENCODING = "gzip, deflate"
# What one call to the inflater may write: small beside any cap, large enough that a 4 MB
# answer takes 64 calls.
INFLATE_STEP = 64 * 1024
# zlib's window bits: a gzip header, a zlib header (what "deflate" means; a raw stream, which
# some servers send instead, is tried when that header is missing).
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


async def post_json(
    http: httpx.AsyncClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    deadline: float,
    cap: int,
    headers: Mapping[str, str] | None = None,
    secrets: Secrets = NO_SECRETS,
) -> Any:
    """POST `payload` and return the JSON answer; every failure is a BackendError whose text
    carries no credential (none of `secrets` either)."""
    return await _json_answer(http, "POST", url, payload, deadline, cap, headers, secrets)


async def get_json(
    http: httpx.AsyncClient,
    url: str,
    *,
    deadline: float,
    cap: int,
    headers: Mapping[str, str] | None = None,
    secrets: Secrets = NO_SECRETS,
) -> Any:
    """GET `url` and return the JSON answer, bounded and its failures typed as `post_json`'s."""
    return await _json_answer(http, "GET", url, None, deadline, cap, headers, secrets)


async def _json_answer(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    payload: Mapping[str, Any] | None,
    deadline: float,
    cap: int,
    headers: Mapping[str, str] | None,
    secrets: Secrets,
) -> Any:
    sent = {**(headers or {}), "Accept-Encoding": ACCEPT_ENCODING}
    async with (
        bounded(url, deadline, secrets),
        http.stream(
            method, url, json=payload, headers=sent, timeout=timeouts(http, deadline)
        ) as response,
    ):
        status = response.status_code
        body = await read_capped(response, cap)
    data, problem = decode(body)
    error = answered_error(url, status, data, secrets)
    if error is not None:
        raise error
    if data is None:
        raise BackendResponseError(secrets.redact(f"{url}: {problem}"))
    return data


@contextlib.asynccontextmanager
async def bounded(url: str, deadline: float, secrets: Secrets = NO_SECRETS) -> AsyncIterator[None]:
    """Bound the block by `deadline`; turn what the transport raises (unreachable, too slow,
    a bad header) into BackendUnavailable naming `url`, without `secrets`."""
    async with failures(url, deadline, secrets), asyncio.timeout(deadline):
        yield


@contextlib.asynccontextmanager
async def failures(url: str, deadline: float, secrets: Secrets = NO_SECRETS) -> AsyncIterator[None]:
    """Turn what the transport raises in the block, and a TimeoutError (the `deadline` of
    seconds expired), into BackendUnavailable naming `url`, without `secrets`. Unlike
    `bounded`, it sets no timeout: a streamed body bounds each read itself (an asyncio timeout
    must not span the yields of a generator)."""
    try:
        yield
    except TimeoutError:
        raise BackendUnavailable(
            secrets.redact(f"{url}: no answer within {deadline:g} s")
        ) from None
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
        # UnicodeError: a header value outside ASCII (an API key pasted with a stray character).
        raise BackendUnavailable(secrets.redact(f"{url}: {type(exc).__name__}: {exc}")) from exc


def timeouts(http: httpx.AsyncClient, deadline: float) -> httpx.Timeout:
    """A request's own httpx timeouts: the deadline, so that the client's shorter read, write
    or pool timeouts never cut it (a 70 s reply on a CPU against a 30 s read timeout); the
    client's connect timeout when it is shorter (a server that is down is said at once)."""
    connect = http.timeout.connect
    return httpx.Timeout(deadline, connect=deadline if connect is None else min(connect, deadline))


async def read_capped(response: httpx.Response, cap: int) -> bytes | str:
    """Return the body decoded, or why it cannot be used as soon as that is known: it passes
    `cap` bytes (sent or decoded), its coding is stacked or not gzip or deflate, or it is
    corrupt. Memory holds at most `cap` bytes of it, whatever it inflates to."""
    too_large = f"the answer is larger than {cap // (1024 * 1024)} MB"
    declared = response.headers.get("content-length", "")
    # Lengths compared as digit strings first: int() of a 5,000-digit one raises ValueError.
    digits = declared.isascii() and declared.isdigit()
    if digits and (len(declared) > len(str(cap)) or int(declared) > cap):
        return too_large
    if response.is_stream_consumed:
        # Built whole in memory (a mock transport): httpx has already read and decoded it.
        return response.content if len(response.content) <= cap else too_large
    codings = [
        c.strip().lower()
        for c in response.headers.get_list("content-encoding", split_commas=True)
        if c.strip().lower() not in ("", "identity")
    ]
    if len(codings) > 1 or (codings and codings[0] not in _WBITS):
        shown = ", ".join(codings)[:60]
        return f"the answer is encoded as {shown!r} (only one gzip or deflate coding is read)"
    inflater = zlib.decompressobj(_WBITS[codings[0]]) if codings else None
    sent = 0
    body = bytearray()
    # Raw: httpx's decoders would inflate each chunk whole before the cap is looked at.
    async for chunk in response.aiter_raw():
        sent += len(chunk)
        if sent > cap:
            return too_large  # leaving the stream closes the connection: the rest is never read
        if inflater is None:
            body += chunk
        else:
            try:
                raw = sent == len(chunk) and codings[0] == "deflate"
                inflater = _inflate(inflater, chunk, body, cap + 1, raw=raw)
            except zlib.error:
                return f"the answer is not valid {codings[0]}"
        if len(body) > cap:
            return too_large
    if inflater is not None:
        # All that was sent is consumed (what a cap held back returned above): what is left
        # inside the inflater is at most its window.
        body += inflater.flush()
        if len(body) > cap:
            return too_large
    return bytes(body)


async def capped_chunks(
    response: httpx.Response, cap: int, *, end: float, url: str, secrets: Secrets = NO_SECRETS
) -> AsyncIterator[bytes]:
    """Yield the body decoded, chunk by chunk as it arrives, each read bounded by the loop
    time `end` (TimeoutError past it); BackendResponseError as soon as it passes `cap` bytes
    (sent or decoded) or its coding cannot be read, as `read_capped` decides. Memory holds one
    chunk at a time, at most an INFLATE_STEP-bounded expansion of it."""

    def unusable(problem: str) -> BackendResponseError:
        return BackendResponseError(secrets.redact(f"{url}: {problem}"))

    too_large = f"the answer is larger than {cap // (1024 * 1024)} MB"
    declared = response.headers.get("content-length", "")
    if (
        declared.isascii()
        and declared.isdigit()
        and (len(declared) > len(str(cap)) or int(declared) > cap)
    ):
        raise unusable(too_large)
    if response.is_stream_consumed:  # built whole in memory (a mock transport)
        if len(response.content) > cap:
            raise unusable(too_large)
        if response.content:
            yield response.content
        return
    codings = [
        c.strip().lower()
        for c in response.headers.get_list("content-encoding", split_commas=True)
        if c.strip().lower() not in ("", "identity")
    ]
    if len(codings) > 1 or (codings and codings[0] not in _WBITS):
        shown = ", ".join(codings)[:60]
        raise unusable(
            f"the answer is encoded as {shown!r} (only one gzip or deflate coding is read)"
        )
    inflater = zlib.decompressobj(_WBITS[codings[0]]) if codings else None
    sent = decoded = 0
    raw = response.aiter_raw()
    while True:
        async with asyncio.timeout_at(end):
            chunk = await anext(raw, None)
        if chunk is None:
            break
        sent += len(chunk)
        if sent > cap:
            raise unusable(too_large)  # the caller leaving the stream closes the connection
        if inflater is None:
            out = bytearray(chunk)
        else:
            out = bytearray()
            try:
                first = sent == len(chunk) and codings[0] == "deflate"
                inflater = _inflate(inflater, chunk, out, cap + 1 - decoded, raw=first)
            except zlib.error:
                raise unusable(f"the answer is not valid {codings[0]}") from None
        decoded += len(out)
        if decoded > cap:
            raise unusable(too_large)
        if out:
            yield bytes(out)
    if inflater is not None:
        rest = inflater.flush()
        if decoded + len(rest) > cap:
            raise unusable(too_large)
        if rest:
            yield rest


def _inflate(inflater: Any, chunk: bytes, body: bytearray, limit: int, *, raw: bool) -> Any:
    """Inflate `chunk` onto `body`, stopping once `body` holds `limit` bytes (the rest of the
    chunk is never expanded); return the inflater to go on with (`raw`: one for a headerless
    stream when this one's header is wrong)."""
    inflated = len(body)
    try:
        _steps(inflater, chunk, body, limit)
        return inflater
    except zlib.error:
        if not raw or len(body) > inflated:  # a header that was read is not missing
            raise
    # The first chunk of a "deflate" sent as a raw stream, without the zlib header it calls for.
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    _steps(inflater, chunk, body, limit)
    return inflater


def _steps(inflater: Any, chunk: bytes, body: bytearray, limit: int) -> None:
    # INFLATE_STEP at a time: what a step writes is appended at once, so a chunk is never held
    # twice at the size of the cap.
    pending = chunk
    while pending and len(body) < limit:
        if inflater.eof:
            # Bytes after the end of the stream (trailing bytes, a gzip's second member): a
            # stopped inflater writes nothing and keeps them as its unconsumed tail, so this
            # loop would spin for ever, the loop blocked, its unused_data growing each turn.
            raise zlib.error("data after the end of the compressed stream")
        body += inflater.decompress(pending, min(INFLATE_STEP, limit - len(body)))
        pending = inflater.unused_data if inflater.eof else inflater.unconsumed_tail


def decode(body: bytes | str) -> tuple[Any, str]:
    """Return the parsed JSON (None when unusable) and, when unusable, why."""
    if isinstance(body, str):
        return None, body
    if not body:
        return None, "the answer is empty"
    try:
        return json.loads(body), ""
    except ValueError:  # not JSON, not UTF-8, or an integer longer than Python converts
        return None, "the answer is not JSON"
    except RecursionError:
        return None, "the answer is JSON nested too deeply"
