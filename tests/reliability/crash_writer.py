"""A writer process for the crash harness: a scripted load that may be SIGKILLed anywhere.

Each step queues an exchange in the outbox (one transaction), then applies its reflection — two
memories, a summary — and marks the outbox row done (the worker's two transactions). After each
commit it prints an acknowledgement, so the harness knows what was durable before the kill.
On start it first resumes the pending outbox rows, as the bot does after a restart.
Usage: python -m tests.reliability.crash_writer DB START COUNT

Or `python -m tests.reliability.crash_writer --zygote DB`: the modules imported once, then one
writer forked per "START COUNT" line read, each saying "pid N" first; "exited" once it is gone
(killed or finished). A fork costs milliseconds where a new interpreter importing the engine
costs a second or two, so the harness kills ten times as many writers in the same time.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from memory.model import Exchange
from memory.store import Store, open_store
from memory.store.tables import outbox
from memory.write.apply import apply_reflection
from memory.write.reflection import parse


def reflection_for(step: int) -> str:
    return json.dumps(
        {
            "memories": [
                {"text": f"Garde le carnet numéro {step} au grenier", "kind": "fact",
                 "scope": "global", "confidence": 0.95},
                {"text": f"Prend le bus {step} le matin", "kind": "fact", "scope": "global",
                 "confidence": 0.95},
            ],
            "summary": f"Étape {step}.",
        }
    )  # fmt: skip


def exchange_for(step: int) -> Exchange:
    return Exchange(f"ex{step}", 1, 10, "111", "Marie", f"message {step}", f"réponse {step}")


async def _apply(store: Store, row: outbox.OutboxRow, step: int) -> None:
    await apply_reflection(
        store, row.exchange, parse(reflection_for(step)), character_name="Écho", now=float(step)
    )
    print(f"applied {step}", flush=True)
    await store.transact(lambda tx: outbox.mark_done(tx, row.id))
    print(f"done {step}", flush=True)


async def main(path: str, start: int, count: int) -> None:
    async with await open_store(path) as store:
        for row in await outbox.due(store, now=1e18, limit=1000):
            await _apply(store, row, int(row.exchange.exchange_id[2:]))
        for step in range(start, start + count):
            exchange = exchange_for(step)
            await store.transact(lambda tx, e=exchange: outbox.enqueue(tx, e, now=0.0))
            print(f"queued {step}", flush=True)
            row = await outbox.get(store, exchange.exchange_id)
            assert row is not None
            await _apply(store, row, step)


def zygote(path: str) -> None:
    """Fork a writer for each "START COUNT" line on stdin; wait for it before reading the next.
    No event loop, thread or connection is alive here when forking: each child starts its own."""
    for line in sys.stdin:
        start, count = (int(word) for word in line.split())
        pid = os.fork()
        if pid == 0:  # the writer
            code = 1
            try:
                print(f"pid {os.getpid()}", flush=True)
                asyncio.run(main(path, start, count))
                code = 0
            finally:
                os._exit(code)
        os.waitpid(pid, 0)
        print("exited", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--zygote":
        zygote(sys.argv[2])
    else:
        asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
