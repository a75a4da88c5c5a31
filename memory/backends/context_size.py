"""The context a chat server takes for a model: read where the server says it, or from its
refusal of a prompt too long for it, and kept per (server, model) by `ContextSizes`.

Where each server says it (`ask_context`):

    Ollama              POST /api/show: `model_info["<architecture>.context_length"]`, the
                        context the model was trained for. Écho sends `num_ctx` = [context]
                        context_length with every request, so Ollama's own default num_ctx is
                        never the one used; a larger num_ctx is clamped to the model's (Ollama
                        logs "requested context size too large for model"), so the model's is
                        what limits.
    llama.cpp's server  GET /props: `default_generation_settings.n_ctx` (one slot's share of
                        --ctx-size, what one request may use), or `n_ctx` in newer ones.
    vLLM                GET /v1/models: `max_model_len` of the model.
    llama-cpp-python    nothing: its /v1/models lists ids only (0.3.36). Unknown, until it
                        refuses a prompt too long for it.

A refusal names the context (`refused_context`) in words each server has its own of:

    llama.cpp           "request (600 tokens) exceeds the available context size (512 tokens),
                        try increasing it" (older ones give no number: nothing is learned)
    vLLM                "This model's maximum context length is 512 tokens. However, you
                        requested 600 tokens (...)", or "... is 512 tokens and your request
                        has 600 input tokens", or "... However, your request has 600 input
                        tokens"
    llama-cpp-python    the first of vLLM's ("...; maximum context length is 512 tokens.
                        However, you requested 736 tokens (731 in the messages, 5 in the
                        completion)"), answered 400 to a whole request; a streamed one
                        answers 200 and ends before its first event (see
                        memory.backends.streaming.EmptyStream).

What the server says wins over what it refused at: asked once a process, an answer replaces
the size learned before (a server restarted with another context). A server that says nothing
keeps the size its refusal taught, saved in the database.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import httpx

from memory.backends.http import get_json, post_json
from memory.backends.redact import NO_SECRETS, Secrets, redact
from memory.errors import BackendError, BackendRefused, EchoError

log = logging.getLogger(__name__)

# Below this, a number is no chat model's context (a misread, a test's placeholder): not
# learned. SmolLM2-135M, the smallest model the real tests run, is served with 512.
MIN_CONTEXT = 64
# The largest context believed: 10M tokens (the longest windows served today are 1-2M).
MAX_CONTEXT = 10_000_000
# How long asking a server its context may take: one small JSON answer, read from memory.
ASK_DEADLINE = 5.0
# The largest answer read: Ollama's /api/show carries the model's template and license.
MAX_ANSWER = 1024 * 1024

Source = Literal["server", "refusal"]

_REFUSALS = (
    # llama.cpp (and Ollama's newer runner): "exceeds the available context size (512 tokens)"
    re.compile(r"(?i)exceeds? the available context size \((\d+) tokens?\)"),
    # vLLM, llama-cpp-python, OpenAI: "maximum context length is 512 tokens"
    re.compile(r"(?i)maximum context length is (\d+) tokens?"),
)


def refused_context(text: str) -> int | None:
    """The context a server's refusal says it has (None: the words name none)."""
    for pattern in _REFUSALS:
        found = pattern.search(text)
        if found is not None:
            return plausible(int(found.group(1)))
    return None


def plausible(value: object) -> int | None:
    """`value` when it can be a chat model's context in tokens, else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if MIN_CONTEXT <= value <= MAX_CONTEXT else None
    return None


async def ask_context(
    http: httpx.AsyncClient,
    backend: Literal["ollama", "openai"],
    base_url: str,
    model: str,
    *,
    headers: Mapping[str, str] | None = None,
    deadline: float = ASK_DEADLINE,
    secrets: Secrets = NO_SECRETS,
) -> int | None:
    """The context this server says it takes for `model` (None: it says none). BackendError
    when it could not be asked (down, too slow): then nothing is known of it."""
    base = base_url.rstrip("/")
    if backend == "ollama":
        try:
            shown = await post_json(
                http,
                base + "/api/show",
                {"model": model},
                deadline=deadline,
                cap=MAX_ANSWER,
                secrets=secrets,
            )
        except BackendRefused:
            return None  # a model it does not have, or an Ollama without /api/show
        return _ollama_context(shown)
    unreached: BackendError | None = None
    for path, read in (("/props", _props_context), ("/v1/models", _models_context(model))):
        try:
            data = await get_json(
                http,
                base + path,
                deadline=deadline,
                cap=MAX_ANSWER,
                headers=headers,
                secrets=secrets,
            )
        except BackendRefused:
            continue  # no such route on this server (vLLM and llama-cpp-python have no /props)
        except BackendError as exc:
            unreached = unreached or exc
            continue
        found = read(data)
        if found is not None:
            return found
        unreached = None  # it answered: it says nothing
    if unreached is not None:
        raise unreached
    return None


def _ollama_context(shown: Any) -> int | None:
    info = shown.get("model_info") if isinstance(shown, dict) else None
    if not isinstance(info, dict):
        return None
    architecture = info.get("general.architecture")
    if isinstance(architecture, str):
        return plausible(info.get(f"{architecture}.context_length"))
    return None


def _props_context(props: Any) -> int | None:
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    slot = settings.get("n_ctx") if isinstance(settings, dict) else None
    return plausible(slot) or plausible(props.get("n_ctx"))


def _models_context(model: str) -> Callable[[Any], int | None]:
    def read(listing: Any) -> int | None:
        data = listing.get("data") if isinstance(listing, dict) else None
        models = [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []
        # The model asked for; a server of one model (vLLM started with one) lists it alone.
        named = [m for m in models if m.get("id") == model] or models[:1]
        return plausible(named[0].get("max_model_len")) if named else None

    return read


Ask = Callable[[], Awaitable[int | None]]
Learned = Callable[[str, str, int, Source], Awaitable[None]]


class ContextSizes:
    """The context each (server, model) takes, as far as it is known: loaded from the
    database, asked of each server once a process (`resolve`), learned from a refusal
    (`learn`). Safe at every await: a server is asked by one caller at a time, and the
    callers that arrive meanwhile wait for its answer."""

    def __init__(
        self,
        *,
        known: Mapping[tuple[str, str], tuple[int, Source]] | None = None,
        on_learned: Learned | None = None,
    ) -> None:
        self._known: dict[tuple[str, str], tuple[int, Source]] = dict(known or {})
        self._asked: set[tuple[str, str]] = set()
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._on_learned = on_learned

    def get(self, server: str, model: str) -> tuple[int, Source] | None:
        """The context known for this server and model, and where it was learned."""
        return self._known.get(_key(server, model))

    async def resolve(self, server: str, model: str, ask: Ask) -> int | None:
        """The context of this server and model: asked of the server (`ask`) the first time
        a process needs it, then known; None while nothing says it."""
        key = _key(server, model)
        if key not in self._asked:
            async with self._locks.setdefault(key, asyncio.Lock()):
                if key not in self._asked:
                    await self._ask(server, model, ask)
        known = self._known.get(key)
        return None if known is None else known[0]

    async def _ask(self, server: str, model: str, ask: Ask) -> None:
        try:
            said = await ask()
        except BackendError as exc:
            # Asked again by the next turn: a server that is down says nothing of its context.
            log.debug("context of chat server %s not asked: %s", _key(server, model)[0], exc)
            return
        self._asked.add(_key(server, model))
        if said is not None:
            await self.learn(server, model, said, "server")

    async def learn(self, server: str, model: str, tokens: int, source: Source) -> None:
        """Remember that this server takes `tokens` of context for this model; said in the
        log and saved when it changes."""
        key = _key(server, model)
        if self._known.get(key) == (tokens, source):
            return
        self._known[key] = (tokens, source)
        how = "it says so" if source == "server" else "it refused a longer prompt"
        log.info(
            "chat server %s (model %s) takes %d tokens of context (%s): prompts capped to it",
            key[0],
            key[1],
            tokens,
            how,
        )
        if self._on_learned is None:
            return
        try:
            await self._on_learned(key[0], key[1], tokens, source)
        except EchoError as exc:
            log.warning("context of chat server %s not saved: %s", key[0], exc)


def _key(server: str, model: str) -> tuple[str, str]:
    # Redacted: the key is logged and stored, and a base URL may carry a password.
    return redact(server.rstrip("/")), model
