"""The Discord adapter with real discord.py objects (messages, interactions) and a loopback
fake Ollama; what the bot sends to Discord is recorded at the HTTP seam."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.config import Settings
from bot.discord.app import EchoBot, Sync
from bot.discord.cogs.memories import ConfirmForget
from bot.discord.streaming import Pace
from bot.runtime import open_runtime
from memory import manage
from memory.errors import Forbidden
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.fakes.ollama import FakeOllama

CHANNEL = 10
OTHER_CHANNEL = 20
ALICE, BOB = 1001, 1002
MANAGE_GUILD = 1 << 5


@asynccontextmanager
async def _bot_with(
    tmp_path: Path, ollama: FakeOllama, *, database: Path | str | None = None, **sections: Any
) -> AsyncIterator[tuple[EchoBot, fakes.Recorder]]:
    """A bot on a real database (an SQLite file in tmp_path, or the `database` fixture's file
    or PostgreSQL URL) and the loopback fake Ollama, its Discord I/O recorded."""
    if isinstance(database, str):
        storage: dict[str, Any] = {"path": tmp_path / "echo.sqlite3", "url": database}
    else:
        storage = {"path": database or tmp_path / "echo.sqlite3"}
    # Reflected right after each reply, as most tests read it (a test of the answers' buttons
    # gives its own settle time).
    sections.setdefault("conversation", {"settle_seconds": 0})
    settings = Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage=storage,  # type: ignore[arg-type]
        discord={"channels": [CHANNEL], **sections.pop("discord", {})},  # type: ignore[arg-type]
        **sections,
    )
    async with open_runtime(settings) as runtime:
        echo = EchoBot(runtime, sync=Sync.NEVER, background=False)
        recorder = fakes.Recorder()
        await fakes.install(echo, recorder)
        await echo.setup_hook()
        # Streamed replies paced in milliseconds: tests of what is said need not wait seconds.
        echo.get_cog("Conversation").pace = Pace(interval=0.01, first_wait=0.01)  # type: ignore[union-attr]
        yield echo, recorder
        conversation = echo.get_cog("Conversation")
        await asyncio.gather(*getattr(conversation, "_background", ()), return_exceptions=True)


async def _say(
    echo: EchoBot, channel: Any, author: int, content: str, **kw: Any
) -> discord.Message:
    msg = fakes.message(echo, channel, author_id=author, content=content, **kw)
    await echo.get_cog("Conversation").on_message(msg)  # type: ignore[union-attr]
    return msg


async def _command(echo: EchoBot, name: str, user: int, **kw: Any) -> None:
    await echo.tree._call(fakes.interaction(echo, name, user_id=user, channel_id=CHANNEL, **kw))


def _opt(name: str, value: Any, kind: int = 4) -> dict[str, Any]:
    return {"name": name, "type": kind, "value": value}


# --- conversation --------------------------------------------------------------------------


async def test_answers_in_a_configured_channel_with_no_pings(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, rec = bot
    ollama.chat_replies = ["Bonjour !"]
    await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Salut Écho")
    [sent] = rec.messages()
    assert sent["content"] == "Bonjour !"
    assert sent["allowed_mentions"]["parse"] == []
    assert any(s.path.endswith("/typing") for s in rec.sent)


@pytest.mark.parametrize(
    ("where", "kw", "answers"),
    [
        ("other", {}, False),
        ("other", {"mentions": [fakes.BOT_ID], "content": f"<@{fakes.BOT_ID}> hello"}, True),
        ("dm", {}, True),
        ("channel", {"author_bot": True}, False),
    ],
)
async def test_where_it_answers(
    bot: tuple[EchoBot, fakes.Recorder], where: str, kw: dict[str, Any], answers: bool
) -> None:
    echo, rec = bot
    channel: Any = {
        "other": lambda: fakes.text_channel(echo, OTHER_CHANNEL),
        "dm": lambda: fakes.dm_channel(echo, 30, ALICE),
        "channel": lambda: fakes.text_channel(echo, CHANNEL),
    }[where]()
    content = kw.pop("content", "hello")
    await _say(echo, channel, ALICE, content, **kw)
    assert bool(rec.messages()) is answers


async def test_a_reply_to_the_bot_is_answered(bot: tuple[EchoBot, fakes.Recorder]) -> None:
    echo, rec = bot
    mine = fakes._message_payload(OTHER_CHANNEL, "earlier answer")
    await _say(echo, fakes.text_channel(echo, OTHER_CHANNEL), ALICE, "and then?", reply_to=mine)
    assert rec.messages()


async def test_a_replayed_message_is_answered_once(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, rec = bot
    channel = fakes.text_channel(echo, CHANNEL)
    await _say(echo, channel, ALICE, "hello", message_id=424242)
    await _say(echo, channel, ALICE, "hello", message_id=424242)  # gateway RESUME replay
    assert len(rec.messages()) == 1
    assert (
        ollama.count("/api/chat") >= 1
        and len([c for c in ollama.calls if c[0] == "/api/chat" and "format" not in c[1]]) == 1
    )


async def test_mass_and_role_mentions_are_defanged(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, rec = bot
    ollama.chat_replies = ["Hey @everyone and @here, ask <@&555>!"]
    await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "say hi to all")
    [sent] = rec.messages()
    assert "@everyone" not in sent["content"] and "@here" not in sent["content"]
    assert "<@&555>" not in sent["content"]
    assert sent["allowed_mentions"] == {"parse": [], "replied_user": False}


async def test_long_replies_are_split_under_2000_characters(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, rec = bot
    ollama.chat_replies = [("Une phrase assez longue pour remplir. " * 60 + "\n\n") * 2]
    await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "raconte")
    sizes = [len(c) for c in rec.contents()]
    assert len(sizes) >= 3 and max(sizes) <= 2000
    assert all(m["allowed_mentions"]["parse"] == [] for m in rec.messages())


async def test_attachment_only_message_costs_no_llm_call(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, rec = bot
    attachment = {"id": "1", "filename": "a.png", "size": 1, "url": "u", "proxy_url": "u"}
    await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "", attachments=[attachment])
    assert rec.messages() == [] and ollama.count("/api/chat") == 0


async def test_chat_backend_down_gives_one_clear_message_and_keeps_the_message(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, rec = bot
    ollama.set("/api/chat", "500")
    await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "tu es là ?")
    [sent] = rec.messages()
    assert "can't reach my language model" in sent["content"]
    stored = await history.recent(echo.runtime.store, CHANNEL, limit=5)
    assert [m.content for m in stored] == ["tu es là ?"]


# --- slash commands ------------------------------------------------------------------------


async def _remember(echo: EchoBot, user: int, text: str) -> int:
    await _command(echo, "remember", user, options=[_opt("text", text, 3)])
    [memory] = [m for m in await manage.list_memories(echo.runtime.store, user) if m.text == text]
    return memory.id


async def test_remember_then_why_shows_it_with_its_reason(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    memory_id = await _remember(echo, ALICE, "Has a ginger cat called Felix")
    assert rec.messages()[-1]["flags"] == fakes.EPHEMERAL
    await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "hello")
    await _command(echo, "why", ALICE)
    why = rec.contents()[-1]
    assert "**Global** (1)" in why and f"`#{memory_id}`" in why and "ginger cat" in why
    assert rec.messages()[-1]["flags"] == fakes.EPHEMERAL


async def test_remember_in_the_first_person_is_stored_and_shown_in_the_third(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    """/memories reads in one voice: what a person types about themself is stored as a
    reflection words it, and the answer says so; a rule keeps the person's words."""
    echo, rec = bot
    await _command(echo, "remember", ALICE, options=[_opt("text", "I'm allergic to peanuts", 3)])
    assert rec.contents()[-1] == "Memory #1: created. It reads: Is allergic to peanuts"
    await _command(echo, "remember", BOB, options=[_opt("text", "J'habite à Lyon avec ma sœur", 3)])
    assert rec.contents()[-1].endswith("It reads: Habite à Lyon avec sa sœur")
    rule = [_opt("text", "Call me Sam", 3), _opt("kind", "rule", 3)]
    await _command(echo, "remember", ALICE, options=rule)
    assert "It reads" not in rec.contents()[-1]
    texts = {m.text for m in await manage.list_memories(echo.runtime.store, ALICE)}
    assert texts == {"Is allergic to peanuts", "Call me Sam"}
    await _command(echo, "memories", ALICE)
    assert "Is allergic to peanuts" in rec.contents()[-1]


async def test_another_persons_memory_answers_exactly_like_a_missing_one(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    alices = await _remember(echo, ALICE, "Has a ginger cat called Felix")
    missing = alices + 1000
    answers = []
    for name in ("pin", "unpin", "forget"):
        for memory_id in (alices, missing):
            await _command(echo, name, BOB, options=[_opt("memory", memory_id)])
            answers.append(rec.contents()[-1].replace(str(memory_id), "N"))
    assert len(set(answers)) == 1 and answers[0] == "No memory #N."
    [memory] = await manage.list_memories(echo.runtime.store, ALICE)
    assert not memory.pinned


async def test_autocomplete_offers_only_your_own_memories(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    await _remember(echo, ALICE, "Has a ginger cat called Felix")
    await _remember(echo, BOB, "Has a ginger dog called Rex")
    focused = {"name": "memory", "type": 4, "value": "ginger", "focused": True}
    await _command(echo, "pin", BOB, options=[focused], autocomplete=True)
    choices = rec.sent[-1].payload["data"]["choices"]
    assert [c["name"].split(" ", 1)[1] for c in choices] == ["Has a ginger dog called Rex"]


async def test_forget_asks_then_erases_for_real(bot: tuple[EchoBot, fakes.Recorder]) -> None:
    echo, rec = bot
    memory_id = await _remember(echo, ALICE, "Has a ginger cat called Felix")
    await _command(echo, "forget", ALICE, options=[_opt("memory", memory_id)])
    question = rec.messages()[-1]
    assert "Forget this for good?" in question["content"] and question["components"]
    assert await manage.list_memories(echo.runtime.store, ALICE)  # nothing erased yet

    # The view the command sent, as the button press would reach it.
    confirm = ConfirmForget(ALICE, memory_id)
    press = fakes.component(echo, user_id=BOB, channel_id=CHANNEL, custom_id="x")
    assert not await confirm.interaction_check(press)  # only the owner can press
    press = fakes.component(echo, user_id=ALICE, channel_id=CHANNEL, custom_id="x")
    await confirm.confirm.callback(press)
    assert await manage.list_memories(echo.runtime.store, ALICE) == []
    answer = rec.sent[-1].payload["data"]["content"]
    assert answer == (
        f"Forgotten #{memory_id}.\nYou wrote it yourself; nothing else was made from it."
    )
    rows = await echo.runtime.store.fetchall("SELECT count(*) FROM memories")
    assert rows[0][0] == 0


async def test_memories_pages_with_buttons(bot: tuple[EchoBot, fakes.Recorder]) -> None:
    echo, rec = bot
    for i in range(12):
        await _remember(echo, ALICE, f"Fact number {i} about the garden")
    await _command(echo, "memories", ALICE)
    first = rec.messages()[-1]
    assert "page 1/2 (12 in all)" in first["content"]
    buttons = first["components"][0]["components"]
    assert [b["disabled"] for b in buttons] == [True, False]


async def test_stats_requires_manage_server(bot: tuple[EchoBot, fakes.Recorder]) -> None:
    echo, rec = bot
    await _command(echo, "stats", ALICE)
    assert "Manage Server" in rec.contents()[-1] and "Memories:" not in rec.contents()[-1]
    await _command(echo, "stats", ALICE, permissions=MANAGE_GUILD)
    assert rec.contents()[-1].startswith("Memories learned in this server: 0")


async def test_group_channel_turns_use_only_the_speakers_memories(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, _ = bot
    await _remember(echo, ALICE, "Alice has a ginger cat called Felix")
    await _remember(echo, BOB, "Bob plays the cello")
    channel = fakes.text_channel(echo, CHANNEL)
    await _say(echo, channel, BOB, "what do you know about me?")
    system = next(
        p["messages"][0]["content"]
        for path, p in reversed(ollama.calls)
        if path == "/api/chat" and "format" not in p
    )
    assert "Bob plays the cello" in system and "Felix" not in system


async def test_reflection_is_queued_and_applied_after_the_reply(
    bot: tuple[EchoBot, fakes.Recorder], ollama: FakeOllama
) -> None:
    echo, _ = bot
    reflection = {"memories": [{"text": "Plays the cello", "kind": "fact", "scope": "global",
                                "confidence": 0.95}], "summary": "s", "state": {}}  # fmt: skip
    ollama.chat_replies = ["Nice!", json.dumps(reflection)]
    await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "I play the cello")
    await echo.runtime.worker.run_due()
    [memory] = await manage.list_memories(echo.runtime.store, ALICE)
    assert memory.text == "Plays the cello" and memory.user_id == ALICE


def test_commands_have_french_names() -> None:
    from bot.discord.i18n import FRENCH

    assert FRENCH["why"] == "pourquoi" and FRENCH["forget"] == "oublier"


async def test_two_forget_dialogs_for_one_memory_answer_both_without_logging_a_bug(
    bot: tuple[EchoBot, fakes.Recorder], caplog: pytest.LogCaptureFixture
) -> None:
    echo, rec = bot
    memory_id = await _remember(echo, ALICE, "Has a ginger cat called Felix")
    views = [ConfirmForget(ALICE, memory_id) for _ in range(2)]
    presses = [fakes.component(echo, user_id=ALICE, channel_id=CHANNEL, custom_id="x")
               for _ in views]  # fmt: skip
    # Both pressed at once, dispatched the way discord.py runs a view's button.
    await asyncio.gather(
        *(v._scheduled_task(v.confirm, p) for v, p in zip(views, presses, strict=True))
    )
    answers = [s.payload.get("data", s.payload).get("content") for s in rec.sent[-2:]]
    assert sorted(answers, key=str)[0].startswith(f"Forgotten #{memory_id}.")
    assert any("no memory" in str(a).lower() for a in answers), answers
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_button_refused_says_why_as_the_commands_do(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    """A button's refusal keeps its capitals (a permission's name), as a command's does."""
    echo, rec = bot
    press = fakes.component(echo, user_id=ALICE, channel_id=CHANNEL, custom_id="x")
    view = ConfirmForget(ALICE, 1)
    refused = Forbidden("you can forget only your own messages (moderators: Manage Messages)")
    await view.on_error(press, refused, view.confirm)
    assert rec.sent[-1].payload["data"]["content"] == (
        "You can forget only your own messages (moderators: Manage Messages)."
    )
