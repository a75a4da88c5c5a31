"""One JSON request to a model server, bounded: the deadline, the body's size, and every failure
turned into the typed errors of memory.errors.

`deadline` bounds the whole call and is the only bound on it: each request carries its own httpx
timeouts, set from the deadline, so a client's shorter read timeout cannot cut a slow reply (the
client's connect timeout is kept when shorter). A body is streamed and abandoned past a cap.
Failures become BackendUnavailable (unreachable, deadline expired, 429, 5xx: retry later),
BackendRefused (a 4xx, or a 5xx whose body says the request itself was refused), or
BackendResponseError (an in-band error, or content that cannot be used: too large, not JSON,
nested too deeply), and nothing else. Their texts carry the server's own message, shortened,
never the request's content, and are redacted (memory.redact): they reach /stats, the logs and
the outbox. Apart from the chat clients (memory.llm) and the embedders (memory.embedders)
because both send their requests through it, and neither reads what an answer means here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from memory.backend_errors import answered_error
from memory.errors import BackendResponseError, BackendUnavailable
from memory.redact import NO_SECRETS, Secrets


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
    async with (
        bounded(url, deadline, secrets),
        http.stream(
            "POST", url, json=payload, headers=headers, timeout=timeouts(http, deadline)
        ) as response,
    ):
        status = response.status_code
        body = await read_capped(response, cap)
    data, problem = decode(body, cap)
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
    try:
        async with asyncio.timeout(deadline):
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


async def read_capped(response: httpx.Response, cap: int) -> bytes | None:
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


def decode(body: bytes | None, cap: int) -> tuple[Any, str]:
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
