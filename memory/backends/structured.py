"""Structured output: how a chat server is asked for JSON that follows a schema, and which way
each server accepts, learned from its answer to the first structured request.

Modes, the most faithful first (each server tries them in this order until one is accepted):

    json_schema         response_format {"type": "json_schema", "json_schema": {name, schema}}
                        (OpenAI, vLLM, LM Studio, llama.cpp's llama-server; Ollama's `format`)
    json_object_schema  response_format {"type": "json_object", "schema": ...} (llama-cpp-python)
    json_object         response_format {"type": "json_object"}; the schema is in the prompt
    none                no JSON mode; the schema is in the prompt, the tolerant parser does the rest

A refusal (memory.errors.BackendRefused) that names the format (response_format, json_schema,
grammar, schema...) moves on to the next mode; any other error is the caller's. The mode
learned is kept per (server, model) by a `Negotiator`, which the runtime loads from and saves
to the database; `[llm] structured_output` overrides it. Schemas are sent grammar-friendly:
without limits on lengths and counts, which grammar compilers expand into one rule per
character (llama-cpp-python crashed on a maxLength of 4,000; llama-server refuses big ones with
"failed to parse grammar"). The parser enforces those limits instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar

from memory.backends.redact import redact
from memory.errors import BackendRefused, BackendUnavailable, EchoError

log = logging.getLogger(__name__)

T = TypeVar("T")


class Mode(StrEnum):
    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object_schema"
    JSON_OBJECT = "json_object"
    NONE = "none"


# What an OpenAI-compatible server is offered, in order; Ollama's `format` takes a schema or
# "json", so it has no json_object_schema.
OPENAI_MODES = (Mode.JSON_SCHEMA, Mode.JSON_OBJECT_SCHEMA, Mode.JSON_OBJECT, Mode.NONE)
OLLAMA_MODES = (Mode.JSON_SCHEMA, Mode.JSON_OBJECT, Mode.NONE)

# Keywords that bound lengths and counts: grammar compilers unroll them (a maxLength of 4,000
# is a rule nested 4,000 deep in llama.cpp's json-schema-to-grammar).
LIMIT_KEYWORDS = frozenset(
    {
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maxProperties",
        "minProperties",
        "maxContains",
        "minContains",
    }
)
# Keywords whose values are maps of names to schemas (a property may be called "title").
_NAMED_SCHEMAS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
# Keywords whose values are data, not schemas.
_DATA = frozenset({"default", "enum", "const", "examples"})

# A refusal about the structured output itself, as servers word it: llama-cpp-python
# ("response_format.type: Input should be 'text' or 'json_object'"), llama-server ("failed to
# parse grammar", "response_format type must be one of ..."), OpenAI ("Invalid schema for
# response_format"), an old Ollama ("invalid format: expected \"json\" or a JSON schema").
_ABOUT_FORMAT = re.compile(r"(?i)response_format|json_schema|json_object|schema|grammar|\bformat\b")

SCHEMA_INSTRUCTION = "Answer with one JSON object that follows this JSON schema:\n"


def grammar_friendly(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return `schema` without limits on lengths and counts, and without titles, at any depth."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in LIMIT_KEYWORDS or key == "title":
                continue
            if key in _NAMED_SCHEMAS and isinstance(value, dict):
                out[key] = {name: walk(sub) for name, sub in value.items()}
            elif key in _DATA:
                out[key] = value
            else:
                out[key] = walk(value)
        return out

    result: dict[str, Any] = walk(dict(schema))
    return result


def response_format(mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The OpenAI-compatible `response_format` of a mode (None: none is sent)."""
    if mode is Mode.JSON_SCHEMA:
        return {"type": "json_schema", "json_schema": {"name": "reflection", "schema": schema}}
    if mode is Mode.JSON_OBJECT_SCHEMA:
        return {"type": "json_object", "schema": schema}
    if mode is Mode.JSON_OBJECT:
        return {"type": "json_object"}
    return None


def ollama_format(mode: Mode, schema: Mapping[str, Any]) -> dict[str, Any] | str | None:
    """Ollama's `format` of a mode: the schema, "json", or nothing."""
    if mode in (Mode.JSON_SCHEMA, Mode.JSON_OBJECT_SCHEMA):
        return dict(schema)
    return "json" if mode is Mode.JSON_OBJECT else None


def prompted(
    mode: Mode, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The messages, with the schema written into the system message when the mode does not
    send it (json_object, none)."""
    out = [dict(m) for m in messages]
    if mode not in (Mode.JSON_OBJECT, Mode.NONE):
        return out
    text = SCHEMA_INSTRUCTION + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    # Appended to the first system message, not added as a second one: several chat templates
    # refuse a system message anywhere but first.
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content', '')}\n\n{text}"
    else:
        out.insert(0, {"role": "system", "content": text})
    return out


def about_format(exc: BackendRefused) -> bool:
    """Whether a refusal is about the structured output (then the next mode may be accepted)."""
    return bool(_ABOUT_FORMAT.search(exc.detail))


Learned = Callable[[str, str, Mode], Awaitable[None]]
StreamsLearned = Callable[[str, str, bool], Awaitable[None]]
SightLearned = Callable[[str, str, bool], Awaitable[None]]
Attempt = Callable[[Mode, float], Awaitable[T]]


class Negotiator:
    """The structured-output mode of each (server, model): the override, or learned once from
    the server's answers and then sent at once.

    Safe at every await: a server's modes are probed by one request at a time (`_locks`);
    the structured requests that arrive meanwhile wait for the answer within their deadline,
    then send the mode learned. Requests without a schema never wait.

    It also keeps whether each server streams a reply (memory.backends.streaming), learned
    from its first answer to a streamed request: a server that refuses to stream or answers
    in one block is asked whole from then on. Turns that start before it is known each ask
    to stream (one refused request each at most, once: the answer is saved).

    And whether each server's model sees images (memory.backends.vision), learned from what
    the server says of the model, or from its answer to the first request with a picture.
    """

    def __init__(
        self,
        *,
        override: Mode | None = None,
        known: Mapping[tuple[str, str], Mode] | None = None,
        on_learned: Learned | None = None,
        streams: Mapping[tuple[str, str], bool] | None = None,
        on_streams: StreamsLearned | None = None,
        sight: Mapping[tuple[str, str], bool] | None = None,
        on_sight: SightLearned | None = None,
    ) -> None:
        self.override = override
        self._known: dict[tuple[str, str], Mode] = dict(known or {})
        self._refused: dict[tuple[str, str], dict[Mode, str]] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._on_learned = on_learned
        self._streams: dict[tuple[str, str], bool] = dict(streams or {})
        self._on_streams = on_streams
        self._sight: dict[tuple[str, str], bool] = dict(sight or {})
        self._on_sight = on_sight

    def sees(self, server: str, model: str) -> bool | None:
        """Whether this server's model sees images (None: not learned yet)."""
        return self._sight.get(_key(server, model))

    async def learn_sight(self, server: str, model: str, sees: bool, how: str) -> None:
        """Remember whether this server's model sees images (`how`: what said it, for the
        log); saved when it changes."""
        key = _key(server, model)
        if self._sight.get(key) is sees:
            return
        self._sight[key] = sees
        said = "sees images" if sees else "does not see images"
        log.info("chat server %s (model %s) %s (%s)", key[0], key[1], said, how)
        if self._on_sight is None:
            return
        try:
            await self._on_sight(key[0], key[1], sees)
        except EchoError as exc:
            log.warning("whether %s sees images was not saved: %s", key[0], exc)

    def streams(self, server: str, model: str) -> bool | None:
        """Whether this server streams replies (None: not learned yet)."""
        return self._streams.get(_key(server, model))

    async def learn_streams(self, server: str, model: str, streams: bool) -> None:
        """Remember whether this server streams; saved when it changes."""
        key = _key(server, model)
        if self._streams.get(key) is streams:
            return
        self._streams[key] = streams
        said = "streams its replies" if streams else "answers whole (does not stream)"
        log.info("chat server %s (model %s) %s", key[0], key[1], said)
        if self._on_streams is None:
            return
        try:
            await self._on_streams(key[0], key[1], streams)
        except EchoError as exc:
            log.warning("whether %s streams was not saved: %s", key[0], exc)

    def mode(self, server: str, model: str) -> Mode | None:
        """The mode a structured request to this server sends (None: not learned yet)."""
        return self.override or self._known.get(_key(server, model))

    def refusals(self, server: str, model: str) -> dict[Mode, str]:
        """The modes this server refused since start-up, with its own words."""
        return dict(self._refused.get(_key(server, model), {}))

    async def send(
        self,
        server: str,
        model: str,
        modes: Sequence[Mode],
        attempt: Attempt[T],
        *,
        deadline: float,
    ) -> T:
        """Run `attempt(mode, seconds_left)` with the mode this server accepts, learning it
        from the refusals of the others when it is not known yet."""
        if self.override is not None:
            return await attempt(self.override, deadline)
        key = _key(server, model)
        loop = asyncio.get_running_loop()
        end = loop.time() + deadline
        tried: set[Mode] = set()
        learned = self._known.get(key)
        if learned is not None:
            try:
                return await attempt(learned, deadline)
            except BackendRefused as exc:
                if not about_format(exc) or learned is modes[-1]:
                    raise
                self._note_refusal(key, learned, exc)
                tried.add(learned)
                if self._known.get(key) is learned:
                    del self._known[key]  # the server changed: learn it again
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with asyncio.timeout(max(0.0, end - loop.time())):
                await lock.acquire()
        except TimeoutError:
            raise BackendUnavailable(
                redact(
                    f"{server}: no answer within {deadline:g} s (waiting for the server's "
                    "structured-output mode to be learned)"
                )
            ) from None
        try:
            return await self._negotiate(key, modes, attempt, tried, end)
        finally:
            lock.release()

    async def _negotiate(
        self,
        key: tuple[str, str],
        modes: Sequence[Mode],
        attempt: Attempt[T],
        tried: set[Mode],
        end: float,
    ) -> T:
        loop = asyncio.get_running_loop()
        learned = self._known.get(key)
        if learned is not None and learned not in tried:
            # Learned by the request this one waited behind.
            return await attempt(learned, max(0.001, end - loop.time()))
        candidates = [m for m in modes if m not in tried]
        for index, mode in enumerate(candidates):
            try:
                result = await attempt(mode, max(0.001, end - loop.time()))
            except BackendRefused as exc:
                last = index == len(candidates) - 1
                if last or mode is Mode.NONE or not about_format(exc):
                    raise
                self._note_refusal(key, mode, exc)
                log.warning(
                    "chat server %s (model %s) refused structured output %s (%s): trying %s",
                    key[0],
                    key[1],
                    mode,
                    exc.detail,
                    candidates[index + 1],
                )
                continue
            await self._learn(key, mode)
            return result
        raise AssertionError("no structured-output mode to try")  # modes is never empty

    def _note_refusal(self, key: tuple[str, str], mode: Mode, exc: BackendRefused) -> None:
        self._refused.setdefault(key, {})[mode] = exc.detail

    async def _learn(self, key: tuple[str, str], mode: Mode) -> None:
        if self._known.get(key) is mode:
            return
        self._known[key] = mode
        log.info("chat server %s (model %s) accepts structured output %s", key[0], key[1], mode)
        if self._on_learned is None:
            return
        try:
            await self._on_learned(key[0], key[1], mode)
        except EchoError as exc:
            # Kept in memory all the same: only the next start-up learns it again.
            log.warning("structured-output mode of %s not saved: %s", key[0], exc)


def _key(server: str, model: str) -> tuple[str, str]:
    # Redacted: the key is logged and stored, and a base URL may carry a password.
    return redact(server.rstrip("/")), model
