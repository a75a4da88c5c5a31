"""A second process for tests/memory/test_processes_outbox.py: a reflection worker on a shared
database (an SQLite file or a PostgreSQL URL), to be SIGKILLed while its model call is open.

Usage: python -m tests.memory.process_worker DB CHAT_URL LEASE_SECONDS
"""

from __future__ import annotations

import asyncio
import sys

import httpx

from memory.backends.chat import OllamaChat
from memory.store import open_store
from memory.write.worker import ReflectionWorker


async def main(path: str, url: str, lease: float) -> None:
    timeout = httpx.Timeout(60.0)
    async with httpx.AsyncClient(timeout=timeout) as http, await open_store(path) as store:
        chat = OllamaChat(http, url, "m")
        worker = ReflectionWorker(store, chat, character_name="Ash", deadline=60.0, lease=lease)
        await worker.run_due()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
