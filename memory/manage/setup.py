"""The structured-output mode each chat server accepts, whether it streams and the context it
takes, learned once and kept in the database, and the schema `doctor` probes a server with (a
reflection's).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import httpx

from memory.backends.context_size import ContextSizes, Source, ask_context
from memory.backends.redact import Secrets, redact
from memory.backends.structured import Mode, Negotiator
from memory.store import Store
from memory.store.tables import structured_output
from memory.write import reflection


def reflection_schema() -> dict[str, Any]:
    """The JSON schema a reflection answers with (what `doctor` probes the server with)."""
    return reflection.json_schema()


async def negotiator(store: Store, *, override: Mode | None) -> Negotiator:
    """The structured-output modes (the override, or those learned so far) and whether each
    server streams, saved when learned."""
    known = {key: Mode(mode) for key, mode in (await structured_output.load(store)).items()}

    async def save(server: str, model: str, mode: Mode) -> None:
        await structured_output.save(store, server, model, mode.value, now=time.time())

    async def save_streaming(server: str, model: str, streams: bool) -> None:
        await structured_output.save_streaming(store, server, model, streams, now=time.time())

    return Negotiator(
        override=override,
        known=known,
        on_learned=save,
        streams=await structured_output.load_streaming(store),
        on_streams=save_streaming,
    )


# The schema that keeps the context each chat server takes.
CONTEXT_SCHEMA = 32


async def context_sizes(store: Store) -> ContextSizes:
    """The context each chat server was learned to take, saved when learned again."""
    known = await learned_contexts(store)

    async def save(server: str, model: str, tokens: int, source: Source) -> None:
        await structured_output.save_context(store, server, model, tokens, source, now=time.time())

    return ContextSizes(known=known, on_learned=save)


async def learned_contexts(store: Store) -> dict[tuple[str, str], tuple[int, Source]]:
    """The context each (server, model) was learned to take, and where it was learned."""
    out: dict[tuple[str, str], tuple[int, Source]] = {}
    for key, (tokens, source) in (await structured_output.load_context(store)).items():
        out[key] = (tokens, "server" if source == "server" else "refusal")
    return out


async def server_context(
    http: httpx.AsyncClient,
    backend: Literal["ollama", "openai"],
    base_url: str,
    model: str,
    *,
    api_key: str | None,
    secrets: Secrets,
) -> int | None:
    """The context this chat server says it takes for the model (None: it says none);
    BackendError when it could not be asked."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return await ask_context(http, backend, base_url, model, headers=headers, secrets=secrets)


async def learned_context(store: Store, server: str, model: str) -> tuple[int, Source] | None:
    """The context this chat server was learned to take for this model (None: not learned)."""
    return (await learned_contexts(store)).get((_server(server), model))


# The schema that keeps the chat servers learned to take one request at a time.
ONE_AT_A_TIME_SCHEMA = 31


async def one_at_a_time(store: Store, server: str, model: str) -> bool:
    """Whether this chat server was learned to take one request at a time."""
    return await structured_output.one_at_a_time(store, _server(server), model)


def on_one_at_a_time(store: Store, server: str, model: str) -> Callable[[], Awaitable[None]]:
    """What keeps it, once a chat server is learned to take one request at a time."""

    async def save() -> None:
        await structured_output.save_one_at_a_time(store, _server(server), model, now=time.time())

    return save


def _server(url: str) -> str:
    """A server as the learned capabilities name it (a password in its URL left out)."""
    return redact(url.rstrip("/"))
