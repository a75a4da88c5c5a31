"""How a turn writes: two transactions, one before the story is read (the person's message and
the turn's row, what a crash while the model answers must not lose) and one after the reply
(what the turn selected, the reply, its reflection, the turn's figures, what the reply taught
the context); on PostgreSQL, a warm turn in at most WARM_ROUND_TRIPS requests to the server.
Counted on the trace bench/statements.py takes."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import httpx

from bench.statements import GUILD, attach, engine_for, message, seed_story, warm_turn
from memory.store import Store, open_store
from memory.store.tables import reply_versions
from memory.vectors.indexer import Indexer
from tests.fakes.ollama import FakeOllama

ROOT = Path(__file__).resolve().parents[2]

# Write transactions of a warm turn (main made 5: bench/results/statements.md).
WARM_TRANSACTIONS = 2
# PostgreSQL: requests a warm turn sends the server, the pool's resets included (main: 46).
WARM_ROUND_TRIPS = 20


async def test_a_warm_turn_writes_in_two_transactions(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """A counter, not a timing: the warm turn on a story with everything the loops keep (its
    history condensed again) writes twice; on PostgreSQL in WARM_ROUND_TRIPS round trips at
    most, no pool reset among them."""
    counts, trace = await warm_turn(store, http, ollama.url)
    shown = [s.sql[:80] for s in trace.statements]
    assert counts.write_transactions <= WARM_TRANSACTIONS, shown
    if store.dialect == "postgres":
        assert counts.round_trips <= WARM_ROUND_TRIPS, shown
        assert counts.pool_resets == 0
    reply = await store.fetchone("SELECT content FROM messages WHERE source_id = ?",
                                 ("bench:10:1:7:reply",))  # fmt: skip
    assert reply is not None and reply[0]
    planned = await store.fetchone(
        "SELECT count(*) FROM turn_plans p JOIN turns t ON t.id = p.turn_id"
        " WHERE t.exchange_id = ?",
        ("bench:10:1:7",),
    )
    assert planned is not None and planned[0] == 1


async def test_concurrent_turns_write_twice_each(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The twin: twelve people in three stories, two rounds of everyone's turns at once. Each
    turn writes twice, and each stores its message, its record, its reply and its reflection
    once."""
    for story_id in (10, 11, 12):
        await seed_story(store, story_id=story_id, user_id=story_id * 10)
    engine = engine_for(store, http, ollama.url)
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    places = [(s, s * 10 + p) for s in (10, 11, 12) for p in range(4)]
    trace = await attach(store)
    async with trace.recording():
        for n in range(2):
            replies = await asyncio.gather(*(
                engine.turn(message(n, user_id=user, story_id=story)) for story, user in places
            ))  # fmt: skip
            assert all(r is not None for r in replies)
    turns = 2 * len(places)
    assert trace.write_transactions() <= WARM_TRANSACTIONS * turns
    rows = await store.fetchall(
        "SELECT m.source_id, (SELECT count(*) FROM turns t WHERE t.exchange_id = m.source_id),"
        " (SELECT count(*) FROM messages r WHERE r.source_id = m.source_id || ':reply'),"
        " (SELECT count(*) FROM outbox o WHERE o.exchange_id = m.source_id)"
        " FROM messages m WHERE m.source_id LIKE 'bench:%' AND m.role = 'user'"
    )
    assert len(rows) == turns
    assert all(tuple(r)[1:] == (1, 1, 1) for r in rows), [tuple(r) for r in rows]


async def test_a_turn_killed_while_the_model_answers_keeps_its_message(
    shared_database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """A real second process runs a turn and is SIGKILLed while the model is asked: the
    person's message and the turn's row are stored (written before the model is asked),
    nothing of the reply is; "Try again" answers the message once."""
    target = str(shared_database)
    asked = asyncio.Event()

    async def hold(payload: dict[str, Any]) -> None:
        asked.set()
        await ollama.released.wait()

    ollama.pause = hold
    async with await open_store(target) as store:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.memory.turn_worker", target, ollama.url,
            cwd=ROOT, stdin=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        try:
            await asyncio.wait_for(asked.wait(), 60)
        finally:
            child.send_signal(signal.SIGKILL)
            await child.wait()
        said = message(0)
        stored = await store.fetchall(
            "SELECT role FROM messages WHERE source_id IN (?, ?)",
            (said.source_id, f"{said.source_id}:reply"),
        )
        assert [r[0] for r in stored] == ["user"]
        failed = await reply_versions.unanswered(store, said.source_id)
        assert failed is not None and failed.origin == GUILD  # from the turn's row
        assert await store.fetchone("SELECT 1 FROM outbox") is None

        ollama.pause = None
        reply = await engine_for(store, http, ollama.url).regenerate(said.source_id)
        assert reply.text
        counted = await store.fetchone(
            "SELECT (SELECT count(*) FROM messages WHERE source_id = ?),"
            " (SELECT count(*) FROM messages WHERE source_id = ?),"
            " (SELECT count(*) FROM outbox WHERE exchange_id = ?)",
            (said.source_id, f"{said.source_id}:reply", said.source_id),
        )
        assert counted is not None and tuple(counted) == (1, 1, 1)
        assert await reply_versions.unanswered(store, said.source_id) is None
