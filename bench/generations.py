"""What sharing caches between processes costs a turn and a write, side by side in one run.

A turn reads the person's generation from the database before its caches serve
(`Store.sync_generation`); every write transaction that touches a person raises it. Measured
against the round trip of the cheapest read (`SELECT 1`) and a write transaction that touches
nobody, on a real SQLite file with 2,000 people.

Usage: python -m bench.generations [CALLS]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from memory.store import Tx, open_store

PEOPLE = 2_000


async def _per_call(calls: int, fn: Callable[[int], Awaitable[object]]) -> float:
    """Microseconds per call, the best of three runs."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for i in range(calls):
            await fn(1 + i % PEOPLE)
        best = min(best, (time.perf_counter() - started) / calls * 1e6)
    return best


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with await open_store(Path(folder) / "bench.sqlite3") as store:

            async def seed(tx: Tx) -> None:
                for user in range(1, PEOPLE + 1):
                    tx.touch(user, [user])

            await store.transact(seed)

            async def touch(user: int) -> None:
                async def run(tx: Tx) -> None:
                    tx.touch(user, [user])

                await store.transact(run)

            async def nothing(user: int) -> None:
                await store.transact(lambda tx: tx.execute("SELECT 1"))

            rows = [
                ("read: SELECT 1", await _per_call(calls, lambda u: store.fetchone("SELECT 1"))),
                ("read: sync_generation", await _per_call(calls, store.sync_generation)),
                ("write: touching nobody", await _per_call(calls // 4, nothing)),
                ("write: touching one person", await _per_call(calls // 4, touch)),
            ]
    print(f"| operation ({PEOPLE} people) | µs per call |\n|---|---|")
    for name, micros in rows:
        print(f"| {name} | {micros:.0f} |")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2_000))
