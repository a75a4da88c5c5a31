from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import settings

from memory.store.db import Store
from tests.fakes.ollama import FakeOllama, serve_fake_ollama

# Property tests assert what holds, never how fast: Hypothesis' default 200 ms deadline per
# example failed a correct test on a loaded two-core machine (612 ms once, 2 ms on the retry).
settings.register_profile("echo", deadline=None)
settings.load_profile("echo")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A real SQLite file, migrated to the latest schema."""
    async with await Store.open(tmp_path / "echo.sqlite3") as opened:
        yield opened


@pytest.fixture
async def ollama() -> AsyncIterator[FakeOllama]:
    """A loopback HTTP server speaking the Ollama API, scripted by the test."""
    async with serve_fake_ollama() as fake:
        yield fake


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as client:
        yield client
