"""llama-cpp-python's server, started as people start it (its default --interrupt_requests true),
stops the reply it streams when another request comes. Écho learns it, asks the emptied reply
again alone, and from then on sends one request at a time: every reply comes out whole while
reflections start beside the next replies (`make test-real`; skipped unless ECHO_REAL=1).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import httpx
import pytest

from memory.backends.chat import OpenAIChat
from memory.turn.admission import BoundedChat
from tests.real.servers import Server, llama_cpp_python

REAL = os.environ.get("ECHO_REAL") == "1"
pytestmark = pytest.mark.skipif(not REAL, reason="real servers: run `make test-real`")

SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string", "maxLength": 80}},
    "required": ["summary"],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with llama_cpp_python(tmp_path_factory.mktemp("logs")) as running:
        yield running


async def test_replies_come_out_whole_while_reflections_start_beside_them(server: Server) -> None:
    async with httpx.AsyncClient() as http:
        chat = BoundedChat(OpenAIChat(http, server.url, "smollm2"), limit=4)
        ask = [{"role": "user", "content": "Tell me about the sea in two sentences."}]

        async def reply() -> str:
            stream = chat.stream(ask, deadline=300, max_tokens=60)
            return "".join([piece async for piece in stream])

        async def reflect() -> str:
            await asyncio.sleep(0.05)  # as the worker does, once the reply has begun
            result = await chat.background().chat(ask, schema=SCHEMA, deadline=300, max_tokens=40)
            return result.content

        for _ in range(4):
            text, _ = await asyncio.gather(reply(), reflect())
            assert text.strip()
    # The server did stop a reply (its default), and Écho learned it once.
    assert chat.one_at_a_time
    assert chat.asked_again >= 1
