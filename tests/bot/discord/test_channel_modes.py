"""/channel mode with real discord.py objects: a moderator sets a channel `open`, `mention` or
`thread`; a mention in a `thread` channel opens a thread from the message, the reply goes there
and every message in it is answered without a mention, as its own story; the mode is kept
across a restart and read by another process on the same database; without the permission to
open threads the character answers in the channel, logged once."""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path
from typing import Any

import pytest

from bot.discord.places import THREAD_NAME_LIMIT, thread_name
from memory.manage import casting
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.bot.cli_runner import echo_bot
from tests.bot.discord.test_context import MANAGE_CHANNELS, _sub
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _opt, _say
from tests.fakes.ollama import Chaos, FakeOllama

ROOM = 20  # not in [discord] channels: `mention` until a moderator says otherwise
MENTION = f"<@{fakes.BOT_ID}>"
_ZWSP = "\u200b"
# What the bot may do in the room: speak, open threads and speak in them.
ALLOWED = fakes.VIEW_AND_SEND | fakes.THREADS


async def _mode(echo: Any, user: int, mode: str | None = None, **kw: Any) -> None:
    options = _sub("mode", *([_opt("mode", mode, 3)] if mode else []))
    kw.setdefault("channel_id", ROOM)
    await echo.tree._call(fakes.interaction(echo, "channel", user_id=user, options=options, **kw))


def _posts_in(rec: fakes.Recorder, channel_id: int) -> list[fakes.Sent]:
    """The messages the bot posted in a channel or thread."""
    return [
        s for s in rec.sent if s.method == "POST" and s.path == f"/channels/{channel_id}/messages"
    ]


async def test_a_mention_in_a_thread_channel_opens_a_thread_answered_there_without_mentions(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        await _mode(echo, ALICE, "thread", permissions=MANAGE_CHANNELS)
        assert rec.contents()[-1].startswith("This channel is in `thread` mode now: a mention")
        fakes.allow(echo, ALLOWED)
        room = fakes.text_channel(echo, ROOM)
        await _say(echo, room, BOB, "a plain message in the channel")
        assert _posts_in(rec, ROOM) == []
        words = "the lighthouse keeper " * 12
        asked = await _say(echo, room, ALICE, f"{MENTION} @everyone <@{BOB}> tell me about {words}",
                           mentions=[fakes.BOT_ID, BOB])  # fmt: skip
        [opened] = [s for s in rec.sent if s.path.endswith(f"/messages/{asked.id}/threads")]
        assert opened.path == f"/channels/{ROOM}/messages/{asked.id}/threads"
        name = opened.payload["name"]
        assert len(name) <= THREAD_NAME_LIMIT and name.endswith("…")
        assert "@everyone" not in name and f"@{_ZWSP}everyone" in name
        assert "<@" not in name and name.startswith(f"@{_ZWSP}everyone @… tell me about")
        # The reply is in the thread (whose id is the message's), pinging no one; none in the room.
        [reply] = _posts_in(rec, asked.id)
        assert reply.payload["allowed_mentions"]["parse"] == []
        assert "message_reference" not in reply.payload
        assert _posts_in(rec, ROOM) == []
        # Discord's THREAD_CREATE puts it in the cache: Bob writes there without a mention.
        opened_thread = fakes.thread(echo, asked.id, ROOM, owner_id=fakes.BOT_ID)
        calls = len(ollama.calls)
        followed = await _say(echo, opened_thread, BOB, "and who keeps it now?")
        assert len(_posts_in(rec, asked.id)) == 2
        prompt = str(ollama.calls[calls:])
        assert "lighthouse keeper" in prompt  # the thread's story holds Alice's message
        store = echo.runtime.store
        for message in (asked, followed):
            stored = await history.by_source(store, f"discord:{message.id}")
            assert stored is not None and stored.story_id == asked.id
        # A thread someone else opened under the channel answers mentions only.
        theirs = fakes.thread(echo, 4242, ROOM, owner_id=BOB)
        await _say(echo, theirs, ALICE, "no mention here")
        assert _posts_in(rec, 4242) == []


def test_a_threads_name_is_one_inert_line_within_discords_limit() -> None:
    assert thread_name("  hello\n\nthere <#55> <@&7> @here ", "Nyx") == (
        f"hello there @… @{_ZWSP}role @{_ZWSP}here"
    )
    assert thread_name("   ", "Nyx") == "Nyx"
    long = thread_name("x" * 300, "Nyx")
    assert len(long) == THREAD_NAME_LIMIT and long.endswith("…")


async def test_mention_mode_ignores_a_plain_message_and_the_mode_survives_a_restart(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)  # in [discord] channels: open by default
        await _mode(echo, BOB, channel_id=CHANNEL)
        assert rec.contents()[-1].startswith("Mode here: `open` (this server's default)")
        await _say(echo, channel, ALICE, "first, answered")
        assert len(_posts_in(rec, CHANNEL)) == 1
        await _mode(echo, ALICE, "mention", permissions=MANAGE_CHANNELS, channel_id=CHANNEL)
        await _say(echo, channel, ALICE, "a plain message now")
        assert len(_posts_in(rec, CHANNEL)) == 1
        await _say(echo, channel, ALICE, f"{MENTION} and a mention", mentions=[fakes.BOT_ID])
        assert len(_posts_in(rec, CHANNEL)) == 2
        # Another process on the same database reads it with the cast's choices.
        async with _bot_with(tmp_path, ollama) as (other, _):
            await _mode(echo, ALICE, "open", permissions=MANAGE_CHANNELS)
            assert other.runtime.characters.modes.get(ROOM) is None
            await casting.reload(other.runtime.store, other.runtime.characters)
            assert str(other.runtime.characters.modes.get(ROOM)) == "open"
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        await _mode(echo, BOB, channel_id=CHANNEL)
        assert rec.contents()[-1] == (
            "Mode here: `mention` (set by a moderator): only mentions of me and replies to my "
            "messages are answered."
        )
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "after the restart")
        await _say(echo, fakes.text_channel(echo, ROOM), ALICE, "open here since")
        assert _posts_in(rec, CHANNEL) == [] and len(_posts_in(rec, ROOM)) == 1
        # `default`: back to what the configuration says.
        await _mode(echo, ALICE, "default", permissions=MANAGE_CHANNELS, channel_id=CHANNEL)
        assert rec.contents()[-1].startswith("This channel is in `open` mode now")


async def test_only_manage_channels_may_set_the_mode(tmp_path: Path, ollama: FakeOllama) -> None:
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        await _mode(echo, BOB, "thread")
        [refused] = rec.messages()
        assert refused["flags"] == fakes.EPHEMERAL
        assert "Manage Channels" in refused["content"] and "\n" not in refused["content"]
        assert echo.runtime.characters.modes.get(ROOM) is None
        await _mode(echo, BOB)
        assert rec.contents()[-1].startswith("Mode here: `mention` (this server's default)")
        # A thread opens no thread: `thread` is a channel's mode.
        fakes.thread(echo, 4343, ROOM)
        await echo.tree._call(fakes.interaction(
            echo, "channel", user_id=ALICE, channel_id=4343, permissions=MANAGE_CHANNELS,
            options=_sub("mode", _opt("mode", "thread", 3)),
        ))  # fmt: skip
        assert rec.contents()[-1].startswith("a thread cannot open threads")


@pytest.mark.parametrize("refusal", ["permission", "403"])
async def test_without_the_thread_permission_it_answers_in_the_channel_and_logs_once(
    tmp_path: Path, ollama: FakeOllama, caplog: pytest.LogCaptureFixture, refusal: str
) -> None:
    caplog.set_level(logging.INFO)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        await _mode(echo, ALICE, "thread", permissions=MANAGE_CHANNELS)
        assert "I may not open threads here yet" in rec.contents()[-1]
        if refusal == "permission":
            fakes.allow(echo, fakes.VIEW_AND_SEND)  # no Create Public Threads
        else:  # allowed as far as the bot knows; Discord says otherwise
            fakes.allow(echo, ALLOWED)
            rec.refuse_threads = 403
        room = fakes.text_channel(echo, ROOM)
        secret = "SECRETWORD about the lighthouse"
        asked = [await _say(echo, room, ALICE, f"{MENTION} {secret} {n}", mentions=[fakes.BOT_ID])
                 for n in range(2)]  # fmt: skip
        replies = _posts_in(rec, ROOM)
        assert len(replies) == 2 and not rec.threads
        assert [r.payload["message_reference"]["message_id"] for r in replies] == [
            m.id for m in asked
        ]
        for message in asked:  # the channel's story, as in `mention` mode
            stored = await history.by_source(echo.runtime.store, f"discord:{message.id}")
            assert stored is not None and stored.story_id == ROOM
    said = [r for r in caplog.records if "thread mode" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert str(ROOM) in said[0].getMessage()
    assert not any("SECRETWORD" in r.getMessage() for r in caplog.records)


async def test_many_people_mentioning_at_once_each_get_their_own_thread(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chaos = Chaos(seed=43, max_delay=0.02, failure_rate=0.0)
    rng = random.Random(43)
    people = [3000 + n for n in range(8)]
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        await _mode(echo, ALICE, "thread", permissions=MANAGE_CHANNELS)
        fakes.allow(echo, ALLOWED)
        room = fakes.text_channel(echo, ROOM)

        async def one(person: int) -> int:
            await asyncio.sleep(rng.uniform(0, 0.02))
            said = await _say(echo, room, person, f"{MENTION} I am {person}",
                              mentions=[fakes.BOT_ID])  # fmt: skip
            return said.id

        asked = dict(zip(people, await asyncio.gather(*(one(p) for p in people)), strict=True))
        assert sorted(rec.threads) == sorted(asked.values())
        assert _posts_in(rec, ROOM) == []
        for person, thread_id in asked.items():
            assert rec.threads[thread_id]["name"] == f"I am {person}"
            assert len(_posts_in(rec, thread_id)) == 1
            stored = await history.by_source(echo.runtime.store, f"discord:{thread_id}")
            assert stored is not None and stored.story_id == thread_id
            assert stored.user_id == person


async def test_check_config_lists_the_modes_set(tmp_path: Path, ollama: FakeOllama) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp_path / "echo.sqlite3"}"\n', encoding="utf-8")
    code, out, _ = await echo_bot("--config", str(config), "check-config")
    assert code == 0 and "mode" not in out  # no database yet: none created, nothing said
    assert not (tmp_path / "echo.sqlite3").exists()
    async with _bot_with(tmp_path, ollama) as (echo, _):
        await _mode(echo, ALICE, "thread", permissions=MANAGE_CHANNELS)
        await _mode(echo, BOB, "mention", permissions=MANAGE_CHANNELS, channel_id=CHANNEL)
    code, out, _ = await echo_bot("--config", str(config), "check-config")
    modes = [line for line in out.splitlines() if line.startswith("Channel ")]
    assert code == 0 and len(modes) == 2
    assert modes[0].startswith(
        f"Channel {CHANNEL} is in 'mention' mode (/channel mode, by user {BOB} on "
    )
    assert modes[1].startswith(
        f"Channel {ROOM} is in 'thread' mode (/channel mode, by user {ALICE} on "
    )
