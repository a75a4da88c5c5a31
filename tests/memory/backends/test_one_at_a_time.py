"""A chat server that takes one request at a time and stops the reply it streams when another
request comes (llama-cpp-python's server by default): the reply it emptied is asked again alone,
the server is learned to take one request at a time, and from then on calls go one at a time,
the replies to people before the reflections. Against a loopback server that behaves so
(tests/fakes/interrupting.py); make test-real runs the real one."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from memory import Engine, Incoming
from memory.backends.chat import ChatResult, Deadlined, Message, OpenAIChat
from memory.backends.streaming import ChatStream
from memory.manage import setup
from memory.store import Store
from memory.turn.admission import BoundedChat
from memory.write.worker import ReflectionWorker
from tests.fakes.interrupting import serve_interrupting

ASK = [{"role": "user", "content": "Tu te souviens de moi ?"}]
SCHEMA = {"type": "object", "properties": {"summary": {"type": "string"}}}


async def _reply(chat: BoundedChat) -> str:
    return "".join([piece async for piece in chat.stream(ASK, deadline=10)])


async def _reflect(chat: BoundedChat, after: float) -> ChatResult:
    await asyncio.sleep(after)  # the next request comes while the reply is prepared
    return await chat.background().chat(ASK, schema=SCHEMA, deadline=10)


async def test_a_reply_a_reflection_emptied_is_asked_again_alone_and_the_server_learned(
    http: httpx.AsyncClient,
) -> None:
    learned: list[bool] = []

    async def keep() -> None:
        learned.append(True)

    async with serve_interrupting() as server:
        chat = BoundedChat(OpenAIChat(http, server.url, "m"), on_learned=keep)
        text, reflection = await asyncio.gather(_reply(chat), _reflect(chat, 0.01))
        assert server.interrupted == 1  # the server did stop it
        assert text.strip() == server.reply  # and the person got the whole reply
        assert reflection.content.startswith("{")
        assert (chat.one_at_a_time, chat.asked_again, learned) == (True, 1, [True])
        # From now on one at a time: the server stops nothing more.
        for _ in range(3):
            text, _ = await asyncio.gather(_reply(chat), _reflect(chat, 0.01))
            assert text.strip() == server.reply
        assert server.interrupted == 1


async def test_a_server_that_queues_requests_is_not_sent_them_one_at_a_time(
    http: httpx.AsyncClient,
) -> None:
    async with serve_interrupting(interrupts=False) as server:
        chat = BoundedChat(OpenAIChat(http, server.url, "m"))
        text, _ = await asyncio.gather(_reply(chat), _reflect(chat, 0.01))
        assert text.strip() == server.reply
        assert server.overlapping == 1
        assert (chat.one_at_a_time, chat.asked_again) == (False, 0)


class _Held:
    """A chat backend whose calls wait until released, recording the order they started."""

    model = "held"

    def __init__(self) -> None:
        self.started: list[str] = []
        self.go: dict[str, asyncio.Event] = {}

    async def chat(
        self, messages: Sequence[Message], *, schema: Any = None, deadline: float,
        max_tokens: int | None = None,
    ) -> ChatResult:  # fmt: skip
        name = str(messages[-1]["content"])
        self.started.append(name)
        await self.go.setdefault(name, asyncio.Event()).wait()
        return ChatResult(f"answer to {name}")

    def stream(
        self, messages: Sequence[Message], *, deadline: float, max_tokens: int | None = None
    ) -> ChatStream:
        async def pieces(out: ChatStream) -> Any:
            yield (await self.chat(messages, deadline=deadline)).content

        return ChatStream(pieces)


async def test_one_at_a_time_the_replies_go_before_the_reflections_waiting() -> None:
    inner = _Held()
    chat = BoundedChat(inner, one_at_a_time=True)

    def ask(name: str, *, reply: bool) -> asyncio.Future[ChatResult]:
        backend = chat if reply else chat.background()
        return asyncio.ensure_future(backend.chat([{"role": "user", "content": name}], deadline=10))

    first = ask("reflection 1", reply=False)
    await asyncio.sleep(0)
    waiting = [ask("reflection 2", reply=False), ask("reflection 3", reply=False)]
    await asyncio.sleep(0)
    replies = [ask("reply A", reply=True), ask("reply B", reply=True)]
    await asyncio.sleep(0)
    assert inner.started == ["reflection 1"]  # one at a time
    for name in ["reflection 1", "reply A", "reply B", "reflection 2", "reflection 3"]:
        inner.go.setdefault(name, asyncio.Event()).set()
    await asyncio.gather(first, *waiting, *replies)
    assert inner.started == ["reflection 1", "reply A", "reply B", "reflection 2",
                             "reflection 3"]  # fmt: skip


async def test_a_call_cancelled_while_it_waits_gives_its_turn_on() -> None:
    inner = _Held()
    chat = BoundedChat(inner, one_at_a_time=True)
    first = asyncio.ensure_future(chat.chat([{"role": "user", "content": "a"}], deadline=10))
    await asyncio.sleep(0)
    gone = asyncio.ensure_future(chat.chat([{"role": "user", "content": "b"}], deadline=10))
    last = asyncio.ensure_future(chat.chat([{"role": "user", "content": "c"}], deadline=10))
    await asyncio.sleep(0)
    gone.cancel()
    for name in "ac":
        inner.go.setdefault(name, asyncio.Event()).set()
    assert (await first).content == "answer to a"
    assert (await last).content == "answer to c"
    assert inner.started == ["a", "c"]


@pytest.mark.parametrize("seed", [3])
async def test_every_turn_gets_its_reply_while_reflections_start_beside_the_next_turns(
    store: Store, http: httpx.AsyncClient, seed: int
) -> None:
    """The concurrent twin of what a person saw on llama-cpp-python's server (4 turns of 13
    ended in "empty reply"): several people talk, each exchange's reflection starting as the
    next turns begin; every turn gets a reply, and once the server is learned, the whole one."""
    rng = random.Random(seed)
    async with serve_interrupting(think=0.02, pace=0.002) as server:
        bounded = BoundedChat(OpenAIChat(http, server.url, "m"))
        engine = Engine(store, embedder=None, chat=Deadlined(bounded, "chat_timeout"))
        worker = ReflectionWorker(
            store, Deadlined(bounded.background(), "reflection_timeout"),
            character_name="Écho", deadline=10.0,
        )  # fmt: skip
        replies: list[str] = []
        reflections: list[asyncio.Task[Any]] = []

        async def person(user: int) -> None:
            for n in range(4):
                await asyncio.sleep(rng.uniform(0, 0.02))
                source = f"t:{user}:{n}"
                reply = await engine.turn(Incoming(source, user, f"p{user}", 10 + user, "111",
                                                   f"Message {n}"))  # fmt: skip
                assert reply is not None
                replies.append(reply.text)
                await engine.flush_pending()
                reflections.append(asyncio.ensure_future(worker.reflect_now(source)))

        await asyncio.gather(*(person(u) for u in range(1, 5)))
        await asyncio.gather(*reflections)
        assert len(replies) == 16
        # Every person got a reply: one emptied was asked again whole; one cut short after its
        # first words (before the server was learned) kept what had come, as it was shown.
        assert all(t.strip() and server.reply.startswith(t.strip()) for t in replies)
        # Learned on the first calls that overlapped; from then on nothing is stopped.
        assert bounded.one_at_a_time
        stopped = server.interrupted
        assert 1 <= stopped <= 4
        replies.clear()
        await asyncio.gather(*(person(u) for u in range(5, 9)))
        await asyncio.gather(*reflections)
        assert len(replies) == 16 and all(t.strip() == server.reply for t in replies)
        assert server.interrupted == stopped


async def test_what_was_learned_is_kept_for_the_next_start(store: Store) -> None:
    assert not await setup.one_at_a_time(store, "http://127.0.0.1:8080/", "m")
    await setup.on_one_at_a_time(store, "http://127.0.0.1:8080/", "m")()
    assert await setup.one_at_a_time(store, "http://127.0.0.1:8080", "m")
    assert not await setup.one_at_a_time(store, "http://127.0.0.1:8080", "other")
