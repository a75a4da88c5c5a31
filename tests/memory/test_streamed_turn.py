"""A turn whose reply streams: the front end sees the text grow (each text a prefix of the
next, the last the reply stored), the final text is what is stored and reflected, a stream
that breaks keeps what arrived (flagged, counted, one log line without the text), and twenty
people streaming at once never pass the chat bound. On the `store` fixture's backend."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import render
from memory import Engine, Incoming, MemoryConfig, Reply, manage
from memory.backends.chat import Deadlined, OllamaChat
from memory.errors import BackendUnavailable
from memory.store import Store
from memory.store.tables import history
from memory.turn.admission import BoundedChat
from memory.turn.reply_cap import cap_reply, sure_prefix
from tests.fakes.ollama import FakeOllama

GUILD = "111"
REPLY = "Bonjour Zoé, ça va ? Le café est chaud ☕ et le thé 🍵 attend. Fin."
SECRET_WORD = "Zoé"


def _engine(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, *, limit: int = 4, **config: Any
) -> Engine:
    chat = BoundedChat(OllamaChat(http, ollama.url, "llama3.1:8b"), limit=limit)
    return Engine(store, embedder=None, chat=Deadlined(chat, "chat_timeout"),
                  config=MemoryConfig(**config))  # fmt: skip


def _message(user: int, text: str = "Salut !") -> Incoming:
    return Incoming(f"t:{user}", user, f"p{user}", 10 + user, GUILD, text)


class Shown:
    """An `on_text` that keeps every text it was given, and checks it is never re-entered."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.inside = False

    async def __call__(self, text: str) -> None:
        assert not self.inside
        self.inside = True
        await asyncio.sleep(0)
        self.texts.append(text)
        self.inside = False


async def _stored_reply(store: Store, message: Incoming) -> str | None:
    row = await history.by_source(store, f"{message.source_id}:reply")
    return None if row is None else row.content


def _prefixes(texts: list[str]) -> bool:
    return all(b.startswith(a) for a, b in itertools.pairwise(texts))


async def test_the_text_grows_as_it_streams_and_the_last_is_the_reply_stored(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.chat_reply = lambda payload: REPLY
    ollama.stream.on = True
    shown = Shown()
    engine = _engine(store, ollama, http)
    reply = await engine.turn(_message(1), on_text=shown)
    assert reply is not None and reply.text == REPLY and not reply.interrupted
    assert len(shown.texts) > 5 and _prefixes(shown.texts)
    assert shown.texts[-1] == reply.text == await _stored_reply(store, _message(1))


async def test_a_cut_reply_is_shown_only_up_to_where_the_cut_may_fall(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.chat_reply = lambda payload: "mot " * 100
    ollama.stream.on = True
    shown = Shown()
    reply = await _engine(store, ollama, http, max_reply_chars=100).turn(_message(1), on_text=shown)
    assert reply is not None and reply.cut > 0
    assert _prefixes([*shown.texts, reply.text])
    assert reply.text == await _stored_reply(store, _message(1))
    assert render.reply_chunks(reply)[-1].endswith(render.cut_line(reply.cut))


async def test_a_server_answering_in_one_block_leaves_the_reply_to_be_shown_whole(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.chat_reply = lambda payload: REPLY
    shown = Shown()
    reply = await _engine(store, ollama, http).turn(_message(1), on_text=shown)
    assert reply is not None and reply.text == REPLY and shown.texts == []


@pytest.mark.parametrize("how", ["drop", "malformed", "deadline"])
async def test_a_stream_that_breaks_keeps_what_arrived_and_says_so(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture,
    how: str,
) -> None:  # fmt: skip
    ollama.chat_reply = lambda payload: REPLY
    ollama.stream.on = True
    config: dict[str, Any] = {}
    if how == "drop":
        ollama.stream.drop_after = 3
    elif how == "malformed":
        ollama.stream.malformed_after = 3
    else:
        ollama.stream.delay, config["chat_deadline"] = 30.0, 0.5
    engine = _engine(store, ollama, http, **config)
    shown = Shown()
    with caplog.at_level(logging.DEBUG, logger="memory"):
        reply = await engine.turn(_message(1), on_text=shown)
    kept = "Bonjour" if how == "deadline" else "Bonjour Zoé, ça"
    assert reply is not None and reply.interrupted and reply.text == kept
    assert await _stored_reply(store, _message(1)) == kept
    assert engine.status().replies_interrupted == 1
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("memory")]
    assert len([line for line in ours if "interrupted" in line]) == 1
    assert all(SECRET_WORD not in line and "Salut" not in line for line in ours)
    # Both front ends render the reply with one line saying it was cut.
    chunks = render.reply_chunks(reply)
    assert chunks[-1].endswith(render.interrupted_line())
    assert "".join(chunks).count(render.interrupted_line()) == 1
    assert "replies interrupted midway: 1" in render.render_stats(
        await _stats(store), None, engine.status()
    )


async def _stats(store: Store) -> Any:
    return await manage.stats(store)


async def test_a_stream_that_breaks_before_any_text_fails_as_today(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    ollama.stream.on = True
    ollama.stream.drop_after = 0
    engine = _engine(store, ollama, http)
    with pytest.raises(BackendUnavailable):
        await engine.turn(_message(1), on_text=Shown())
    assert engine.status().replies_interrupted == 0
    assert await _stored_reply(store, _message(1)) is None


async def test_twenty_people_streaming_at_once_stay_under_the_chat_bound(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    rng = random.Random(32)
    ollama.chat_reply = lambda payload: f"{REPLY} {payload['messages'][-1]['content'][-12:]}"
    ollama.stream.on = True
    ollama.stream.delay = 0.002

    async def pause(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.03))

    ollama.pause = pause
    engine = _engine(store, ollama, http, limit=3)
    people = range(1, 21)
    shown = {user: Shown() for user in people}
    replies: list[Reply | None] = await asyncio.gather(
        *(engine.turn(_message(user, f"Salut, je suis n°{user:03d}"), on_text=shown[user])
          for user in people)
    )  # fmt: skip
    assert 1 < ollama.stream.most <= 3
    assert ollama.stream.streams == 20 and ollama.stream.now == 0
    for user, reply in zip(people, replies, strict=True):
        assert reply is not None and not reply.interrupted
        assert reply.text.endswith(f"n°{user:03d}")
        assert await _stored_reply(store, _message(user, f"Salut, je suis n°{user:03d}")) == (
            reply.text
        )
        assert _prefixes(shown[user].texts) and shown[user].texts[-1] == reply.text


@given(
    pieces=st.lists(st.text(alphabet=" ab\n🍵é", max_size=30), max_size=30),
    limit=st.integers(min_value=1, max_value=80),
)
def test_what_is_shown_is_always_a_prefix_of_what_is_kept(pieces: list[str], limit: int) -> None:
    received = ""
    shown = []
    for piece in pieces:
        received += piece
        shown.append(sure_prefix(received, limit))
    kept, _ = cap_reply(received.strip(), limit)
    assert _prefixes([*shown, kept])
    assert all(len(text) <= limit for text in shown)
