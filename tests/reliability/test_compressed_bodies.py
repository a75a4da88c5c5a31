"""A compressed answer is capped on what it inflates to: a gzip bomb (50 MB of zeros sent as
50 KB), one stacked twice, deflate with or without its header, or a coding Écho does not read,
sent by the chat or the embedding server, is a BackendResponseError: the turn is degraded and
counted (embeddings) or answered "cannot answer" (chat), and memory stays bounded by the cap."""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cache

import httpx
import pytest
from aiohttp import web

from memory import Engine, Incoming, MemoryConfig
from memory.backends.chat import MAX_CHAT_BODY, OllamaChat
from memory.backends.embedders import MAX_EMBED_BODY, OllamaEmbedder
from memory.errors import BackendResponseError
from memory.store import Store
from memory.store.tables import counters
from tests.fakes.loopback import serve
from tests.fakes.ollama import fake_vector

BOMB_BYTES = 50 * 1024 * 1024  # zeros, over both caps (chat 4 MB, embeddings 32 MB)
MIB = 1024 * 1024


def _bound(cap: int) -> int:
    """What one call may allocate: the body up to its cap, a bytearray's growth (1/8) and
    a megabyte for the rest (the request, the compressed chunks, the inflater's window)."""
    return cap + cap // 8 + MIB


@cache
def _zeros(wbits: int) -> bytes:
    """BOMB_BYTES of zeros compressed (gzip, zlib or raw deflate by `wbits`), made 1 MB at a
    time so that the test itself never holds them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = bytes(1024 * 1024)
    return b"".join(packer.compress(block) for _ in range(BOMB_BYTES // len(block))) + (
        packer.flush()
    )


def _gzip() -> bytes:
    return _zeros(16 + zlib.MAX_WBITS)


# Each bomb: its Content-Encoding and its body (a few KB to 50 KB on the wire).
BOMBS: dict[str, Callable[[], tuple[str, bytes]]] = {
    "gzip": lambda: ("gzip", _gzip()),
    "gzip, gzip": lambda: ("gzip, gzip", gzip.compress(_gzip())),
    "stacked headers": lambda: ("gzip\r\nContent-Encoding: gzip", gzip.compress(_gzip())),
    "deflate": lambda: ("deflate", _zeros(zlib.MAX_WBITS)),
    "raw deflate": lambda: ("deflate", _zeros(-zlib.MAX_WBITS)),
    "br": lambda: ("br", b"\x1b\xff\xff\x0f" * 1000),  # httpx reads it as plain bytes
    "unknown": lambda: ("x-squash", _gzip()),
    "corrupt gzip": lambda: ("gzip", _gzip()[:10] + b"\x00" * 5000),
    # Bytes after the end of a gzip that inflates past one INFLATE_STEP: the stopped inflater
    # kept them as its tail, and the loop blocked turning on them, memory growing.
    "gzip, trailing bytes": lambda: ("gzip", gzip.compress(_padded_chat()) + b"\n"),
    "gzip, two members": lambda: ("gzip", gzip.compress(b" " * 70_000) + gzip.compress(b"{}")),
}
CHAT_OK = {"message": {"role": "assistant", "content": "D'accord."}, "done": True}


def _padded_chat() -> bytes:
    """A healthy chat answer after 70,000 spaces (more than one INFLATE_STEP)."""
    return b" " * 70_000 + json.dumps(CHAT_OK).encode()


@dataclass
class BombServer:
    """Ollama's chat and embed endpoints; `bombs` names which of them answers with `bomb`."""

    bomb: tuple[str, bytes]
    bombs: set[str]
    url: str = ""
    sent: dict[str, int] = field(default_factory=dict)

    def _answer(self, path: str, healthy: object) -> web.Response:
        if path not in self.bombs:
            # A healthy answer compressed too: one gzip coding is read as ever.
            body = gzip.compress(json.dumps(healthy).encode())
            return web.Response(body=body, content_type="application/json",
                                headers={"Content-Encoding": "gzip"})  # fmt: skip
        coding, body = self.bomb
        self.sent[path] = self.sent.get(path, 0) + 1
        headers = {"Content-Type": "application/json"}
        response = web.Response(body=body, headers=headers)
        for one in coding.split("\r\nContent-Encoding: "):  # several headers, when stacked so
            response.headers.add("Content-Encoding", one)
        return response

    async def chat(self, request: web.Request) -> web.Response:
        await request.read()
        await asyncio.sleep(random.uniform(0, 0.01))
        return self._answer("chat", CHAT_OK)

    async def embed(self, request: web.Request) -> web.Response:
        texts = (await request.json())["input"]
        await asyncio.sleep(random.uniform(0, 0.01))
        return self._answer("embed", {"embeddings": [fake_vector(t) for t in texts]})


@asynccontextmanager
async def _server(bomb: tuple[str, bytes], bombs: set[str]) -> AsyncIterator[BombServer]:
    fake = BombServer(bomb, bombs)
    app = web.Application()
    app.router.add_post("/api/chat", fake.chat)
    app.router.add_post("/api/embed", fake.embed)
    async with serve(app) as fake.url:
        yield fake


def _engine(store: Store, http: httpx.AsyncClient, url: str) -> Engine:
    return Engine(
        store,
        embedder=OllamaEmbedder(http, url, "nomic-embed-text"),
        chat=OllamaChat(http, url, "m"),
        config=MemoryConfig(turn_embedding_timeout=30.0, chat_deadline=30.0),
    )


def _message(n: int) -> Incoming:
    return Incoming(f"t:{n}", 100 + n % 7, f"p{n}", 10 + n % 3, "111", f"Bonjour {n}")


@asynccontextmanager
async def _peak() -> AsyncIterator[list[int]]:
    """The peak of memory allocated inside the block, in bytes."""
    tracemalloc.start()
    found: list[int] = []
    try:
        yield found
    finally:
        found.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


@pytest.mark.parametrize("bomb", sorted(BOMBS))
async def test_a_compressed_chat_answer_bomb_fails_the_turn_with_an_answer_in_bounded_memory(
    store: Store, http: httpx.AsyncClient, bomb: str
) -> None:
    async with _server(BOMBS[bomb](), {"chat"}) as server:
        engine = _engine(store, http, server.url)
        async with _peak() as peak:
            with pytest.raises(BackendResponseError) as caught:
                await engine.turn(_message(1))
    assert server.sent == {"chat": 1}
    said = str(caught.value)
    assert said.startswith(f"{server.url}/api/chat: the answer ")
    assert "larger than 4 MB" in said or "encoded as" in said or "not valid" in said
    # Everything the turn allocated, the cap's worth of body included: never the bomb's 50 MB.
    assert peak[0] < _bound(MAX_CHAT_BODY), peak


@pytest.mark.parametrize("bomb", ["gzip", "gzip, gzip", "deflate", "br"])
async def test_a_compressed_embedding_bomb_degrades_the_turn_which_is_answered(
    store: Store, http: httpx.AsyncClient, bomb: str
) -> None:
    async with _server(BOMBS[bomb](), {"embed"}) as server:
        engine = _engine(store, http, server.url)
        async with _peak() as peak:
            reply = await engine.turn(_message(1))
    assert reply is not None and reply.text == "D'accord."
    assert reply.recall.degraded
    assert (await counters.read_all(store))["degraded_turns"] == 1
    assert peak[0] < _bound(MAX_EMBED_BODY), peak


async def test_many_turns_against_bombs_at_once_each_end_in_a_backend_error_or_a_degraded_reply(
    store: Store, http: httpx.AsyncClient
) -> None:
    turns = 12
    async with (
        _server(BOMBS["gzip"](), {"chat"}) as chat_bombs,
        _server(BOMBS["gzip, gzip"](), {"embed"}) as embed_bombs,
    ):
        engines = [_engine(store, http, chat_bombs.url), _engine(store, http, embed_bombs.url)]
        async with _peak() as peak:
            results = await asyncio.gather(
                *(engines[n % 2].turn(_message(n)) for n in range(turns)),
                return_exceptions=True,
            )
    failed = [r for n, r in enumerate(results) if n % 2 == 0]
    answered = [r for n, r in enumerate(results) if n % 2 == 1]
    assert all(isinstance(r, BackendResponseError) for r in failed), failed
    assert all(getattr(r, "text", None) == "D'accord." for r in answered), answered
    assert (await counters.read_all(store))["degraded_turns"] == turns // 2
    # Each chat call holds at most about its cap, however many at once; the stacked codings
    # are refused before anything is inflated.
    assert peak[0] < turns // 2 * _bound(MAX_CHAT_BODY) + MIB, peak
