"""A real HTTP server on loopback that speaks the Ollama API, scripted by each test.

Endpoints: /api/chat, /api/embed, /api/tags, /api/version, /api/show (its `model_info` holds
`llama.context_length` = `trained_context`, as Ollama's does).

Each endpoint has a behaviour that a test sets: "ok", "hang", "slow" (delay then ok), "500",
"badjson", "error" ({"error": ...}), "drip" (headers at once, then the body one byte at a
time). Every request is recorded.
A request with "stream": true is answered in one block unless `stream` (a StreamScript) says
to stream it, as NDJSON lines, at its pace.

Malformed answers (status 200), shaped for the endpoint:
"huge_int"          a 5,000-digit integer where a number goes (past Python's int parsing limit)
"long_int"          a 400-digit integer where a number goes (parses; overflows a float, SQLite)
"deep"              an array nested 100,000 deep
"float32_overflow"  an embedding holding 1e39 (finite as float64, infinite as float32)
"wrong_dim"         embeddings of half the usual dimension
"not_list"          the right keys holding the wrong shapes
"per_token"         an embedding per token of each text (a server that does not pool)
"huge_body"         a valid-looking start, then 1 MiB chunks up to 1 GiB, no declared length
                    (`body_bytes_sent` says how much went out before the client hung up)
"huge_length"       a declared Content-Length of 1 TiB, a few bytes, then nothing
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

from tests.fakes.loopback import serve
from tests.fakes.streams import StreamScript

DIM = 64
HUGE_INT = "9" * 5_000
LONG_INT = "9" * 400
HUGE_BODY_CHUNK = 1 << 20
HUGE_BODY_LIMIT = 1 << 30


def fake_vector(text: str) -> list[float]:
    """A deterministic embedding: the sum of one random vector per word (shared words => close)."""
    total = np.zeros(DIM, dtype=np.float64)
    for word in text.casefold().split():
        word = word.strip(".,;:!?'\"")
        if not word:
            continue
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        total += np.random.default_rng(seed).standard_normal(DIM)
    if not total.any():
        total[0] = 1.0
    return [float(x) for x in total]


@dataclass
class Chaos:
    """Random latency and random 500s on every chat and embed call, from a seeded generator."""

    seed: int
    max_delay: float = 0.05
    failure_rate: float = 0.1
    rng: random.Random = field(init=False)
    failures: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)


@dataclass
class Behaviour:
    mode: str = "ok"
    delay: float = 0.0


@dataclass
class FakeOllama:
    url: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    behaviours: dict[str, Behaviour] = field(default_factory=dict)
    chat_replies: list[str] = field(default_factory=list)
    chat_reply: Callable[[dict[str, Any]], str] = lambda payload: "D'accord."
    # The "tokenizer": four characters a token, four tokens of template per message.
    prompt_tokens: Callable[[list[dict[str, str]]], int | None] = lambda messages: sum(
        len(m["content"]) // 4 + 4 for m in messages
    )
    models: list[str] = field(default_factory=lambda: ["llama3.1:8b", "nomic-embed-text"])
    released: asyncio.Event = field(default_factory=asyncio.Event)
    body_bytes_sent: int = 0
    chaos: Chaos | None = None
    # Awaited before a chat call is answered: a test holds a call there while it acts.
    pause: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    # How a streamed request is answered (by default: in one block, as a server that cannot).
    stream: StreamScript = field(default_factory=StreamScript)
    # llama3.1's, as /api/show says it (None: a model_info without it).
    trained_context: int | None = 131072

    def set(self, endpoint: str, mode: str, delay: float = 0.0) -> None:
        self.behaviours[endpoint] = Behaviour(mode, delay)

    def count(self, endpoint: str) -> int:
        return sum(1 for path, _ in self.calls if path == endpoint)

    async def show(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/api/show", payload))
        info: dict[str, Any] = {"general.architecture": "llama", "llama.block_count": 32}
        if self.trained_context is not None:
            info["llama.context_length"] = self.trained_context
        details = {"format": "gguf", "family": "llama", "parameter_size": "8.0B"}
        return web.json_response({"parameters": "", "details": details, "model_info": info})

    def embedded_texts(self) -> list[str]:
        return [t for path, p in self.calls if path == "/api/embed" for t in p.get("input", [])]

    async def _misbehave(self, endpoint: str, request: web.Request) -> web.StreamResponse | None:
        if self.chaos is not None:
            delay, fail = self.chaos.rng.uniform(0, self.chaos.max_delay), self.chaos.rng.random()
            await asyncio.sleep(delay)
            if fail < self.chaos.failure_rate:
                self.chaos.failures += 1
                return web.json_response({"error": "chaos"}, status=500)
        behaviour = self.behaviours.get(endpoint, Behaviour())
        if behaviour.mode == "hang":
            await self.released.wait()
            return web.json_response({"error": "released"}, status=503)
        if behaviour.mode == "slow":
            await asyncio.sleep(behaviour.delay)
        if behaviour.mode == "500":
            return web.json_response({"error": "model crashed"}, status=500)
        if behaviour.mode == "error":
            return web.json_response({"error": "model 'x' not found"}, status=404)
        if behaviour.mode == "badjson":
            return web.Response(text="{not json", content_type="application/json")
        if behaviour.mode == "drip":
            response = web.StreamResponse()
            await response.prepare(request)
            for byte in b'{"embeddings": [[0.1, 0.2]]}':
                await response.write(bytes([byte]))
                await asyncio.sleep(behaviour.delay or 1.0)
            return response
        if behaviour.mode == "huge_body":
            return await self._huge_body(endpoint, request)
        if behaviour.mode == "huge_length":
            response = web.StreamResponse(headers={"Content-Length": str(1 << 40)})
            await response.prepare(request)
            await response.write(b'{"embeddings": [[')
            await self.released.wait()
            return response
        body = _malformed(endpoint, behaviour.mode)
        if body is not None:
            return web.Response(body=body.encode(), content_type="application/json")
        return None

    async def _huge_body(self, endpoint: str, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        start = '{"embeddings": [[' if endpoint == "/api/embed" else '{"message": {"content": "'
        filler = ("0.5, " if endpoint == "/api/embed" else "ha ") * (HUGE_BODY_CHUNK // 5)
        try:
            await response.write(start.encode())
            while self.body_bytes_sent < HUGE_BODY_LIMIT:
                await response.write(filler.encode())
                self.body_bytes_sent += len(filler)
        except ConnectionError:
            pass  # the client stopped reading: what this behaviour is for
        return response

    async def embed(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/api/embed", payload))
        failure = await self._misbehave("/api/embed", request)
        if failure is not None:
            return failure
        inputs = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
        wrong = self.behaviours.get("/api/embed", Behaviour()).mode == "wrong_dim"
        dim = DIM // 2 if wrong else DIM
        return web.json_response(
            {"model": payload["model"], "embeddings": [fake_vector(t)[:dim] for t in inputs]}
        )

    async def chat(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/api/chat", payload))
        failure = await self._misbehave("/api/chat", request)
        if failure is not None:
            return failure
        if self.pause is not None:
            await self.pause(payload)
        if payload.get("stream") is True and self.stream.refuse:
            return web.json_response({"error": "stream: not supported here"}, status=400)
        content = self.chat_replies.pop(0) if self.chat_replies else self.chat_reply(payload)
        if payload.get("stream") is True and self.stream.on:
            return await self._streamed(request, payload, content)
        return web.json_response(
            {
                "model": payload["model"],
                "message": {"role": "assistant", "content": content},
                "done": True,
                "prompt_eval_count": self.prompt_tokens(payload["messages"]),
                "eval_count": len(content) // 4,
            }
        )

    async def _streamed(
        self, request: web.Request, payload: dict[str, Any], content: str
    ) -> web.StreamResponse:
        def line(text: str) -> bytes:
            message = {"role": "assistant", "content": text}
            body = {"model": payload["model"], "message": message, "done": False}
            return json.dumps(body).encode() + b"\n"

        done = {
            "model": payload["model"], "message": {"role": "assistant", "content": ""},
            "done": True, "done_reason": "stop",
            "prompt_eval_count": self.prompt_tokens(payload["messages"]),
            "eval_count": len(content) // 4,
        }  # fmt: skip
        lines = [line(piece) for piece in self.stream.pieces(content)]
        last = [json.dumps(done).encode() + b"\n"]
        return await self.stream.send(request, "application/x-ndjson", lines, last, line)

    async def tags(self, request: web.Request) -> web.StreamResponse:
        self.calls.append(("/api/tags", {}))
        return web.json_response({"models": [{"name": m} for m in self.models]})

    async def version(self, request: web.Request) -> web.StreamResponse:
        self.calls.append(("/api/version", {}))
        return web.json_response({"version": "0.12.0"})


def _malformed(endpoint: str, mode: str) -> str | None:
    """The body of a malformed answer for this endpoint, or None when `mode` is not one."""
    embed = endpoint == "/api/embed"
    if mode == "huge_int":
        return (
            f'{{"embeddings": [[{HUGE_INT}, 0.5]]}}'
            if embed
            else f'{{"message": {{"content": "ok"}}, "eval_count": {HUGE_INT}}}'
        )
    if mode == "long_int":
        return (
            f'{{"embeddings": [[{LONG_INT}, 0.5]]}}'
            if embed
            else f'{{"message": {{"role": "assistant", "content": "Long live the count."}},'
            f' "prompt_eval_count": {LONG_INT}, "eval_count": -{LONG_INT}}}'
        )
    if mode == "deep":
        key = "embeddings" if embed else "message"
        return f'{{"{key}": ' + "[" * 100_000 + "]" * 100_000 + "}"
    if mode == "float32_overflow":
        return '{"embeddings": [[1e39' + ", 0.5" * (DIM - 1) + "]]}"
    if mode == "wrong_dim":
        return None  # answered by the endpoint itself, from the texts sent
    if mode == "not_list":
        return '{"embeddings": {"0": [0.5]}}' if embed else '{"message": ["not", "an", "object"]}'
    if mode == "per_token" and embed:
        token = "[" + ", ".join(["0.5"] * DIM) + "]"
        return '{"embeddings": [[' + ", ".join([token] * 3) + "]]}"
    return None


@asynccontextmanager
async def serve_fake_ollama() -> AsyncIterator[FakeOllama]:
    """Start the fake server on 127.0.0.1 (a free port) in the running loop."""
    fake = FakeOllama()
    app = web.Application()
    app.router.add_post("/api/embed", fake.embed)
    app.router.add_post("/api/chat", fake.chat)
    app.router.add_get("/api/tags", fake.tags)
    app.router.add_get("/api/version", fake.version)
    app.router.add_post("/api/show", fake.show)
    async with serve(app) as fake.url:
        try:
            yield fake
        finally:
            fake.released.set()
