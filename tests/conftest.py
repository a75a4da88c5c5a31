from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.store.db import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A real SQLite file, migrated to the latest schema."""
    async with await Store.open(tmp_path / "echo.sqlite3") as opened:
        yield opened
