"""A newcomer's keyword recall beside everyone else's memories (issue 28): the cost of one
message of the database's 32 commonest words, for a person with no memory and for one with 200,
as the database grows.

The database (PEOPLE people x PER_PERSON memories of the English diary's sentences) is written
by bulk SQL, once per size, under ~/.cache/echo-bench; then each person's keyword recall of the
message is run REPEAT times. Reported: the median time (ms) and the SQLite virtual machine steps
of one recall (a progress handler on a connection of its own, as tests/memory/store/test_keywords
counts them). Run: python -m bench.newcomer [--memories 20000,200000]; the same script run on
another checkout (PYTHONPATH) gives its "before".
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import json
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("ECHO_BENCH_CACHE", Path.home() / ".cache" / "echo-bench"))
PEOPLE = 1_000
REPEAT = 15
STORY, ORIGIN = 1, "1"
NEWCOMER, REGULAR = 10**9, 1
# Memories written per INSERT while building.
CHUNK = 20_000


def _texts(count: int) -> list[str]:
    from bench.corpora.diary import diary_distractors
    from bench.corpora.recall import CORPORA

    pool = diary_distractors(CORPORA["en"], min(count, 20_000), seed=28)
    return [pool[i % len(pool)] for i in range(count)]


def commonest(texts: list[str], n: int = 32) -> str:
    """The message: the `n` terms most memories hold, as recall reads a message's terms."""
    from memory.recall.lexical import query_terms

    counts: collections.Counter[str] = collections.Counter()
    for text in texts[:20_000]:
        counts.update(set(query_terms(text)))
    return " ".join(term for term, _ in counts.most_common(n))


async def build(path: Path, memories: int) -> None:
    from memory.store import open_store

    texts = _texts(memories)
    async with await open_store(path) as store:
        for start in range(0, memories, CHUNK):
            rows = [
                (1 + i % PEOPLE, texts[i], hashlib.sha256(f"{i}".encode()).hexdigest())
                for i in range(start, min(memories, start + CHUNK))
            ]

            async def fill(tx: Any, rows: list[tuple[int, str, str]] = rows) -> None:
                await tx.execute(
                    "INSERT INTO memories (user_id, scope, origin, kind, text, confidence,"
                    " created_at, updated_at, content_hash) SELECT json_extract(value, '$[0]'),"
                    " 'global', ?, 'fact', json_extract(value, '$[1]'), 0.9, 0, 0,"
                    " json_extract(value, '$[2]') FROM json_each(?)",
                    (ORIGIN, json.dumps(rows)),
                )

            await store.transact(fill)


def cached(memories: int) -> Path:
    from memory.store.migrations import LATEST

    path = CACHE / f"newcomer-s{LATEST}-{memories}.sqlite3"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.unlink(missing_ok=True)
        began = time.perf_counter()
        asyncio.run(build(partial, memories))
        os.replace(partial, path)
        print(f"built {path.name} in {time.perf_counter() - began:,.0f} s", file=sys.stderr)
    return path


async def measure(path: Path, user_id: int, message: str) -> dict[str, float]:
    from memory.recall.lexical import keyword_recall
    from memory.store import open_store

    asked: list[tuple[str, Any]] = []
    async with await open_store(path) as store:
        fetchall = store.fetchall

        async def spy(sql: str, args: Any = ()) -> Any:
            asked.append((sql, args))
            return await fetchall(sql, args)

        store.fetchall = spy  # type: ignore[method-assign]
        times = []
        for _ in range(REPEAT):
            began = time.perf_counter()
            await keyword_recall(store, user_id=user_id, story_id=STORY, origin=ORIGIN,
                                 text=message)  # fmt: skip
            times.append((time.perf_counter() - began) * 1000)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn = sqlite3.connect(path)
    conn.set_progress_handler(count, 1)
    for sql, args in asked[: len(asked) // REPEAT]:
        conn.execute(sql, args).fetchall()
    conn.close()
    return {"median_ms": statistics.median(times), "steps": steps}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.newcomer", description=__doc__.split("\n")[0])
    parser.add_argument("--memories", default="20000,200000")
    parser.add_argument("--label", default="")
    args = parser.parse_args(argv)
    message = commonest(_texts(20_000))
    print(f"message: {message}", file=sys.stderr)
    print("| code | memories | newcomer ms | VM steps | a person of the 1,000 ms | VM steps |")
    print("|---|---:|---:|---:|---:|---:|")
    for memories in (int(m) for m in args.memories.split(",")):
        path = cached(memories)
        new = asyncio.run(measure(path, NEWCOMER, message))
        old = asyncio.run(measure(path, REGULAR, message))
        print(f"| {args.label} | {memories:,} | {new['median_ms']:.1f} | {new['steps']:,} | "
              f"{old['median_ms']:.1f} | {old['steps']:,} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
