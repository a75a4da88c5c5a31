from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import settings

from memory.store import Store, open_store, opening
from memory.store.migrations import LATEST
from memory.store.sqlite.store import open_sqlite
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

# A test whose call takes longer than this without the `slow` marker fails the quick loop
# (`make test-quick`, -m "not slow"), naming it: the marker follows measured durations, not
# guesses. `make test` only lists them. Seconds on two quiet cores; a loaded machine may list
# a test that is not slow: run it alone before marking it.
SLOW_SECONDS = 10.0


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


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Note each test that took more than SLOW_SECONDS without the `slow` marker (with xdist,
    on the process that gathers the reports)."""
    if report.when == "call" and report.duration > SLOW_SECONDS and "slow" not in report.keywords:
        _slow_seen[report.nodeid] = report.duration


_slow_seen: dict[str, float] = {}


def _quick_loop(config: pytest.Config) -> bool:
    return "not slow" in (config.getoption("markexpr", "") or "")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if not _slow_seen:
        return
    verdict = "FAILED" if _quick_loop(config) else "listed"
    terminalreporter.section(f"tests over {SLOW_SECONDS:.0f} s without @pytest.mark.slow")
    for nodeid, seconds in sorted(_slow_seen.items(), key=lambda kv: -kv[1]):
        terminalreporter.line(f"{seconds:6.1f} s  {nodeid}")
    terminalreporter.line(f"{verdict}: mark them slow, or make them quicker")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _slow_seen and _quick_loop(session.config) and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A new SQLite file is a copy of one migrated once per test process: migrating a fresh
    file to the latest schema takes 100-170 ms, copying a migrated one under 10 ms, and the
    suite opens about a thousand. Only a file that does not exist yet, opened at the latest
    schema, is copied; an older schema, `:memory:` and an existing file open as they always do
    (the migrations themselves are tested from empty files at their own versions)."""
    template = tmp_path_factory.mktemp("template") / "migrated.sqlite3"

    async def build() -> None:
        store = await open_sqlite(template)
        await store.close()

    asyncio.run(build())

    async def open_copy(path: str | Path, /, **kwargs: Any) -> Store:
        fresh = (
            str(path) != ":memory:"
            and kwargs.get("migrate_to", LATEST) == LATEST
            and not Path(path).exists()
            and not Path(f"{path}-wal").exists()
        )
        if fresh:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(template, path)
            except OSError:
                pass  # the real open says why, as it would have
        return await open_sqlite(path, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(opening, "open_sqlite", open_copy)
        yield


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
