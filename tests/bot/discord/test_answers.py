"""Another answer, ◀ ▶ and /why's "Without #id" on Discord: real discord.py objects, the button
presses dispatched from gateway payloads as Discord sends them, against the loopback Ollama."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import discord

from bot.discord.app import EchoBot
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _remember, _say
from tests.fakes.ollama import FakeOllama

MANAGE_MESSAGES = 1 << 13
# Long enough that nothing settles while a test runs: each answer is kept until it does.
SETTLING = {"conversation": {"settle_seconds": 3600}}


def _numbered(ollama: FakeOllama, *, seed: int = 0) -> list[dict[str, Any]]:
    """Answers numbered per message ("answer 2 to: hello"); a reflection remembers the reply it
    was given. Returns what each reflection was given."""
    given: list[dict[str, Any]] = []
    counts: dict[str, int] = {}

    def reply(payload: dict[str, Any]) -> str:
        said = str(payload["messages"][-1]["content"])
        if "format" in payload:
            asked = json.loads(said)
            given.append(asked)
            memory = {"text": f"Heard {asked['character_reply']}", "kind": "fact",
                      "scope": "global", "confidence": 0.95}  # fmt: skip
            return json.dumps({"memories": [memory], "summary": "", "state": {}})
        said = said.split(": ", 1)[-1]
        counts[said] = counts.get(said, 0) + 1
        return f"answer {counts[said]} to: {said}"

    ollama.chat_reply = reply
    return given


def _posted(rec: fakes.Recorder, index: int = -1) -> dict[str, Any]:
    """A message the bot posted in the channel, as Discord would give it back in a press."""
    body = [s for s in rec.sent if s.method == "POST" and s.path.endswith("/messages")][index]
    return {
        "id": str(90_000 + index % 1000), "channel_id": str(CHANNEL),
        "author": fakes.user_payload(fakes.BOT_ID, "Echo", bot=True),
        "content": body.payload["content"], "timestamp": "2026-11-30T00:00:00+00:00",
        "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
        "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "type": 19,
        "components": body.payload.get("components", []),
    }  # fmt: skip


def _buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for row in message.get("components", []) for c in row["components"]]


def _custom_id(message: dict[str, Any], label: str) -> str:
    return next(str(b["custom_id"]) for b in _buttons(message) if b.get("label") == label)


async def _press(
    echo: EchoBot, message: dict[str, Any], label: str, user: int, *, permissions: int = 0
) -> None:
    """Press the button `label` of `message` as Discord delivers it, and wait for its work."""
    payload = fakes.component_payload(
        user_id=user, channel_id=CHANNEL, custom_id=_custom_id(message, label),
        message=message, permissions=permissions,
    )  # fmt: skip
    echo._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
    store = echo._connection._view_store
    while tasks := set(store._ViewStore__tasks):  # type: ignore[attr-defined]
        await asyncio.gather(*tasks)


def _edits(rec: fakes.Recorder, since: int) -> list[dict[str, Any]]:
    """The edits of the reply since `since`: a press's message update, or the edit of the
    message after a deferred press."""
    found = []
    for s in rec.sent[since:]:
        body = s.payload.get("data", s.payload) if s.path.endswith("/callback") else s.payload
        if s.method in ("PATCH", "POST") and "content" in body and "components" in body:
            found.append(body)
    return found


def _private(rec: fakes.Recorder, since: int) -> list[str]:
    return [
        str(s.payload.get("data", s.payload).get("content"))
        for s in rec.sent[since:]
        if s.payload.get("data", s.payload).get("flags") == fakes.EPHEMERAL
    ]


def _with_buttons(edit: dict[str, Any]) -> dict[str, Any]:
    """The reply as it is after an edit, to press its buttons next."""
    return {**edit, "id": "90999", "channel_id": str(CHANNEL),
            "author": fakes.user_payload(fakes.BOT_ID, "Echo", bot=True),
            "timestamp": "2026-11-30T00:00:00+00:00", "edited_timestamp": None, "tts": False,
            "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [],
            "embeds": [], "pinned": False, "type": 19}  # fmt: skip


async def test_another_answer_then_back_and_forth(tmp_path: Path, ollama: FakeOllama) -> None:
    _numbered(ollama)
    async with _bot_with(tmp_path, ollama, **SETTLING) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "hello there")
        reply = _posted(rec)
        assert reply["content"] == "answer 1 to: hello there"
        assert [b["label"] for b in _buttons(reply)] == ["Another answer"]
        mark = len(rec.sent)
        await _press(echo, reply, "Another answer", ALICE)
        [edit] = _edits(rec, mark)
        assert edit["content"] == "answer 2 to: hello there"
        assert edit["allowed_mentions"] == {"parse": []}  # no mentions on the edit
        labels = [(b["label"], b.get("disabled", False)) for b in _buttons(edit)]
        assert labels == [("◀", False), ("2/2", True), ("▶", True), ("Another answer", False)]
        mark = len(rec.sent)
        await _press(echo, _with_buttons(edit), "◀", ALICE)
        [back] = _edits(rec, mark)
        assert back["content"] == "answer 1 to: hello there"
        assert [b["label"] for b in _buttons(back)][1] == "1/2"
        mark = len(rec.sent)
        await _press(echo, _with_buttons(back), "▶", ALICE)
        [forth] = _edits(rec, mark)
        assert forth["content"] == "answer 2 to: hello there"


async def test_only_the_person_answered_or_a_moderator_may_ask_again(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _numbered(ollama)
    async with _bot_with(tmp_path, ollama, **SETTLING) as (echo, rec):
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "hello there")
        reply = _posted(rec)
        mark = len(rec.sent)
        await _press(echo, reply, "Another answer", BOB)
        assert _edits(rec, mark) == []
        assert _private(rec, mark) == [
            "Only the person this answered, or someone with Manage Messages, can change its answer."
        ]
        mark = len(rec.sent)
        await _press(echo, reply, "Another answer", BOB, permissions=MANAGE_MESSAGES)
        [edit] = _edits(rec, mark)
        assert edit["content"] == "answer 2 to: hello there"


async def test_an_old_button_works_after_a_restart(tmp_path: Path, ollama: FakeOllama) -> None:
    _numbered(ollama)
    database = tmp_path / "echo.sqlite3"
    async with _bot_with(tmp_path, ollama, database=database, **SETTLING) as (echo, rec):
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "hello there")
        reply = _posted(rec)
    async with _bot_with(tmp_path, ollama, database=database, **SETTLING) as (echo, rec):
        await _press(echo, reply, "Another answer", ALICE)
        [edit] = _edits(rec, 0)
        assert edit["content"] == "answer 2 to: hello there"


async def test_the_memory_learns_the_answer_kept(tmp_path: Path, ollama: FakeOllama) -> None:
    given = _numbered(ollama)
    async with _bot_with(tmp_path, ollama, **SETTLING) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "hello there")
        reply = _posted(rec)
        await _press(echo, reply, "Another answer", ALICE)
        edit = _edits(rec, 0)[-1]
        await _press(echo, _with_buttons(edit), "Another answer", ALICE)
        edit = _edits(rec, 0)[-1]
        await _press(echo, _with_buttons(edit), "◀", ALICE)
        await echo.after_turns()
        assert given == []  # still settling: nothing learned yet
        await _say(echo, channel, ALICE, "and then")  # her next message settles the first
        await echo.after_turns()
        assert [g["character_reply"] for g in given] == ["answer 2 to: hello there"]
        # Settled: the buttons say so instead of changing what was learned from.
        mark = len(rec.sent)
        await _press(echo, reply, "Another answer", ALICE)
        assert _edits(rec, mark) == [] and "no longer change" in _private(rec, mark)[0]


async def test_why_answers_again_without_a_memory(tmp_path: Path, ollama: FakeOllama) -> None:
    _numbered(ollama)
    async with _bot_with(tmp_path, ollama, **SETTLING) as (echo, rec):
        bees = await _remember(echo, ALICE, "Keeps bees on the roof")
        oboe = await _remember(echo, ALICE, "Plays the oboe every morning")
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "what do you know about me?")
        mark = len(rec.sent)
        await echo.tree._call(fakes.interaction(echo, "why", user_id=ALICE, channel_id=CHANNEL))
        why = rec.messages()[-1]
        labels = [b.get("label") for b in _buttons(why) if b.get("type") == 2]
        assert set(labels) == {f"Without #{bees}", f"Without #{oboe}"}
        prompts_before = len(ollama.calls)
        mark = len(rec.sent)
        await _press(echo, {**_with_buttons(why), "flags": fakes.EPHEMERAL}, f"Without #{oboe}",
                     ALICE)  # fmt: skip
        [prompt] = [json.dumps(p["messages"]) for path, p in ollama.calls[prompts_before:]
                    if path == "/api/chat" and "format" not in p]  # fmt: skip
        assert "Keeps bees" in prompt and "oboe" not in prompt
        edits = [s for s in rec.sent[mark:] if s.method == "PATCH"]
        # The reply in the channel shows the new answer; /why's answer shows its selection.
        channel_edit = next(s for s in edits if s.path.startswith("/channels/"))
        assert channel_edit.payload["content"] == "answer 2 to: what do you know about me?"
        assert channel_edit.payload["allowed_mentions"] == {"parse": []}
        why_edit = next(s for s in edits if "webhooks" in s.path).payload
        assert why_edit["content"].startswith(f"Answered again without #{oboe} (shown under")
        assert "Keeps bees" in why_edit["content"].split("\n\n", 1)[1]
        assert "Plays the oboe" not in why_edit["content"]
        assert [b.get("label") for b in _buttons(why_edit) if b.get("type") == 2] == [
            f"Without #{bees}"
        ]


async def test_many_people_ask_again_at_once_each_sees_their_own(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """A concurrent twin: eight people, their replies then Another answer all pressed at
    once, twice each, with random latencies; each reply is edited to its own next answer."""
    _numbered(ollama)
    rng = random.Random(5)
    base = ollama.chat_reply

    def slow(payload: dict[str, Any]) -> str:
        return base(payload)

    ollama.chat_reply = slow
    ollama.set("/api/chat", "slow", delay=0.01)
    people = [2000 + n for n in range(8)]
    async with _bot_with(tmp_path, ollama, **SETTLING) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        replies = {}
        for person in people:
            await _say(echo, channel, person, f"hello from {person}")
            replies[person] = _posted(rec)
        mark = len(rec.sent)

        async def press(person: int) -> None:
            await asyncio.sleep(rng.uniform(0, 0.02))
            await _press(echo, replies[person], "Another answer", person)

        await asyncio.gather(*(press(p) for p in people), *(press(p) for p in people))
        contents = [e["content"] for e in _edits(rec, mark)]
        for person in people:
            mine = sorted(c for c in contents if c.endswith(f"hello from {person}"))
            # Two presses at once: one answered, the other told, or both one after another.
            assert mine in (
                [f"answer 2 to: hello from {person}"],
                [f"answer 2 to: hello from {person}", f"answer 3 to: hello from {person}"],
            ), mine
        assert all(c.split(": ", 1)[1].startswith("hello from") for c in contents)
        busy = [t for t in _private(rec, mark) if t.startswith("I'm already writing")]
        assert len(contents) + len(busy) == 2 * len(people)


def test_a_version_longer_than_one_message_is_attached_whole() -> None:
    from bot.discord.cogs.answers import version_message
    from memory import Answer, AnswerSet

    text = "mot " * 900  # 3,600 characters
    versions = AnswerSet("discord:1", (Answer(0, "court"), Answer(1, text.strip())), 1, 1)
    content, files = version_message(versions)
    assert len(content) <= 2000 and content.endswith("(The whole answer is in the attached file.)")
    [attached] = files
    assert attached.filename == "answer-2.txt"
    assert attached.fp.read().decode() == text.strip()
    assert isinstance(attached, discord.File)


async def test_try_again_answers_a_failed_message_once_the_server_is_back(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """The server was down: the line saying so carries *Try again*; pressed once the server is
    back, the line becomes the answer to that message (stored once, never typed again), with
    the reply's buttons; someone else's press is refused and a second press changes nothing."""
    given = _numbered(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        ollama.set("/api/chat", "500")
        await _say(echo, channel, ALICE, "tu es là ?")
        failed = _posted(rec)
        assert "can't reach my language model" in failed["content"]
        assert [b["label"] for b in _buttons(failed)] == ["Try again"]
        mark = len(rec.sent)
        await _press(echo, failed, "Try again", ALICE)  # still down
        assert _edits(rec, mark) == [] and any("can't reach" in p for p in _private(rec, mark))
        ollama.set("/api/chat", "ok")
        mark = len(rec.sent)
        await _press(echo, failed, "Try again", BOB)
        assert _edits(rec, mark) == [] and _private(rec, mark) == [
            "Only the person this answered, or someone with Manage Messages, can change its answer."
        ]
        mark = len(rec.sent)
        await _press(echo, failed, "Try again", ALICE)
        [edit] = _edits(rec, mark)
        assert edit["content"] == "answer 1 to: tu es là ?"
        assert [b["label"] for b in _buttons(edit)] == ["Another answer"]
        mark = len(rec.sent)
        await _press(echo, failed, "Try again", ALICE)  # an old copy of the line, pressed again
        assert _edits(rec, mark) == [] and "can no longer change" in _private(rec, mark)[0]
        stored = await history.recent(echo.runtime.store, CHANNEL, limit=5)
        assert [m.content for m in stored] == ["tu es là ?", "answer 1 to: tu es là ?"]
        # Learned from like any reply: the reflection was given this answer.
        assert [g["character_reply"] for g in given] == ["answer 1 to: tu es là ?"]


async def test_people_trying_again_at_once_each_get_their_own_answer(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _numbered(ollama)
    rng = random.Random(11)

    async def pause(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.02))

    people = [ALICE + n for n in range(8)]
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        ollama.set("/api/chat", "500")
        for n, person in enumerate(people):
            await _say(echo, channel, person, f"message n°{n}")
        lines = [_posted(rec, i) for i in range(len(people))]
        ollama.set("/api/chat", "ok")
        ollama.pause = pause
        mark = len(rec.sent)
        await asyncio.gather(
            *(_press(echo, line, "Try again", p) for line, p in zip(lines, people, strict=True))
        )
        edits = sorted(e["content"] for e in _edits(rec, mark))
        assert edits == sorted(f"answer 1 to: message n°{n}" for n in range(len(people)))
        stored = [m.content for m in await history.recent(echo.runtime.store, CHANNEL, limit=40)]
        for n in range(len(people)):
            assert stored.count(f"message n°{n}") == 1
            assert stored.count(f"answer 1 to: message n°{n}") == 1
