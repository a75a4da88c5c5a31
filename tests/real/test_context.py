"""The chat server's context against llama-cpp-python started with --n_ctx 512 (`make
test-real`): it says its context nowhere, so its first refusal teaches it, and every later
prompt fits; its streams carry no token count, so the server's own count calibrates the
estimator. The model's words are not asserted.

Skipped unless ECHO_REAL=1 (set by `make test-real`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memory import Engine, Incoming, MemoryConfig
from memory.backends.chat import Deadlined, OpenAIChat
from memory.context.prompt import Character
from memory.errors import BackendRefused
from memory.manage import setup
from memory.store import open_store
from memory.turn.admission import BoundedChat
from tests.real.servers import Server, llama_cpp_python

REAL = os.environ.get("ECHO_REAL") == "1"
pytestmark = pytest.mark.skipif(not REAL, reason="real servers: run `make test-real`")
N_CTX = 512
PERSONA = "Echo loves long stories, night trains and black coffee. " * 80


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with llama_cpp_python(tmp_path_factory.mktemp("logs"), n_ctx=N_CTX) as running:
        yield running


def _message(number: int) -> Incoming:
    return Incoming(f"t:{number}", 1, "Ana", 10, "111", f"Tell me about trains, part {number}.")


async def test_the_refusal_teaches_the_context_and_the_estimator_calibrates(
    server: Server, tmp_path: Path
) -> None:
    async with (
        await open_store(tmp_path / "echo.sqlite3") as store,
        httpx.AsyncClient() as http,
    ):
        client = OpenAIChat(http, server.url, "smollm2", sizes=await setup.context_sizes(store))
        engine = Engine(
            store,
            embedder=None,
            chat=Deadlined(BoundedChat(client, limit=1), "chat_timeout"),
            character=Character("Echo", PERSONA),
            config=MemoryConfig(chat_deadline=300),
            server_context=client.context_size,
        )
        with pytest.raises(BackendRefused, match="maximum context length is 512 tokens"):
            await engine.turn(_message(1))
        assert await setup.learned_context(store, server.url, "smollm2") == (N_CTX, "refusal")
        reply = await engine.turn(_message(2))
        estimator = await engine.context.estimator()
    assert reply is not None and reply.text
    # Counted by the server (its stream reported nothing), and accepted.
    assert estimator.samples == 1
