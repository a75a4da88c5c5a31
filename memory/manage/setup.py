"""What a front end opens the memory with: the database, the reflection worker, and the
structured-output mode each chat server accepts (learned once, kept in the database).

The front ends (bot/) import from the memory.manage* modules only, never from memory.store or
memory.write: tests/test_imports.py holds them to it.
"""

from __future__ import annotations

import time
from typing import Any

from memory.backends.structured import Mode, Negotiator
from memory.store import structured as learned
from memory.store.db import Store as Store
from memory.store.opening import open_store as open_store
from memory.write import reflection
from memory.write.worker import ReflectionWorker as ReflectionWorker


def reflection_schema() -> dict[str, Any]:
    """The JSON schema a reflection answers with (what `doctor` probes the server with)."""
    return reflection.json_schema()


async def negotiator(store: Store, *, override: Mode | None) -> Negotiator:
    """The structured-output modes: the override, or those learned so far, saved when learned."""
    known = {key: Mode(mode) for key, mode in (await learned.load(store)).items()}

    async def save(server: str, model: str, mode: Mode) -> None:
        await learned.save(store, server, model, mode.value, now=time.time())

    return Negotiator(override=override, known=known, on_learned=save)
