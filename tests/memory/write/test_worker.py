"""The reflection worker against a loopback fake Ollama: retries, backoff, drops, idempotence."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from memory.backends.chat import OllamaChat
from memory.model import Exchange
from memory.store import Store, open_store
from memory.store.tables import counters, history, memories, outbox
from memory.write.worker import BASE_DELAY, MAX_ATTEMPTS, ReflectionWorker
from tests.fakes.ollama import FakeOllama

REFLECTION = {
    "memories": [{"text": "Plays the cello", "kind": "fact", "scope": "global", "confidence": 0.9}],
    "summary": "Sam talks about music.",
    "state": {},
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _queue(store: Store, exchange_id: str = "m1") -> None:
    exchange = Exchange(exchange_id, 1, 10, "111", "Sam", "I play the cello", "Lovely!")
    await store.transact(lambda tx: outbox.enqueue(tx, exchange, now=0.0))


def _worker(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, clock: Clock
) -> ReflectionWorker:
    chat = OllamaChat(http, ollama.url, "m")
    return ReflectionWorker(store, chat, character_name="Ash", deadline=2.0, clock=clock)


async def test_a_reflection_is_applied_once_and_the_summary_kept(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.chat_replies = [json.dumps(REFLECTION)]
    await _queue(store)
    worker = _worker(store, ollama, http, Clock())
    assert await worker.run_due() == 1
    assert await worker.run_due() == 0  # done: not reflected twice
    assert [m.text for m in await memories.list_for_user(store, 1)] == ["Plays the cello"]
    assert await history.summary(store, 10) == "Sam talks about music."
    sent = next(p for path, p in ollama.calls if path == "/api/chat")
    assert sent["format"]["properties"]["memories"]


async def test_failures_are_retried_with_backoff_then_dropped_and_counted(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.set("/api/chat", "500")
    await _queue(store)
    clock = Clock()
    worker = _worker(store, ollama, http, clock)
    delays = []
    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert await worker.run_due() == 0
        row = await store.fetchone("SELECT status, attempts, next_attempt_at FROM outbox")
        assert row is not None and row["attempts"] == attempt
        if attempt < MAX_ATTEMPTS:
            delays.append(row["next_attempt_at"] - clock.now)
            assert await worker.run_due() == 0 and ollama.count("/api/chat") == attempt  # not due
            clock.now = row["next_attempt_at"]
    assert delays == [BASE_DELAY * 2**i for i in range(MAX_ATTEMPTS - 1)]
    row = await store.fetchone("SELECT status FROM outbox")
    assert row is not None and row["status"] == "dropped"
    named = await counters.read_all(store)
    assert named["reflection_failed:BackendUnavailable"] == MAX_ATTEMPTS
    assert named["reflection_dropped_after_retries:BackendUnavailable"] == 1


async def test_invalid_json_and_timeouts_are_retried(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    await _queue(store)
    clock = Clock()
    worker = _worker(store, ollama, http, clock)
    ollama.chat_replies = ["sorry, no JSON today"]
    await worker.run_due()
    clock.now += BASE_DELAY
    ollama.set("/api/chat", "hang")
    await worker.run_due()
    named = await counters.read_all(store)
    assert named["reflection_failed:_Unusable"] == 1
    assert named["reflection_failed:BackendUnavailable"] == 1
    clock.now += 2 * BASE_DELAY
    ollama.set("/api/chat", "ok")
    ollama.chat_replies = [json.dumps(REFLECTION)]
    assert await worker.run_due() == 1


async def test_the_outbox_survives_a_restart(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    path = database
    async with await open_store(path) as store:
        await _queue(store)
    ollama.chat_replies = [json.dumps(REFLECTION)]
    async with await open_store(path) as store:
        assert await _worker(store, ollama, http, Clock()).run_due() == 1


async def test_a_complete_answer_with_text_after_it_is_applied_not_retried(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """A small model under a grammar may finish its object and go on (a closing fence, its end
    token spelled out, a second object). With no memory in it, the answer was thrown away whole
    as `invalid_json_salvaged`, its summary with it, and the exchange retried; many people at
    once, each with another trailer."""
    trailers = ["\n```", "</s>", ' {"memories": []}', "\nDone.", "<|im_end|>\n<|im_start|>"]
    for n in range(len(trailers)):
        exchange = Exchange(f"m{n}", 1 + n, 10 + n, "111", "Sam", "Bonjour", "Salut !")
        await store.transact(lambda tx, e=exchange: outbox.enqueue(tx, e, now=0.0))
    answers = iter(
        json.dumps({"memories": [], "summary": f"Résumé {n}"}) + t for n, t in enumerate(trailers)
    )

    def reply(payload: dict[str, object]) -> str:
        return next(answers)

    ollama.chat_reply = reply
    worker = _worker(store, ollama, http, Clock())
    assert await worker.run_due() == len(trailers)
    summaries = [await history.summary(store, 10 + n) for n in range(len(trailers))]
    assert sorted(summaries) == [f"Résumé {n}" for n in range(len(trailers))]
    named = await counters.read_all(store)
    assert "reflection_failed:_Unusable" not in named
    # Noted for each, but the closing fence alone, which was always taken away.
    assert named["reflection_dropped:trailing_text_ignored"] == len(trailers) - 1
