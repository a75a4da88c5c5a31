"""Écho's reflections against llama.cpp's own C++ server (`make test-real`): gguf-server 0.0.3,
which bundles it, with SmolLM2-135M. Every reflection is answered and applied, none thrown away
as unusable (issue 29: 0 of 3 applied, each `_Unusable: invalid_json_salvaged`).

Skipped unless ECHO_REAL=1 and the venv of `make .venv-gguf/.installed` is there (its build
takes about 15 minutes on 2 cores: it is not a prerequisite of `make test-real`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memory.backends.chat import OpenAIChat
from memory.model import Exchange
from memory.store import open_store
from memory.store.tables import counters, outbox
from memory.write.worker import ReflectionWorker
from tests.real.servers import Server, cpp_server, gguf_engine

ENGINE = gguf_engine() if os.environ.get("ECHO_REAL") == "1" else None
pytestmark = pytest.mark.skipif(
    ENGINE is None,
    reason="llama.cpp's C++ server: `make .venv-gguf/.installed`, then `make test-real`",
)

EXCHANGES = [
    ("J'ai un chat roux qui s'appelle Félix.", "Félix, quel joli nom !"),
    ("Je joue du violoncelle le mardi soir.", "Le violoncelle, quelle belle voix."),
    ("My sister Lucy lives in Dublin.", "Dublin is lovely in spring."),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    assert ENGINE is not None
    binary, model = ENGINE
    with cpp_server(tmp_path_factory.mktemp("logs"), binary, model) as running:
        yield running


async def test_every_reflection_is_applied(server: Server, tmp_path: Path) -> None:
    assert ENGINE is not None
    async with await open_store(tmp_path / "echo.sqlite3") as store:
        for n, (said, reply) in enumerate(EXCHANGES):
            exchange = Exchange(f"m{n}", 1, 10, "dm", "Marie", said, reply)
            await store.transact(lambda tx, e=exchange: outbox.enqueue(tx, e, now=0.0))
        async with httpx.AsyncClient(timeout=300) as http:
            chat = OpenAIChat(http, server.url, Path(ENGINE[1]).name)
            worker = ReflectionWorker(store, chat, character_name="Écho", deadline=300)
            applied = await worker.run_due()
        named = await counters.read_all(store)
    failed = {k: v for k, v in named.items() if k.startswith("reflection_failed")}
    assert applied == len(EXCHANGES), failed
