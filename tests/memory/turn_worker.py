"""A second process for tests/memory/test_turn_writes.py: one turn on a shared database (an
SQLite file or a PostgreSQL URL), to be SIGKILLed while the model is asked for its reply.

Usage: python -m tests.memory.turn_worker DB OLLAMA_URL
"""

from __future__ import annotations

import asyncio
import sys

import httpx

from bench.statements import engine_for, message
from memory.store import open_store


async def main(path: str, url: str) -> None:
    async with httpx.AsyncClient(timeout=60.0) as http, await open_store(path) as store:
        await engine_for(store, http, url).turn(message(0))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
