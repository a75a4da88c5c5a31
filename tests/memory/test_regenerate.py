"""Another answer to the same message (Engine.regenerate), swiping between the answers, and what
the memory learns from them: the version the person kept. On the `store` fixture's backend."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memory import (
    BackendUnavailable,
    Engine,
    Incoming,
    InvalidInput,
    MemoryConfig,
    ReflectionWorker,
    Regenerating,
    Settled,
    manage,
)
from memory.backends.chat import ChatResult
from memory.manage import forgetting
from memory.store import Store
from memory.store.tables import history
from tests.fakes import canary

STORY, GUILD = 10, "111"
SETTLE = 120.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Chat:
    """Numbered answers ("answer 1 to <message>", "answer 2 …") after a random latency; a
    reflection is answered with a memory quoting the reply it was given, and counted."""

    model = "fake-chat"

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.answers: dict[str, int] = {}
        self.prompts: list[str] = []
        self.reflected: list[dict[str, Any]] = []
        self.hold: asyncio.Event | None = None  # set: reflections wait for it
        self.reflecting = asyncio.Event()

    async def chat(self, messages: Sequence[Any], **kw: Any) -> ChatResult:
        await asyncio.sleep(self.rng.uniform(0, 0.01))
        if kw.get("schema") is not None:
            asked = json.loads(messages[-1]["content"])
            self.reflected.append(asked)
            self.reflecting.set()
            if self.hold is not None:
                await self.hold.wait()
            memory = {"text": f"Was told: {asked['character_reply']}", "kind": "fact",
                      "scope": "global", "confidence": 0.95}  # fmt: skip
            return ChatResult(json.dumps({"memories": [memory], "summary": "", "state": {}}))
        self.prompts.append(json.dumps(list(messages), ensure_ascii=False))
        said = str(messages[-1]["content"]).split(": ", 1)[-1]
        n = self.answers[said] = self.answers.get(said, 0) + 1
        return ChatResult(f"answer {n} to {said}")


def _engine(store: Store, chat: Chat, clock: Clock, **config: Any) -> Engine:
    settle = config.pop("settle", SETTLE)
    return Engine(
        store, embedder=None, chat=chat, clock=clock, config=MemoryConfig(**config), settle=settle
    )


def _worker(store: Store, chat: Chat, clock: Clock) -> ReflectionWorker:
    return ReflectionWorker(store, chat, character_name="Écho", clock=clock)


def _message(user: int, text: str, n: int = 0) -> Incoming:
    return Incoming(f"t:{user}:{n}", user, f"p{user}", STORY + user, GUILD, text)


async def _reply_in_history(store: Store, exchange_id: str) -> str:
    found = await history.by_source(store, f"{exchange_id}:reply")
    assert found is not None
    return found.content


async def test_another_answer_is_shown_and_swipes_go_back_and_forth(store: Store) -> None:
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock)
    first = await engine.turn(_message(1, "hello"))
    assert first is not None and first.text == "answer 1 to hello"
    heard: list[str] = []

    async def on_text(text: str) -> None:
        heard.append(text)

    again = await engine.regenerate(first.exchange_id, on_text=on_text)
    assert again.text == "answer 2 to hello"
    assert heard == []  # answered in one block: nothing shown before it is returned
    versions = await engine.versions(first.exchange_id)
    assert [v.text for v in versions.texts] == ["answer 1 to hello", "answer 2 to hello"]
    assert (versions.shown, versions.count) == (1, 2)
    # What the character reads next time is the answer shown.
    assert await _reply_in_history(store, first.exchange_id) == "answer 2 to hello"
    back = await engine.swipe(first.exchange_id, 0)
    assert back.text == "answer 1 to hello"
    assert await _reply_in_history(store, first.exchange_id) == "answer 1 to hello"
    assert (await engine.versions(first.exchange_id)).shown == 0
    with pytest.raises(InvalidInput, match="no answer 6"):
        await engine.swipe(first.exchange_id, 5)


async def test_the_answer_again_sees_the_history_as_it_was_before_the_message(
    store: Store,
) -> None:
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock, settle=0.0)
    first = await engine.turn(_message(1, "first words", 1))
    second = await engine.turn(_message(1, "second words", 2))
    assert first is not None and second is not None
    chat.prompts.clear()
    # A first message's answers may change until its reflection: none ran yet here.
    await engine.regenerate(first.exchange_id)
    [prompt] = chat.prompts
    assert "first words" in prompt and "second words" not in prompt
    assert "answer 1 to first words" not in prompt  # not its own earlier answer either


async def test_the_reflection_reads_only_the_version_kept(store: Store) -> None:
    chat, clock = Chat(), Clock()
    engine, worker = _engine(store, chat, clock), _worker(store, chat, clock)
    reply = await engine.turn(_message(1, "hello"))
    assert reply is not None
    assert await worker.run_due() == 0  # the versions are settling: nothing reflected yet
    await engine.regenerate(reply.exchange_id)
    await engine.regenerate(reply.exchange_id)
    clock.now += SETTLE / 2
    await engine.swipe(reply.exchange_id, 1)
    clock.now += SETTLE - 1
    assert await worker.run_due() == 0  # each swipe starts the quiet time again
    clock.now += 2
    assert await worker.run_due() == 1
    assert [r["character_reply"] for r in chat.reflected] == ["answer 2 to hello"]
    [memory] = await manage.list_memories(store, 1)
    assert memory.text == "Was told: answer 2 to hello"
    # Learned from: the answers can no longer change.
    with pytest.raises(Settled):
        await engine.regenerate(reply.exchange_id)
    with pytest.raises(Settled):
        await engine.swipe(reply.exchange_id, 0)


async def test_the_next_message_settles_the_versions_before_it(store: Store) -> None:
    chat, clock = Chat(), Clock()
    engine, worker = _engine(store, chat, clock), _worker(store, chat, clock)
    reply = await engine.turn(_message(1, "hello", 1))
    assert reply is not None
    await engine.regenerate(reply.exchange_id)
    await engine.turn(_message(1, "and then", 2))
    assert await worker.run_due() == 1  # the first exchange, at once; the second waits
    assert [r["character_reply"] for r in chat.reflected] == ["answer 2 to hello"]


async def test_a_swipe_during_the_reflection_has_it_done_again_from_the_kept_version(
    store: Store,
) -> None:
    chat, clock = Chat(), Clock()
    engine, worker = _engine(store, chat, clock), _worker(store, chat, clock)
    reply = await engine.turn(_message(1, "hello"))
    assert reply is not None
    await engine.regenerate(reply.exchange_id)
    clock.now += SETTLE + 1
    chat.hold = asyncio.Event()
    reflecting = asyncio.ensure_future(worker.run_due())
    await chat.reflecting.wait()  # the reflection was given answer 2
    await engine.swipe(reply.exchange_id, 0)
    chat.hold.set()
    assert await reflecting == 0  # its result, from the other version, is discarded
    assert await manage.list_memories(store, 1) == []
    clock.now += SETTLE + 1
    assert await worker.run_due() == 1
    assert [r["character_reply"] for r in chat.reflected] == [
        "answer 2 to hello", "answer 1 to hello",
    ]  # fmt: skip
    [memory] = await manage.list_memories(store, 1)
    assert memory.text == "Was told: answer 1 to hello"


async def test_another_answer_to_quick_lines_recalls_for_them_all(store: Store) -> None:
    """Two quick lines answered as one turn: the first names a time, the last does not. The
    answer again recalls for both lines, as the first answer did (same window of time)."""
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock)
    asked = _message(1, "what did I tell you yesterday?", 1)
    joined = replace(_message(1, "be quick", 2), joined=(asked,))
    first = await engine.turn(joined)
    assert first is not None and first.recall.window is not None
    again = await engine.regenerate(first.exchange_id)
    assert again.recall.window == first.recall.window


async def test_an_answer_without_a_memory_never_sees_it(store: Store) -> None:
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock)
    kept = await manage.remember(store, user_id=1, story_id=STORY + 1, origin=GUILD,
                                 text="Keeps bees on the roof", now=1.0)  # fmt: skip
    left = await manage.remember(store, user_id=1, story_id=STORY + 1, origin=GUILD,
                                 text="Plays the oboe every morning", now=1.0)  # fmt: skip
    reply = await engine.turn(_message(1, "what do you know about me?"))
    assert reply is not None
    assert {s.memory.id for s in reply.recall.selected} == {kept.memory_id, left.memory_id}
    chat.prompts.clear()
    again = await engine.regenerate(reply.exchange_id, without=frozenset({left.memory_id}))
    assert [s.memory.id for s in again.recall.selected] == [kept.memory_id]
    [prompt] = chat.prompts
    assert "Keeps bees" in prompt and "oboe" not in prompt
    # /why shows the selection behind the answer shown, for each version.
    why = await manage.why(store, 1, STORY + 1)
    assert why is not None and [s.memory.id for s in why.selected] == [kept.memory_id]
    await engine.swipe(reply.exchange_id, 0)
    why = await manage.why(store, 1, STORY + 1)
    assert why is not None
    assert {s.memory.id for s in why.selected} == {kept.memory_id, left.memory_id}
    # For that one answer only: the next one may use it again.
    third = await engine.regenerate(reply.exchange_id)
    assert {s.memory.id for s in third.recall.selected} == {kept.memory_id, left.memory_id}


async def test_versions_are_bounded_in_count_and_time(store: Store) -> None:
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock, versions=3, versions_hours=1.0)
    reply = await engine.turn(_message(1, "hello"))
    assert reply is not None
    for _ in range(4):
        await engine.regenerate(reply.exchange_id)
    versions = await engine.versions(reply.exchange_id)
    # The first answer and the oldest others went; the one shown (the newest) stayed.
    assert [v.text for v in versions.texts] == [f"answer {n} to hello" for n in (3, 4, 5)]
    await engine.swipe(reply.exchange_id, 0)
    await engine.regenerate(reply.exchange_id)  # the newest is shown: the oldest goes
    kept = [v.text for v in (await engine.versions(reply.exchange_id)).texts]
    assert kept == ["answer 4 to hello", "answer 5 to hello", "answer 6 to hello"]
    clock.now += 3601
    tidied = await forgetting.tidy(store, history_days=0, now=clock.now, versions_hours=1.0)
    assert tidied.versions == 3
    # The history keeps the one shown; the message is past the time its answers are kept.
    assert await _reply_in_history(store, reply.exchange_id) == "answer 6 to hello"
    assert (await engine.versions(reply.exchange_id)).count == 1
    with pytest.raises(Settled):
        await engine.regenerate(reply.exchange_id)


async def test_two_answers_again_at_once_one_runs_the_other_is_told(store: Store) -> None:
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock)
    reply = await engine.turn(_message(1, "hello"))
    assert reply is not None
    results = await asyncio.gather(
        engine.regenerate(reply.exchange_id), engine.regenerate(reply.exchange_id),
        return_exceptions=True,
    )  # fmt: skip
    assert sum(isinstance(r, Regenerating) for r in results) == 1
    assert (await engine.versions(reply.exchange_id)).count == 2


async def test_many_people_answered_again_at_once_each_keep_their_own(store: Store) -> None:
    """A concurrent twin: twelve people, each a turn, then answers again and swipes, and their
    next messages racing them, with random latencies; each person's history and reflection
    hold the version they kept, nobody else's."""
    chat, clock = Chat(seed=7), Clock()
    engine, worker = _engine(store, chat, clock), _worker(store, chat, clock)
    people = range(1, 13)
    rng = random.Random(3)

    async def person(user: int) -> str:
        reply = await engine.turn(_message(user, f"hello from {user}", 1))
        assert reply is not None
        for _ in range(rng.randint(1, 3)):
            await asyncio.sleep(rng.uniform(0, 0.01))
            await engine.regenerate(reply.exchange_id)
        count = (await engine.versions(reply.exchange_id)).count
        chosen = rng.randrange(count)
        kept = await engine.swipe(reply.exchange_id, chosen)
        # Their next message races one more answer to the first: the line orders them.
        again, following = await asyncio.gather(
            engine.regenerate(reply.exchange_id), engine.turn(_message(user, "next", 2)),
            return_exceptions=True,
        )  # fmt: skip
        assert following is not None and not isinstance(following, BaseException)
        if isinstance(again, Settled):  # the next message came first: the first settled
            return kept.text
        assert not isinstance(again, BaseException)
        return again.text

    kept = dict(zip(people, await asyncio.gather(*(person(u) for u in people)), strict=True))
    for user, text in kept.items():
        assert await _reply_in_history(store, f"t:{user}:1") == text
        assert text.endswith(f"hello from {user}")
    clock.now += SETTLE + 1
    while await worker.run_due():
        pass
    firsts = {r["user_message"]: r["character_reply"] for r in chat.reflected
              if r["user_message"].startswith("hello")}  # fmt: skip
    assert firsts == {f"hello from {u}": kept[u] for u in people}
    # One reflection per exchange: none was given a version that was not kept.
    assert len(chat.reflected) == 2 * len(people)


async def test_forgetting_the_message_erases_every_version(store: Store) -> None:
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock)
    reply = await engine.turn(_message(1, "QQXCANARY0001 hello"))
    assert reply is not None
    await engine.regenerate(reply.exchange_id)
    await engine.swipe(reply.exchange_id, 0)
    row = await store.fetchone("SELECT count(*) FROM reply_versions")
    assert row is not None and row[0] == 2
    message = await history.by_source(store, reply.exchange_id)
    await forgetting.forget_message(store, message, actor_id=1, engine=engine)
    row = await store.fetchone("SELECT count(*) FROM reply_versions")
    assert row is not None and row[0] == 0


@pytest.mark.parametrize("erased", ["message", "person"])
async def test_a_canary_in_a_discarded_answer_leaves_no_byte_once_forgotten(
    store: Store, tmp_path: Path, erased: str
) -> None:
    chat, clock = Chat(), Clock()
    engine = _engine(store, chat, clock)
    reply = await engine.turn(_message(1, "hello"))
    assert reply is not None
    secret = "QQZCANARY0002"
    real = chat.chat

    async def quoting(messages: Sequence[Any], **kw: Any) -> ChatResult:
        said = await real(messages, **kw)
        return ChatResult(f"{said.content} {secret}")

    chat.chat = quoting  # type: ignore[method-assign]
    await engine.regenerate(reply.exchange_id)
    chat.chat = real  # type: ignore[method-assign]
    await engine.swipe(reply.exchange_id, 0)  # the answer with the canary is not shown
    assert await _reply_in_history(store, reply.exchange_id) == "answer 1 to hello"
    assert await canary.stored(store, tmp_path, secret) > 0
    if erased == "message":
        message = await history.by_source(store, reply.exchange_id)
        await forgetting.forget_message(store, message, actor_id=1, engine=engine)
    else:
        await forgetting.forget_person(store, 1, engine=engine)
    for _ in range(100):  # as the erasures' job would, once no reader holds an old snapshot
        if not await forgetting.settle_pending(store):
            break
        await asyncio.sleep(0.05)
    assert await canary.stored(store, tmp_path, secret) == 0


async def test_any_run_of_answers_and_swipes_agrees_with_a_list(store: Store) -> None:
    """An oracle: the answers kept are a list (appended to, its oldest not shown dropped past
    the bound, one shown); after every step of random runs of new answers and swipes, the
    versions, the history's reply and the reflection's pending text all say what the list
    says."""
    rng = random.Random(11)
    for run in range(3):
        chat, clock = Chat(seed=run), Clock()
        keep = rng.randint(1, 4)
        engine = _engine(store, chat, clock, versions=keep)
        reply = await engine.turn(_message(run + 1, f"run {run}"))
        assert reply is not None
        kept, shown = [reply.text], 0
        for _ in range(12):
            if rng.random() < 0.5:
                again = await engine.regenerate(reply.exchange_id)
                kept.append(again.text)
                kept = kept[-keep:]
                shown = len(kept) - 1
            else:
                index = rng.randrange(len(kept) + 1)  # one past the end, now and then
                if index == len(kept):
                    with pytest.raises(InvalidInput):
                        await engine.swipe(reply.exchange_id, index)
                else:
                    assert (await engine.swipe(reply.exchange_id, index)).text == kept[index]
                    shown = index
            versions = await engine.versions(reply.exchange_id)
            assert [v.text for v in versions.texts] == kept
            assert versions.shown == shown
            assert await _reply_in_history(store, reply.exchange_id) == kept[shown]
            pending = await store.fetchone(
                "SELECT reply FROM outbox WHERE exchange_id = ?", (reply.exchange_id,)
            )
            assert pending is not None and pending[0] == kept[shown]


class Failing(Chat):
    """Fails each person's first message (the server down), then answers as Chat does."""

    def __init__(self) -> None:
        super().__init__()
        self.down = True

    async def chat(self, messages: Sequence[Any], **kw: Any) -> ChatResult:
        if self.down and kw.get("schema") is None:
            await asyncio.sleep(self.rng.uniform(0, 0.01))
            raise BackendUnavailable("the server is down")
        return await super().chat(messages, **kw)


async def test_people_whose_turns_failed_retry_at_once_and_each_message_is_answered_once(
    store: Store,
) -> None:
    """A failed turn leaves its message in the history; answering it again (another answer,
    /retry) gives its first answer: stored once, its reflection queued once, nobody else's."""
    chat, clock = Failing(), Clock()
    engine, worker = _engine(store, chat, clock, settle=0.0), _worker(store, chat, clock)
    people = range(1, 13)

    async def fail(user: int) -> None:
        with pytest.raises(BackendUnavailable):
            await engine.turn(_message(user, f"note {user}"))

    await asyncio.gather(*(fail(u) for u in people))
    chat.down = False
    replies = await asyncio.gather(*(engine.regenerate(f"t:{u}:0") for u in people))
    assert [r.text for r in replies] == [f"answer 1 to note {u}" for u in people]
    for user in people:
        said = await history.recent(store, STORY + user, limit=10)
        assert [m.content for m in said] == [f"note {user}", f"answer 1 to note {user}"]
    # Answered now, it is an exchange like any other: another answer, then its reflection.
    again = await engine.regenerate("t:1:0")
    assert again.text == "answer 2 to note 1"
    while await worker.run_due(limit=20):
        pass
    for user in people:
        texts = [m.text for m in await manage.list_memories(store, user)]
        expected = "answer 2 to note 1" if user == 1 else f"answer 1 to note {user}"
        assert texts == [f"Was told: {expected}"], user
    # Settled once reflected, like any answered message.
    with pytest.raises(Settled):
        await engine.regenerate("t:2:0")
