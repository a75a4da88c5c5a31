"""A streamed reply on Discord, with real discord.py objects: what is posted and edited (count,
pace, content, mentions, references) while a scripted engine writes the reply piece by piece on
a virtual clock, and what the messages say at the end."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import random
import re
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from bot import render
from bot.config import Settings
from bot.discord import streaming
from bot.discord.app import EchoBot
from bot.discord.cogs.conversation import UNAVAILABLE, Conversation
from memory import BackendUnavailable, Incoming, OnText, Recall, Reply
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.fakes.ollama import Chaos, FakeOllama

CHANNEL = 10  # configured in tests.bot.discord.test_discord._bot_with
INTERVAL = 1.0
# When each scripted turn gave its reply back, by source id, on the virtual clock.
ENDED: dict[str, float] = {}


class VirtualClock:
    """Time that moves only when every task waits: `sleep` wakes in the order of its virtual
    deadlines, so a schedule of a minute runs in milliseconds and the same way each run."""

    def __init__(self) -> None:
        self.now = 0.0
        self._timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (self.now + max(seconds, 0.0), next(self._order), woken))
        await woken

    async def run(self, *steps: Awaitable[object]) -> None:
        done = asyncio.ensure_future(asyncio.gather(*steps))
        while not done.done():
            for _ in range(20):  # everything runs until it waits on the clock or on I/O
                await asyncio.sleep(0)
            while self._timers and self._timers[0][2].cancelled():
                heapq.heappop(self._timers)
            if self._timers and not done.done():
                at, _, woken = heapq.heappop(self._timers)
                self.now = max(self.now, at)
                woken.set_result(None)
            elif not done.done():
                await asyncio.sleep(0.001)  # a real wait (the database): let it finish
        done.result()


def _words(n: int, seed: int = 0) -> str:
    """A reply of n words, sentences of 6 to 12 words."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        sentence = [rng.choice(["le", "chat", "dort", "sous", "la", "lune", "et", "rêve"])
                    for _ in range(rng.randint(6, 12))]  # fmt: skip
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += "."
        out.extend(sentence)
    return " ".join(out[:n]).rstrip(".") + "."


def _numbered(n: int) -> str:
    """A reply of n words, each word once (mot0 … mot<n-1>), sentences of 8, paragraphs of 80:
    where a word is shown can be read back without doubt."""
    out = []
    for i in range(n):
        word = f"mot{i}"
        if i % 8 == 7 or i == n - 1:
            word += "." if i % 80 != 79 else ".\n\n"
        out.append(word)
    return " ".join(out).replace("\n\n ", "\n\n").strip()


def _reach(words: list[str], contents: list[str]) -> int:
    """How far into `words` the messages can be read in order without a gap: a message may
    repeat the end of the one before it (text moving into it), never skip a word."""
    reached = 0
    for content in contents:
        shown = content.split()
        if not shown:
            continue
        start = words.index(shown[0]) if shown[0] in words else -1
        if start < 0 or start > reached or words[start : start + len(shown)] != shown:
            break
        reached = max(reached, start + len(shown))
    return reached


def _assert_never_out_of_sight(rec: fakes.Recorder, message_id: int, words: list[str]) -> None:
    """After each post and edit, the reply reads further or as far, never less, to the end."""
    posts = _replies_to(rec, message_id)
    now: dict[int, str] = {}
    reached = 0
    for s in rec.sent:
        target = (
            s.made
            if s.made in posts
            else int(s.path.rsplit("/", 1)[1] or 0)
            if (s.method == "PATCH" and not s.refused and s.path.rsplit("/", 1)[-1].isdigit())
            else 0
        )
        if target not in posts:
            continue
        now[target] = str(s.payload["content"])
        after = _reach(words, [now[p] for p in posts if p in now])
        assert after >= reached, (reached, after)
        reached = after
    assert reached == len(words)


def _pieces(text: str) -> list[str]:
    """The reply as a model streams it: a word and its space at a time."""
    return re.findall(r"\S+\s*", text)


def _script(
    echo: EchoBot,
    clock: VirtualClock,
    replies: dict[int, tuple[str, dict[str, Any]]],
    *,
    delay: Callable[[], float] = lambda: 0.2,
    fail_after: int | None = None,
) -> list[Reply]:
    """Make the engine answer each person (user id -> (text, Reply fields)) piece by piece,
    one piece every `delay()` virtual seconds; return the replies it gave back."""
    answered: list[Reply] = []

    async def turn(
        incoming: Incoming,
        *,
        admitted: bool = False,
        on_text: OnText | None = None,
        on_answer: Callable[[], None] | None = None,
    ) -> Reply:
        text, extra = replies[incoming.user_id]
        so_far = ""
        for n, piece in enumerate(_pieces(text)):
            if n == fail_after:
                raise BackendUnavailable("the stream stopped")
            await clock.sleep(delay())
            so_far += piece
            if on_text is not None:
                await on_text(so_far.strip())
        await clock.sleep(delay())
        if on_answer is not None:
            on_answer()
        reply = Reply(text, incoming.source_id, Recall(0, (), False), **extra)
        answered.append(reply)
        ENDED[incoming.source_id] = clock.now
        return reply

    echo.runtime.engine.turn = turn  # type: ignore[method-assign]
    return answered


def _pace(echo: EchoBot, clock: VirtualClock, rec: fakes.Recorder) -> None:
    cog: Any = echo.get_cog("Conversation")
    cog.pace = streaming.Pace(interval=INTERVAL, clock=clock, sleep=clock.sleep)
    rec.clock = clock


def _say(echo: EchoBot, channel: Any, author: int, content: str = "raconte") -> Any:
    message = fakes.message(echo, channel, author_id=author, content=content)
    return message, echo.get_cog("Conversation").on_message(message)  # type: ignore[union-attr]


def _channel_messages(rec: fakes.Recorder, channel: int) -> list[fakes.Sent]:
    return [s for s in rec.sent if s.path.startswith(f"/channels/{channel}/messages")]


def _replies_to(rec: fakes.Recorder, message_id: int) -> list[int]:
    """The ids of the messages posted as replies to `message_id`, in order."""
    return [
        s.made for s in rec.sent
        if s.method == "POST" and s.payload.get("message_reference", {}).get("message_id")
        == message_id
    ]  # fmt: skip


def _history(rec: fakes.Recorder, posted: int) -> list[tuple[str, float]]:
    """Each text a posted message showed, with when: its post, then its accepted edits."""
    post = next(s for s in rec.sent if s.made == posted)
    edits = [s for s in _edits_of(rec, posted) if not s.refused]
    return [(str(s.payload["content"]), s.at) for s in [post, *edits]]


def _left(rec: fakes.Recorder, message_id: int) -> list[str]:
    """What the replies to `message_id` say at the end."""
    return [_history(rec, posted)[-1][0] for posted in _replies_to(rec, message_id)]


def _edits_of(rec: fakes.Recorder, posted: int) -> list[fakes.Sent]:
    return [s for s in rec.sent if s.method == "PATCH" and s.path.endswith(f"/messages/{posted}")]


def _assert_paced(rec: fakes.Recorder, posted: int) -> None:
    """No two writes of one message closer than the interval (its post, then each edit)."""
    times = [at for _, at in _history(rec, posted)]
    assert all(b >= a + INTERVAL for a, b in itertools.pairwise(times)), times


def _assert_silent(rec: fakes.Recorder) -> None:
    """Every post and every edit to a channel mentions no one (not even the person replied to)."""
    writes = [s for s in rec.sent if s.method in ("POST", "PATCH") and "content" in s.payload]
    assert writes
    for s in writes:
        allowed = s.payload["allowed_mentions"]
        assert allowed["parse"] == [] and set(allowed) <= {"parse", "replied_user"}
        assert allowed.get("replied_user", False) is False


async def test_a_reply_is_posted_after_its_first_sentence_then_edited_at_the_pace(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    clock = VirtualClock()
    _pace(echo, clock, rec)
    text = _words(120)
    answered = _script(echo, clock, {1: (text, {})}, delay=lambda: 0.1)
    message, answering = _say(echo, fakes.text_channel(echo, CHANNEL), 1)
    await clock.run(answering)
    [reply] = answered
    [posted] = _replies_to(rec, message.id)
    history = _history(rec, posted)
    # Posted as soon as the first sentence had come (of 120 pieces, 0.1 s each).
    first_sentence = text[: text.index(".") + 1]
    assert history[0][0] == first_sentence and history[0][1] < 1.5
    # Edited as it came, at most once a second: fewer edits than pieces, more than one.
    edits = _edits_of(rec, posted)
    assert 5 <= len(edits) < len(_pieces(text)) / 3
    _assert_paced(rec, posted)
    # Each text shown grows the one before at a word's end: never half a word, nothing taken back.
    for (before, _), (after, _) in itertools.pairwise(history):
        assert after.startswith(before) and (after == before or after[len(before)].isspace())
    assert _left(rec, message.id) == render.reply_chunks(reply)
    # Done, and the person's line released, at most one interval after the reply was written.
    assert clock.now <= ENDED[reply.exchange_id] + INTERVAL
    _assert_silent(rec)
    # "typing…" once, before the first post, and not again.
    typing = [n for n, s in enumerate(rec.sent) if s.path.endswith("/typing")]
    assert len(typing) == 1 and typing[0] < rec.sent.index(
        next(s for s in rec.sent if s.made == posted)
    )


async def test_a_long_reply_continues_in_a_second_message_at_2000_characters(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    clock = VirtualClock()
    _pace(echo, clock, rec)
    text = _numbered(500)
    answered = _script(echo, clock, {1: (text, {})}, delay=lambda: 0.05)
    message, answering = _say(echo, fakes.text_channel(echo, CHANNEL), 1)
    await clock.run(answering)
    [reply] = answered
    chunks = render.reply_chunks(reply)
    assert len(chunks) >= 2  # the reply is past one message
    posts = _replies_to(rec, message.id)
    assert _left(rec, message.id) == chunks
    for posted, final in zip(posts, chunks, strict=True):
        assert len(final) <= render.DISCORD_LIMIT
        _assert_paced(rec, posted)
        for shown, _ in _history(rec, posted):  # whole words only
            assert all(word in text.split() for word in shown.split())
    # Text moving into the second message never leaves the screen, nothing is taken back.
    _assert_never_out_of_sight(rec, message.id, text.split())
    # The second message starts once the first is full, while the reply is still written.
    second = next(s for s in rec.sent if s.made == posts[1])
    assert second.at < clock.now - 10 * 0.05
    _assert_silent(rec)


@pytest.mark.parametrize("status", [404, 500, 429])
async def test_an_edit_discord_refuses_loses_nothing(
    bot: tuple[EchoBot, fakes.Recorder], status: int, caplog: pytest.LogCaptureFixture
) -> None:
    echo, rec = bot
    clock = VirtualClock()
    _pace(echo, clock, rec)
    text = _numbered(150)
    answered = _script(echo, clock, {1: (text, {})})
    rec.refuse_edits = [0, status]  # the second edit: a moderator deleted it, a 5xx, a 429
    message, answering = _say(echo, fakes.text_channel(echo, CHANNEL), 1)
    with caplog.at_level(logging.DEBUG):
        await clock.run(answering)
    [reply] = answered
    posts = _replies_to(rec, message.id)
    assert len(posts) == 2
    refused = _edits_of(rec, posts[0])
    assert len(refused) == 2  # the refused one was the last edit that message got
    # What the first message showed, then the rest in a new message: the whole reply.
    left = _left(rec, message.id)
    assert left[0] == refused[0].payload["content"]
    assert " ".join(left).split() == reply.text.split()
    _assert_never_out_of_sight(rec, message.id, text.split())
    _assert_paced(rec, posts[1])
    _assert_silent(rec)
    cog: Any = echo.get_cog("Conversation")
    assert cog.streams.refused == 1
    said = " ".join(r.getMessage() for r in caplog.records)
    assert f"message {posts[0]}" in said and "mot" not in said


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        ({"cut": 1234}, render.cut_line(1234)),
        ({"interrupted": True}, render.interrupted_line()),
        ({"greeting": "Bienvenue, voyageur."}, "Bienvenue, voyageur."),
    ],
)
async def test_the_messages_end_as_the_whole_reply_is_sent(
    bot: tuple[EchoBot, fakes.Recorder], extra: dict[str, Any], line: str
) -> None:
    echo, rec = bot
    clock = VirtualClock()
    _pace(echo, clock, rec)
    answered = _script(echo, clock, {1: (_words(60, seed=7), extra)})
    message, answering = _say(echo, fakes.text_channel(echo, CHANNEL), 1)
    await clock.run(answering)
    [reply] = answered
    left = _left(rec, message.id)
    assert left == render.reply_chunks(reply)
    assert "\n".join(left).count(line) == 1
    if "greeting" in extra:
        assert left[0] == line  # the greeting first, the reply after it
    for posted in _replies_to(rec, message.id):
        _assert_paced(rec, posted)
    _assert_silent(rec)


async def test_a_turn_that_fails_midway_keeps_what_was_posted_and_says_so(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    clock = VirtualClock()
    _pace(echo, clock, rec)
    text = _words(80, seed=9)
    _script(echo, clock, {1: (text, {})}, fail_after=40)
    message, answering = _say(echo, fakes.text_channel(echo, CHANNEL), 1)
    await clock.run(answering)
    *partial, unavailable = _left(rec, message.id)
    assert unavailable == UNAVAILABLE
    assert len(partial) == 1 and text.startswith(partial[0]) and len(partial[0].split()) >= 20
    sent = len(rec.sent)
    await clock.run(clock.sleep(60))  # the pacing task is gone: nothing more is sent
    assert len(rec.sent) == sent
    _assert_silent(rec)


async def test_twenty_people_streaming_at_once_each_get_their_own_pace(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    clock = VirtualClock()
    _pace(echo, clock, rec)
    rng = random.Random(32)
    people = list(range(2001, 2021))
    replies = {person: (_words(rng.choice([15, 80, 400]), seed=person), {}) for person in people}
    answered = _script(echo, clock, replies, delay=lambda: rng.uniform(0.01, 0.4))
    channels = [fakes.text_channel(echo, CHANNEL)] + [
        fakes.dm_channel(echo, 40 + n, person) for n, person in enumerate(people[:5])
    ]
    said = [_say(echo, channels[n % len(channels)], person) for n, person in enumerate(people)]
    await clock.run(*(answering for _, answering in said))
    by_source = {reply.exchange_id: reply for reply in answered}
    assert len(by_source) == len(people)
    pieces = edits = 0
    for message, _ in said:
        reply = by_source[f"discord:{message.id}"]
        assert _left(rec, message.id) == render.reply_chunks(reply)
        for posted in _replies_to(rec, message.id):
            _assert_paced(rec, posted)
            edits += len(_edits_of(rec, posted))
            last = max(s.at for s in rec.sent if s.made == posted or s.path.endswith(f"/{posted}"))
            assert last <= ENDED[reply.exchange_id] + INTERVAL
        pieces += len(_pieces(reply.text))
    assert 0 < edits < pieces / 3
    _assert_silent(rec)


async def test_a_loopback_model_reply_ends_as_the_whole_reply_is_sent(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    """The real engine and chat backend: what the messages say at the end."""
    echo, rec = bot
    cog: Any = echo.get_cog("Conversation")
    cog.pace = streaming.Pace(interval=0.01, first_wait=0.01)
    text = _words(500, seed=11) + " Ping @everyone and <@&555>."
    ollama.chat_replies = [text]
    message, answering = _say(echo, fakes.text_channel(echo, CHANNEL), 1)
    await answering
    left = _left(rec, message.id)
    assert len(left) >= 2 and left == render.split_message(render.defang(text))
    assert "@everyone" not in "".join(left)
    _assert_silent(rec)


@pytest.mark.parametrize("drop_after", [None, 150])
async def test_a_reply_the_loopback_model_streams_is_posted_as_it_comes(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama, drop_after: int | None
) -> None:
    """The real engine and the loopback model streaming a word a millisecond: edited as it
    comes, fewer edits than pieces, ending as the whole reply is sent; a stream that breaks
    midway ends with the line saying so, once."""
    script = ollama.stream
    echo, rec = bot
    cog: Any = echo.get_cog("Conversation")
    cog.pace = streaming.Pace(interval=0.05, first_wait=0.05)
    text = _numbered(450)
    ollama.chat_replies = [text]
    script.on, script.delay, script.drop_after = True, 0.001, drop_after
    message, answering = _say(echo, fakes.text_channel(echo, CHANNEL), 1)
    await answering
    posts = _replies_to(rec, message.id)
    edits = sum(len(_edits_of(rec, posted)) for posted in posts)
    left = _left(rec, message.id)
    if drop_after is None:
        assert 0 < edits < len(text.split()) and left == render.split_message(text)
    else:
        assert "\n".join(left).count(render.interrupted_line()) == 1
        assert " ".join(left).split()[:drop_after] == text.split()[:drop_after]
    _assert_silent(rec)


async def test_exclude_from_context_on_any_streamed_message_finds_the_stored_reply(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, rec = bot
    channel = fakes.text_channel(echo, CHANNEL)
    ollama.chat_replies = [_numbered(450)]
    person = 1001
    message, answering = _say(echo, channel, person)
    await answering
    posts = _replies_to(rec, message.id)
    assert len(posts) >= 2
    # The second message, as Discord holds it: a reply to the person's message.
    post = next(s for s in rec.sent if s.made == posts[1])
    referenced = post.payload["message_reference"]["message_id"]
    second = fakes.message(
        echo, channel, author_id=fakes.BOT_ID, author_bot=True, message_id=posts[1],
        content=_left(rec, message.id)[1],
        reply_to=fakes.payload_of(message) if referenced == message.id else None,
    )  # fmt: skip
    await echo.tree._call(
        fakes.message_command(
            echo, "Exclude from context", user_id=person, channel_id=CHANNEL, target=second
        )
    )
    assert rec.contents()[-1].startswith("Excluded from the context")
    stored = await history.recent(echo.runtime.store, CHANNEL, limit=5, include_excluded=True)
    assert [m.excluded for m in stored] == [False, True]  # the reply, not the person's message


async def test_twenty_people_through_the_real_engine_each_get_their_own_reply(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    """The real engine under its chat bound, the loopback model answering (streaming)
    at random latencies: every person's messages end as their own reply is sent, none
    mentions anyone (the pace of each message: the scripted twin above, on its clock)."""
    echo, rec = bot
    ollama.chaos = Chaos(seed=32, max_delay=0.05, failure_rate=0.0)
    ollama.stream.on = True

    def reply_for(payload: dict[str, Any]) -> str:
        person = re.findall(r"person (\d+)", payload["messages"][-1]["content"])[-1]
        return f"Pour {person} : " + _words(30 + int(person) % 7 * 50, seed=int(person))

    ollama.chat_reply = reply_for
    people = list(range(2001, 2021))
    channels = [fakes.text_channel(echo, CHANNEL)] + [
        fakes.dm_channel(echo, 60 + n, person) for n, person in enumerate(people[:3])
    ]
    said = [
        _say(echo, channels[n % len(channels)], person, f"person {person} parle")
        for n, person in enumerate(people)
    ]
    await asyncio.gather(*(answering for _, answering in said))
    for (message, _), person in zip(said, people, strict=True):
        expected = reply_for({"messages": [{"content": f"person {person}"}]})
        assert _left(rec, message.id) == render.split_message(render.defang(expected))
    _assert_silent(rec)


def test_the_edit_interval_setting_paces_the_conversation() -> None:
    settings = Settings(discord={"edit_interval": 2.5})  # type: ignore[arg-type]
    cog = Conversation(SimpleNamespace(runtime=SimpleNamespace(settings=settings)))  # type: ignore[arg-type]
    assert cog.pace.interval == 2.5
    with pytest.raises(ValidationError):  # faster than Discord allows a message
        Settings(discord={"edit_interval": 0.1})  # type: ignore[arg-type]


words = st.text(alphabet="abc@é<&>", min_size=1, max_size=30)
separators = st.sampled_from([" ", " ", " ", "\n", "\n\n", ". ", "! "])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(words, separators), min_size=1, max_size=400))
def test_a_message_full_while_written_is_final_and_text_only_moves_forward(
    parts: list[tuple[str, str]],
) -> None:
    """At every point of the writing: the messages already full say what they say at the end,
    and the one being written holds only text of its own chunk or later (moved, never lost)."""
    text = "".join(word + separator for word, separator in parts)
    final = render.split_message(render.defang(text))
    for end in range(1, len(text) + 1, 37):
        shown = render.split_message(render.defang(streaming.visible(text[:end])))
        if not shown:
            continue
        assert shown[:-1] == final[: len(shown) - 1]
        rest = " ".join(final[len(shown) - 1 :]).split()
        assert rest[: len(shown[-1].split())] == shown[-1].split()


def test_the_layout_keeps_a_refused_message_and_carries_the_rest() -> None:
    chunks = ["Le chat dort sous la lune.", "Et rêve."]
    assert streaming.layout(chunks, []) == chunks
    assert streaming.layout(chunks, [("Le chat", True)]) == chunks
    # Refused while it showed "Le chat": it keeps that, the rest of its chunk comes next.
    assert streaming.layout(chunks, [("Le chat", False)]) == [
        "Le chat", "dort sous la lune.", "Et rêve.",
    ]  # fmt: skip
    # Refused with another text than its chunk's start (a greeting came first): nothing dropped.
    assert streaming.layout(["Bonjour.", *chunks], [("Le chat", False)]) == [
        "Le chat", "Bonjour.", *chunks,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "shown"),
    [("", ""), ("Bonj", ""), ("Bonjour à", "Bonjour"), ("Bonjour à tous. ", "Bonjour à tous.")],
)
def test_only_whole_words_are_shown_while_written(text: str, shown: str) -> None:
    assert streaming.visible(text) == shown
