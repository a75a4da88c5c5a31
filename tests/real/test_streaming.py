"""Streamed replies against real servers (`make test-real`): llama-cpp-python with SmolLM2-135M,
and llama.cpp's own C++ server when the venv of `make .venv-gguf/.installed` is there. The
model's words are not asserted, only the protocol: the reply comes in several pieces, the
server is learned as streaming, and a turn's texts grow to the reply stored.

Skipped unless ECHO_REAL=1 (set by `make test-real`).
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memory import Engine, Incoming, MemoryConfig, Negotiator
from memory.backends.chat import Deadlined, OpenAIChat
from memory.store import open_store
from memory.store.tables import history
from memory.turn.admission import BoundedChat
from tests.real.servers import Server, cpp_server, gguf_engine, llama_cpp_python

REAL = os.environ.get("ECHO_REAL") == "1"
pytestmark = pytest.mark.skipif(not REAL, reason="real servers: run `make test-real`")
ENGINE = gguf_engine() if REAL else None


@pytest.fixture(scope="module", params=["llama-cpp-python", "gguf-server"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    logs = tmp_path_factory.mktemp("logs")
    if request.param == "llama-cpp-python":
        with llama_cpp_python(logs) as running:
            yield running
        return
    if ENGINE is None:
        pytest.skip("llama.cpp's C++ server: `make .venv-gguf/.installed`")
    with cpp_server(logs, *ENGINE) as running:
        yield running


async def test_a_reply_streams_in_pieces(server: Server) -> None:
    modes = Negotiator()
    async with httpx.AsyncClient() as http:
        chat = OpenAIChat(http, server.url, "smollm2", modes=modes)
        messages = [{"role": "user", "content": "Tell me about the sea in three sentences."}]
        async with chat.stream(messages, deadline=300, max_tokens=80) as stream:
            pieces = [piece async for piece in stream]
    assert len(pieces) > 3 and "".join(pieces).strip()
    assert stream.streamed and modes.streams(server.url, "smollm2") is True


async def test_a_turn_shows_its_reply_growing_to_the_text_stored(server: Server) -> None:
    shown: list[str] = []

    async def on_text(text: str) -> None:
        shown.append(text)

    with tempfile.TemporaryDirectory() as tmp:
        async with await open_store(Path(tmp) / "real.db") as store, httpx.AsyncClient() as http:
            chat = BoundedChat(OpenAIChat(http, server.url, "smollm2"), limit=2)
            engine = Engine(store, embedder=None, chat=Deadlined(chat, "chat_timeout"),
                            config=MemoryConfig(chat_deadline=300))  # fmt: skip
            message = Incoming("real:1", 1, "Marie", 1, "1", "Bonjour ! Comment vas-tu ?")
            reply = await engine.turn(message, on_text=on_text)
            assert reply is not None and not reply.interrupted
            stored = await history.by_source(store, "real:1:reply")
    assert len(shown) > 1
    assert all(b.startswith(a) for a, b in itertools.pairwise(shown))
    assert reply.text.startswith(shown[-1])
    assert stored is not None and stored.content == reply.text
