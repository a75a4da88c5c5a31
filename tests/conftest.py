from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import settings

from memory.store import Store, open_store
from tests.fakes.ollama import FakeOllama, serve_fake_ollama

# Property tests assert what holds, never how fast: Hypothesis' default 200 ms deadline per
# example failed a correct test on a loaded two-core machine (612 ms once, 2 ms on the retry).
settings.register_profile("echo", deadline=None)
settings.load_profile("echo")


# Which backends the `store` fixture runs each test on: sqlite (the default), postgres (a
# throwaway server the session starts, `make test-pg`), or both.
BACKENDS = {
    "sqlite": ("sqlite",),
    "postgres": ("postgres",),
    "both": ("sqlite", "postgres"),
}[os.environ.get("ECHO_TEST_BACKEND", "sqlite")]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only(reason): the test checks SQLite itself (its file, PRAGMAs, WAL);"
        " skipped on PostgreSQL",
    )


_DATABASE_FIXTURES = {"store", "database", "shared_database", "postgres"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On PostgreSQL alone, run only the tests that get their database from `store`,
    `database`, `shared_database` or `postgres`: the others would run on SQLite again.

    The slow tests go first: `make test` spreads the suite over the cores (pytest-xdist), and
    a 30-second test handed out last would run alone at the end while the other cores idle."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if BACKENDS != ("postgres",):
        return
    kept = [i for i in items if _DATABASE_FIXTURES & set(getattr(i, "fixturenames", ()))]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A throwaway PostgreSQL server for the session (tests/pg/server.py)."""
    if "postgres" not in BACKENDS:
        pytest.skip("PostgreSQL runs with make test-pg (ECHO_TEST_BACKEND=postgres)")
    from tests.pg.server import running

    with running() as server:
        yield server


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A real database migrated to the latest schema: an SQLite file, or a fresh PostgreSQL
    database (ECHO_TEST_BACKEND=postgres)."""
    if request.param == "sqlite":
        async with await open_store(tmp_path / "echo.sqlite3") as opened:
            yield opened
        return
    marker = request.node.get_closest_marker("sqlite_only")
    if marker is not None:
        pytest.skip(f"SQLite only: {marker.args[0] if marker.args else 'checks SQLite itself'}")
    server = request.getfixturevalue("postgres")
    url = await server.create()
    try:
        async with await open_store(url) as opened:
            yield opened
    finally:
        await server.drop(url)


@pytest.fixture
async def ollama() -> AsyncIterator[FakeOllama]:
    """A loopback HTTP server speaking the Ollama API, scripted by the test."""
    async with serve_fake_ollama() as fake:
        yield fake


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as client:
        yield client


@pytest.fixture(params=BACKENDS)
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Path | str]:
    """Where a test opens, and opens again, its own database (an old schema, a restart): an
    SQLite file's path, or an empty PostgreSQL database's URL."""
    if request.param == "sqlite":
        yield tmp_path / "echo.sqlite3"
        return
    server = request.getfixturevalue("postgres")
    url = await server.create(empty=True)
    try:
        yield url
    finally:
        await server.drop(url)


@pytest.fixture(params=BACKENDS)
async def shared_database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Path | str]:
    """One database several processes open (each its own `open_store`, its own connections and
    caches): an SQLite file's path, or a fresh PostgreSQL database's URL, already migrated."""
    if request.param == "sqlite":
        yield tmp_path / "shared.sqlite3"
        return
    server = request.getfixturevalue("postgres")
    url = await server.create()
    try:
        yield url
    finally:
        await server.drop(url)
