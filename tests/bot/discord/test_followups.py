"""Follow-ups on Discord, through the project's fakes: a person turns them on with /followups,
says that their job interview is tomorrow, and the followups job, run on a virtual clock
(started at the machine's time: the turn's exchange is dated by it, and its reflection reads
"tomorrow" from it) the morning after that day, posts one message where it was said, as the
character who learned it (its webhook in a server, the bot in DMs), never twice; a person
whose DMs are closed is tried once; a channel where the character no longer plays gets
nothing; many people due the same minute each get exactly one, in their own place."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import discord

from bot.discord.app import EchoBot
from bot.runtime import listed_jobs
from memory import manage, short_date
from memory.followups.choose import Hours
from memory.manage import followups, forgetting
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _opt, _say
from tests.bot.discord.test_following import _gateway
from tests.fakes.ollama import FakeOllama
from tests.memory.followups.world import ASK, PARIS, Clock

HOURS = Hours(PARIS)
IN_PARIS = {"timezone": "Europe/Paris"}
DM = 30
INTERVIEW = "I have a job interview tomorrow!"
DENTIST = "And the dentist tomorrow too."
# What the scripted model learns from each message: one dated memory each.
LEARNED = {INTERVIEW: "Has a job interview tomorrow", DENTIST: "Sees the dentist tomorrow"}


def _reply(payload: dict[str, Any]) -> str:
    """The scripted model: a reflection learns the dated plan, a follow-up asks, a turn
    answers."""
    last = payload["messages"][-1]["content"]
    if "format" in payload:
        items = [
            {"text": memory, "kind": "promise", "scope": "story", "confidence": 0.95}
            for said, memory in LEARNED.items()
            if said in last
        ]
        return json.dumps({"memories": items[:1], "summary": "They talked about plans."})
    return ASK if "ask how it went" in last else "Good luck!"


def _on_clock(echo: EchoBot) -> Clock:
    clock = Clock(time.time())
    echo.runtime.engine.clock = clock
    echo.runtime.worker.clock = clock
    return clock


def _after(clock: Clock) -> float:
    """Nine o'clock the day after tomorrow: when "tomorrow", said now, is followed up."""
    return HOURS.morning(HOURS.day(clock.now) + timedelta(days=2))


async def _reflect(echo: EchoBot) -> None:
    """Write what the character learned from the exchanges so far (they were dated by the
    machine's clock: the virtual one is brought up to it)."""
    clock = echo.runtime.worker.clock
    assert isinstance(clock, Clock)
    clock.now = max(clock.now, time.time())
    conversation = echo.get_cog("Conversation")
    await asyncio.gather(*getattr(conversation, "_background", ()))
    while await echo.runtime.worker.run_due(limit=100):
        pass


async def _told(echo: EchoBot, channel: Any, author: int, text: str) -> None:
    """`author` says `text` in `channel`, and what the character learns of it is written."""
    await _say(echo, channel, author, text)
    await _reflect(echo)


async def _job(echo: EchoBot) -> int:
    """One run of the followups job, as the bot lists its jobs (with its way of posting)."""
    jobs = {job.name: job for job in listed_jobs(echo.runtime, echo.followups)}
    before = await _sent(echo)
    await jobs["followups"].run()
    return await _sent(echo) - before


async def _sent(echo: EchoBot) -> int:
    return (await followups.counts(echo.runtime.store)).get("followup_sent", 0)


async def _followups(
    echo: EchoBot, rec: fakes.Recorder, user: int, *, channel: int = DM, **option: Any
) -> str:
    """/followups with these options, in `user`'s DMs (or a server's `channel`): its answer."""
    options = [_opt(k, v, 4 if isinstance(v, int) else 3) for k, v in option.items()]
    interaction = fakes.interaction(
        echo,
        "followups",
        user_id=user,
        channel_id=channel,
        in_guild=channel != DM,
        options=options,
    )
    start = len(rec.sent)
    await echo.tree._call(interaction)
    [answer] = [s for s in rec.sent[start:] if s.path.endswith("/callback")]
    assert answer.payload["data"]["flags"] == fakes.EPHEMERAL
    return str(answer.payload["data"]["content"])


def _dms(rec: fakes.Recorder) -> list[tuple[int, str]]:
    """Each direct message the bot posted (not refused): to whom, and what."""
    return [
        (rec.dms[int(s.path.split("/")[2])], str(s.payload["content"]))
        for s in rec.sent
        if s.method == "POST" and s.path.endswith("/messages") and not s.refused
        and int(s.path.split("/")[2]) in rec.dms
    ]  # fmt: skip


async def test_a_dm_interview_is_followed_up_once_in_the_dms_and_why_names_it(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reply
    async with _bot_with(tmp_path, ollama, character=IN_PARIS) as (echo, rec):
        clock = _on_clock(echo)
        turned = await _followups(echo, rec, ALICE, set="on")
        assert turned.startswith("Follow-ups: on.")
        await _told(echo, fakes.dm_channel(echo, DM, ALICE), ALICE, INTERVIEW)
        listed = await _followups(echo, rec, ALICE)
        said, after = HOURS.day(clock.now), _after(clock)
        event = said + timedelta(days=1)
        because = f"said {short_date(said)}: about {short_date(event)}"
        due = short_date(event + timedelta(days=1))
        assert f"• #1 about memory #1 ({because}): {due} 09:00, in our DMs" in listed
        assert "#1" not in await _followups(echo, rec, BOB)  # another person's stays theirs

        clock.now = after - 3 * 3600  # the day after, in the quiet hours: nothing yet
        assert await _job(echo) == 0
        clock.now = after + 30
        assert await _job(echo) == 1
        clock.now += 3600
        assert await _job(echo) == 0
        assert _dms(rec) == [(ALICE, ASK)]  # one, in Alice's DMs, as the bot (one character)
        [posted] = [s for s in rec.sent if s.payload.get("content") == ASK]
        assert posted.payload["allowed_mentions"] == {"parse": []}

        interaction = fakes.interaction(echo, "why", user_id=ALICE, channel_id=DM, in_guild=False)
        start = len(rec.sent)
        await echo.tree._call(interaction)
        why = rec.sent[start].payload["data"]["content"]
        assert why.startswith(f"My last message here was a follow-up of memory #1 ({because})")
        assert "#1 about memory #1: sent, in our DMs" in await _followups(echo, rec, ALICE)


async def test_in_a_server_it_is_posted_in_that_channel_through_the_characters_webhook(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reply
    characters = [
        {"key": "echo", "name": "Écho", "timezone": "Europe/Paris"},
        {"key": "nyx", "name": "Nyx", "timezone": "Europe/Paris", "channels": [CHANNEL]},
    ]
    async with _bot_with(tmp_path, ollama, characters=characters) as (echo, rec):
        clock = _on_clock(echo)
        fakes.allow_webhooks(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        await _followups(echo, rec, ALICE, channel=CHANNEL, set="on")
        await _told(echo, channel, ALICE, INTERVIEW)
        listed = await _followups(echo, rec, ALICE, channel=CHANNEL)
        assert f" 09:00, in <#{CHANNEL}>" in listed
        clock.now = _after(clock)
        assert await _job(echo) == 1
        assert await _job(echo) == 0
        [post] = [s for s in rec.webhook_posts() if s.payload.get("content") == ASK]
        hook = rec.webhooks[int(post.path.split("/")[2])]
        assert hook["channel_id"] == str(CHANNEL) and post.payload["username"] == "Nyx"
        assert post.payload["allowed_mentions"] == {"parse": []}

        # Deleted on Discord: the follow-up's line leaves the history, as a reply's does.
        assert post.answer is not None
        store = echo.runtime.store
        kept = await store.fetchone("SELECT count(*) FROM messages WHERE content = ?", (ASK,))
        assert kept is not None and kept[0] == 1
        deleted = {"id": post.answer["id"], "channel_id": str(CHANNEL)}
        await _gateway(echo, echo._connection.parse_message_delete, deleted)
        left = await store.fetchone("SELECT count(*) FROM messages WHERE content = ?", (ASK,))
        assert left is not None and left[0] == 0


async def test_a_person_whose_dms_are_closed_is_tried_once_then_skipped(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reply
    async with _bot_with(tmp_path, ollama, character=IN_PARIS) as (echo, rec):
        clock = _on_clock(echo)
        await _followups(echo, rec, ALICE, set="on")
        dm = fakes.dm_channel(echo, DM, ALICE)
        await _told(echo, dm, ALICE, INTERVIEW)
        await _told(echo, dm, ALICE, DENTIST)
        rec.closed_dms.add(ALICE)
        clock.now = _after(clock)
        assert await _job(echo) == 0
        clock.now += 86_400  # the next day: the other one is not tried
        assert await _job(echo) == 0
        refused = [s for s in rec.sent if s.refused == 403]
        assert len(refused) == 1 and _dms(rec) == []
        figures = await followups.counts(echo.runtime.store)
        assert figures["followup_blocked"] == 1 and figures["followup_dropped:blocked"] == 1


async def test_a_channel_where_the_character_no_longer_plays_or_the_bot_may_not_send_gets_nothing(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reply
    characters = [
        {"key": "echo", "name": "Écho", "timezone": "Europe/Paris"},
        {"key": "nyx", "name": "Nyx", "timezone": "Europe/Paris"},
    ]
    mute_guild, mute_channel = 222, 60
    discord_ = {"channels": [CHANNEL, mute_channel]}
    async with _bot_with(tmp_path, ollama, characters=characters, discord=discord_) as (echo, rec):
        clock = _on_clock(echo)
        fakes.allow_webhooks(echo)
        fakes.allow(echo, 1 << 10, guild_id=mute_guild)  # View Channel, not Send Messages
        channel = fakes.text_channel(echo, CHANNEL)
        muted = fakes.text_channel(echo, mute_channel, guild_id=mute_guild)
        await _followups(echo, rec, ALICE, channel=CHANNEL, set="on")
        await _followups(echo, rec, BOB, channel=CHANNEL, set="on")
        await _told(echo, channel, ALICE, INTERVIEW)  # Écho plays here, and learns it
        await _told(echo, muted, BOB, INTERVIEW)
        echo.runtime.characters.remember_channel(CHANNEL, "nyx")  # a moderator's /character set
        posts = len(rec.messages())
        clock.now = _after(clock)
        assert await _job(echo) == 0
        assert len(rec.messages()) == posts
        figures = await followups.counts(echo.runtime.store)
        assert figures["followup_dropped:unreachable"] == 2


async def test_forgotten_while_it_was_posted_it_is_taken_back(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reply
    async with _bot_with(tmp_path, ollama, character=IN_PARIS) as (echo, rec):
        clock = _on_clock(echo)
        await _followups(echo, rec, ALICE, set="on")
        await _told(echo, fakes.dm_channel(echo, DM, ALICE), ALICE, INTERVIEW)
        [memory] = await manage.list_memories(echo.runtime.store, ALICE)
        deliver = echo.followups
        assert deliver is not None
        real = deliver.post

        async def racing(followup: Any) -> Any:
            posted = await real(followup)
            await forgetting.forget_memory(echo.runtime.store, ALICE, memory.id)
            return posted

        deliver.post = racing  # type: ignore[method-assign]
        clock.now = _after(clock)
        assert await _job(echo) == 0
        assert ASK not in rec.contents()  # posted, then deleted
        assert any(s.method == "DELETE" for s in rec.sent)


async def test_many_people_due_the_same_minute_each_get_exactly_one_in_their_place(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = _reply
    in_dms = [2001 + i for i in range(5)]
    in_channels = {3001 + i: 40 + i for i in range(5)}
    discord_ = {"channels": [CHANNEL, *in_channels.values()]}
    async with _bot_with(tmp_path, ollama, character=IN_PARIS, discord=discord_) as (echo, rec):
        clock = _on_clock(echo)
        people = [*in_dms, *in_channels]
        turned_on = [
            fakes.interaction(
                echo, "followups", user_id=p, channel_id=in_channels.get(p, DM),
                in_guild=p in in_channels, options=[_opt("set", "on", 3)],
            )
            for p in people
        ]  # fmt: skip
        await asyncio.gather(*(echo.tree._call(i) for i in turned_on))
        fakes.allow(echo, fakes.VIEW_AND_SEND)  # no webhooks: the bot says them itself
        store = echo.runtime.store
        assert [await followups.choice(store, p) for p in people] == [True] * len(people)
        places: dict[int, discord.abc.Messageable] = {
            **{p: fakes.dm_channel(echo, 500 + p, p) for p in in_dms},
            **{p: fakes.text_channel(echo, c) for p, c in in_channels.items()},
        }
        await asyncio.gather(*(_say(echo, places[p], p, INTERVIEW) for p in people))
        await _reflect(echo)
        clock.now = _after(clock)
        jobs = {job.name: job for job in listed_jobs(echo.runtime, echo.followups)}
        # Two runs at once (a second process's, or a run that overran): each sent once.
        await asyncio.gather(jobs["followups"].run(), jobs["followups"].run())
        assert await _job(echo) == 0
        assert sorted(_dms(rec)) == [(p, ASK) for p in in_dms]
        in_places = [
            int(s.path.split("/")[2])
            for s in rec.sent
            if s.payload.get("content") == ASK and int(s.path.split("/")[2]) not in rec.dms
        ]
        assert sorted(in_places) == sorted(in_channels.values())
        assert await _sent(echo) == len(people)
        for p in people:
            [sent] = await followups.planned(store, p)
            assert sent.status == "sent"
