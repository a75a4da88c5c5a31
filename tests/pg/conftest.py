from __future__ import annotations

import pytest

from memory.store import Store


@pytest.fixture
def url(store: Store) -> str:
    """The URL of the `store` fixture's PostgreSQL database; skips on SQLite."""
    if store.dialect != "postgres":
        pytest.skip("PostgreSQL only (ECHO_TEST_BACKEND=postgres)")
    # The test servers take no password: the store's URL is the whole URL.
    return store.path
