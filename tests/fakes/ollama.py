"""A real HTTP server on loopback that speaks the Ollama API, scripted by each test.

Endpoints: /api/chat, /api/embed, /api/tags, /api/version. Each endpoint has a behaviour that a
test sets: "ok", "hang", "slow" (delay then ok), "500", "badjson", "error" ({"error": ...}),
"drip" (headers at once, then the body one byte at a time). Every request is recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

DIM = 64


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

    def set(self, endpoint: str, mode: str, delay: float = 0.0) -> None:
        self.behaviours[endpoint] = Behaviour(mode, delay)

    def count(self, endpoint: str) -> int:
        return sum(1 for path, _ in self.calls if path == endpoint)

    def embedded_texts(self) -> list[str]:
        return [t for path, p in self.calls if path == "/api/embed" for t in p.get("input", [])]

    async def _misbehave(self, endpoint: str, request: web.Request) -> web.StreamResponse | None:
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
        return None

    async def embed(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/api/embed", payload))
        failure = await self._misbehave("/api/embed", request)
        if failure is not None:
            return failure
        inputs = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
        return web.json_response(
            {"model": payload["model"], "embeddings": [fake_vector(t) for t in inputs]}
        )

    async def chat(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.calls.append(("/api/chat", payload))
        failure = await self._misbehave("/api/chat", request)
        if failure is not None:
            return failure
        content = self.chat_replies.pop(0) if self.chat_replies else self.chat_reply(payload)
        return web.json_response(
            {
                "model": payload["model"],
                "message": {"role": "assistant", "content": content},
                "done": True,
                "prompt_eval_count": self.prompt_tokens(payload["messages"]),
                "eval_count": len(content) // 4,
            }
        )

    async def tags(self, request: web.Request) -> web.StreamResponse:
        self.calls.append(("/api/tags", {}))
        return web.json_response({"models": [{"name": m} for m in self.models]})

    async def version(self, request: web.Request) -> web.StreamResponse:
        self.calls.append(("/api/version", {}))
        return web.json_response({"version": "0.12.0"})


@asynccontextmanager
async def serve_fake_ollama() -> AsyncIterator[FakeOllama]:
    """Start the fake server on 127.0.0.1 (a free port) in the running loop."""
    fake = FakeOllama()
    app = web.Application()
    app.router.add_post("/api/embed", fake.embed)
    app.router.add_post("/api/chat", fake.chat)
    app.router.add_get("/api/tags", fake.tags)
    app.router.add_get("/api/version", fake.version)
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    fake.url = f"http://127.0.0.1:{port}"
    try:
        yield fake
    finally:
        fake.released.set()
        await runner.cleanup()
