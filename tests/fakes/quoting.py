"""A loopback OpenAI-compatible server that quotes back the API key it was sent, as servers do
in their errors ("Incorrect API key provided: sk-..."), in the shape a test chooses.

`refuses` names what it refuses: "turn" (a chat request without structured output),
"reflection" (one with it) and "embed"; a turn whose last message holds REFUSE_MARK is refused
too. Everything else is answered as a healthy server would.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.loopback import serve
from tests.fakes.ollama import fake_vector

Answer = tuple[int, dict[str, Any]]
REFUSE_MARK = "⛔"

# How servers quote a key: OpenAI's 401, LiteLLM's proxy, a gateway's 502, an in-band 200 error,
# and the key as the error's type with nothing around it.
QUOTES: dict[str, Callable[[str], Answer]] = {
    "openai": lambda key: (
        401,
        {"error": {"message": f"Incorrect API key provided: {key}.", "type": "invalid_request"}},
    ),
    "litellm": lambda key: (
        400,
        {"error": {"message": f"Authentication Error, Received API Key = {key}, Key Hash=ab"}},
    ),
    "gateway": lambda key: (502, {"error": f"upstream failed for key {key}"}),
    "in-band": lambda key: (200, {"error": {"message": f"quota exceeded for [{key}]"}}),
    "glued": lambda key: (403, {"error": {"message": f"denied:{key}!", "type": key}}),
}


@dataclass
class QuotingServer:
    quote: Callable[[str], Answer]
    refuses: set[str] = field(default_factory=set)
    url: str = ""
    keys_seen: set[str] = field(default_factory=set)

    def _refusal(self, request: web.Request, what: str) -> web.Response | None:
        key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        self.keys_seen.add(key)
        if what not in self.refuses and what != "turn!":
            return None
        status, body = self.quote(key)
        return web.json_response(body, status=status)

    async def chat(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        await asyncio.sleep(random.uniform(0, 0.02))
        prompt = " ".join(str(m.get("content", "")) for m in payload.get("messages", []))
        asked = "response_format" in payload or "JSON schema" in prompt
        last = str(payload["messages"][-1].get("content", ""))
        what = "reflection" if asked else "turn"
        refused = self._refusal(request, "turn!" if REFUSE_MARK in last and not asked else what)
        if refused is not None:
            return refused
        content = '{"memories": []}' if asked else "D'accord."
        message = {"role": "assistant", "content": content}
        return web.json_response({"choices": [{"index": 0, "message": message}]})

    async def embeddings(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        await asyncio.sleep(random.uniform(0, 0.02))
        refused = self._refusal(request, "embed")
        if refused is not None:
            return refused
        texts = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
        data = [{"index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)]
        return web.json_response({"data": data})

    async def models(self, request: web.Request) -> web.StreamResponse:
        # The default models, served: doctor checks the chat server before probing it.
        data = [{"id": m, "object": "model"} for m in ("llama3.1:8b", "nomic-embed-text")]
        return web.json_response({"object": "list", "data": data})


@asynccontextmanager
async def serve_quoting(
    quote: Callable[[str], Answer], refuses: set[str]
) -> AsyncIterator[QuotingServer]:
    """Start the server on 127.0.0.1 (a free port) in the running loop."""
    fake = QuotingServer(quote, set(refuses))
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.chat)
    app.router.add_post("/v1/embeddings", fake.embeddings)
    app.router.add_get("/v1/models", fake.models)
    async with serve(app) as fake.url:
        yield fake
