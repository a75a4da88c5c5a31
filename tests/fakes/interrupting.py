"""A loopback OpenAI-compatible server that answers one request at a time and, like
llama-cpp-python's server with its default `--interrupt_requests true`, stops the reply it is
streaming as soon as another request waits: the stream ends with `data: [DONE]` and no
`finish_reason`, empty when no token came yet. A request that is not streamed is answered whole
(llama-cpp-python does not stop those), and every request waits for the one before. With
`interrupts=False` it only queues them (`--interrupt_requests false`).

A request with a `response_format` (a reflection) is answered `reflection`; any other, the
words of `reply`, one token every `pace` seconds after `think` seconds of prompt processing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.loopback import serve


@dataclass
class InterruptingServer:
    reply: str = "Bonjour, je me souviens bien de toi et de ton chat."
    reflection: dict[str, Any] = field(
        default_factory=lambda: {"memories": [], "summary": "On parle."}
    )
    think: float = 0.05
    pace: float = 0.005
    interrupts: bool = True
    url: str = ""
    interrupted: int = 0  # streams stopped because another request came
    overlapping: int = 0  # requests that arrived while another was answered or waiting
    requests: int = 0
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _waiting: int = 0
    _busy: bool = False

    async def chat(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.requests += 1
        if self._busy or self._waiting:
            self.overlapping += 1
        self._waiting += 1
        async with self._lock:
            self._waiting -= 1
            self._busy = True
            try:
                if "response_format" in payload:
                    await asyncio.sleep(self.think)
                    return _whole(json.dumps(self.reflection))
                if not payload.get("stream"):
                    await asyncio.sleep(self.think)
                    return _whole(self.reply)
                return await self._stream(request)
            finally:
                self._busy = False

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await asyncio.sleep(self.think)
        for word in self.reply.split(" "):
            if self.interrupts and self._waiting:
                self.interrupted += 1
                break
            await response.write(_event(word + " "))
            await asyncio.sleep(self.pace)
        else:
            await response.write(_event("", "stop"))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def _event(text: str, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _whole(content: str) -> web.Response:
    return web.json_response({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    })  # fmt: skip


@asynccontextmanager
async def serve_interrupting(**options: Any) -> AsyncIterator[InterruptingServer]:
    """Start the server on 127.0.0.1 (a free port) in the running loop."""
    server = InterruptingServer(**options)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.chat)
    async with serve(app) as server.url:
        yield server
