"""Edits and deletions on Discord, followed: raw gateway payloads (MESSAGE_UPDATE,
MESSAGE_DELETE, MESSAGE_DELETE_BULK) parsed by discord.py and dispatched through the bot, after
conversations with the loopback LLM that copies each canary everywhere a model would
(tests/fakes/canary.py). A deleted canary leaves 0 bytes in the database files (on PostgreSQL:
in no column of any row); an edited one goes, and the new wording is what was learned. Each
test runs on the `database` fixture's backend."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.discord.app import EchoBot
from memory import manage
from memory.manage import forgetting
from memory.store.tables import counters, sent_messages
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import (
    ALICE,
    BOB,
    CHANNEL,
    OTHER_CHANNEL,
    _bot_with,
    _command,
    _say,
)
from tests.fakes import canary
from tests.fakes.ollama import Chaos, FakeOllama

CAROL = 1003
ALICES = "XK7CANARY4921"
ALICES_NEW = "NW2CANARY5555"
BOBS = "QZ3CANARY7788"


def _secret(code: str) -> str:
    return f"Mon code de coffre est {code}, ne le dis à personne."


@pytest.fixture(autouse=True)
def _no_quiet_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit's reflection is due at once (the worker is run by hand here)."""
    monkeypatch.setattr(forgetting, "EDIT_QUIET", 0.0)


async def _gateway(echo: EchoBot, parse: Callable[[Any], None], data: dict[str, Any]) -> None:
    """Hand a payload to discord.py's parser, as the gateway would, and wait for every
    listener it dispatched to finish."""
    tasks: list[asyncio.Task[Any]] = []
    schedule = echo._schedule_event

    def recording(*args: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = schedule(*args, **kwargs)
        tasks.append(task)
        return task

    echo._schedule_event = recording  # type: ignore[method-assign]
    try:
        parse(data)
    finally:
        echo._schedule_event = schedule  # type: ignore[method-assign]
    await asyncio.gather(*tasks)


async def _delete(echo: EchoBot, message_id: int, channel_id: int = CHANNEL) -> None:
    await _gateway(echo, echo._connection.parse_message_delete, {
        "id": str(message_id), "channel_id": str(channel_id), "guild_id": str(fakes.GUILD_ID),
    })  # fmt: skip


async def _bulk_delete(echo: EchoBot, ids: list[int], channel_id: int = CHANNEL) -> None:
    await _gateway(echo, echo._connection.parse_message_delete_bulk, {
        "ids": [str(i) for i in ids], "channel_id": str(channel_id),
        "guild_id": str(fakes.GUILD_ID),
    })  # fmt: skip


async def _edit(echo: EchoBot, message: discord.Message, content: str, **extra: Any) -> None:
    """MESSAGE_UPDATE as Discord sends it: the whole message, its new content, edited."""
    data = fakes.payload_of(message)
    data.update({
        "content": content, "edited_timestamp": "2026-11-30T00:01:00+00:00",
        "guild_id": str(fakes.GUILD_ID),
        "member": {"roles": [], "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False,
                   "mute": False},
        **extra,
    })  # fmt: skip
    await _gateway(echo, echo._connection.parse_message_update, data)


async def _talk(echo: EchoBot, channel: Any, author: int, text: str) -> discord.Message:
    message = await _say(echo, channel, author, text)
    await echo.runtime.worker.run_due()
    return message


async def _reflect(echo: EchoBot) -> None:
    """Reflect on everything due, once the reflections the bot started itself are done."""
    conversation = echo.get_cog("Conversation")
    await asyncio.gather(*getattr(conversation, "_background", ()))
    await echo.runtime.worker.run_due(limit=100)


async def _stored(echo: EchoBot, folder: Path, code: str) -> int:
    return await canary.stored(echo.runtime.store, folder, code)


async def _history(echo: EchoBot, channel_id: int = CHANNEL) -> list[tuple[str, str]]:
    rows = await echo.runtime.store.fetchall(
        "SELECT source_id, content FROM messages WHERE story_id = ? ORDER BY id", (channel_id,)
    )
    return [(str(r[0]), str(r[1])) for r in rows]


async def _memories(echo: EchoBot, user_id: int) -> list[str]:
    return sorted(m.text for m in await manage.list_memories(echo.runtime.store, user_id))


async def _settled(echo: EchoBot) -> None:
    """Finish erasures a background connection kept pending (PostgreSQL), as the job would."""
    for _ in range(100):
        if not await forgetting.settle_pending(echo.runtime.store):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("an erasure stayed pending for 5 s")


async def test_each_post_of_a_reply_is_recorded_and_goes_with_its_exchange(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_replies = ["Très long. " * 300]  # two posts of at most 2,000 characters
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        message = await _talk(echo, channel, ALICE, "Raconte-moi une longue histoire.")
        exchange = f"discord:{message.id}"
        posted = await sent_messages.of_exchange(echo.runtime.store, exchange)
        assert len(posted) == len(rec.messages()) == 2
        for post in posted:
            assert await manage.exchange_of_sent(echo.runtime.store, post) == exchange
        assert await manage.exchange_of_sent(echo.runtime.store, message.id) is None

        await _delete(echo, message.id)

        for post in posted:
            assert await manage.exchange_of_sent(echo.runtime.store, post) is None


async def test_the_posts_records_leave_with_the_pruned_history(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        message = await _talk(echo, channel, ALICE, "Bonjour.")
        store = echo.runtime.store
        [post] = await sent_messages.of_exchange(store, f"discord:{message.id}")
        await forgetting.tidy(store, history_days=1, now=time.time() + 2 * 86_400)
        assert await _history(echo) == []
        assert await manage.exchange_of_sent(store, post) is None


async def test_a_deleted_message_is_forgotten_to_the_last_byte(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _talk(echo, channel, BOB, _secret(BOBS))
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        assert await _stored(echo, tmp_path, ALICES) > 0
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {ALICES}"]

        await _delete(echo, alices.id)
        await _settled(echo)

        assert await _stored(echo, tmp_path, ALICES) == 0
        assert await _memories(echo, ALICE) == []
        assert await _stored(echo, tmp_path, BOBS) > 0
        assert not any(s.startswith(f"discord:{alices.id}") for s, _ in await _history(echo))
        assert len(await _history(echo)) == 2  # Bob's message and the reply to it
        figures = await counters.read_all(echo.runtime.store, "deletions_followed")
        assert figures == {"deletions_followed": 1}
        await _command(echo, "privacy", ALICE)
        assert "A message you delete on Discord is forgotten here too" in rec.contents()[-1]
        # No intent beyond the bot's own: message events (default) and their content.
        intents = echo.intents
        assert intents.guild_messages and intents.dm_messages and intents.message_content
        assert (
            intents.value
            == (discord.Intents.default() | discord.Intents(message_content=True)).value
        )


async def test_a_deletion_of_a_message_never_stored_writes_nothing(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        await _talk(echo, channel, ALICE, "Bonjour.")
        store = echo.runtime.store
        before = await store.fetchall("SELECT count(*) FROM erasures")
        stranger = fakes.message(echo, channel, author_id=BOB, content="Rien pour Écho.")
        await _delete(echo, stranger.id)
        await _bulk_delete(echo, [stranger.id + 1, stranger.id + 2])
        await _edit(echo, stranger, "Rien du tout.")
        assert await store.fetchall("SELECT count(*) FROM erasures") == before
        assert await counters.read_all(store, "deletions_followed") == {}
        assert await counters.read_all(store, "edits_followed") == {}
        # The one stored among them is followed.
        [(source_id, _), _] = await _history(echo)
        await _bulk_delete(echo, [stranger.id + 3, int(source_id.removeprefix("discord:"))])
        assert await _history(echo) == []
        assert await counters.read_all(store, "deletions_followed") == {"deletions_followed": 1}


async def test_with_follow_deletions_off_everything_stays(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    privacy = {"follow_deletions": False}
    async with _bot_with(tmp_path, ollama, database=database, privacy=privacy) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        history = await _history(echo)
        posted = await sent_messages.of_exchange(echo.runtime.store, f"discord:{alices.id}")
        await _delete(echo, alices.id)
        await _bulk_delete(echo, [alices.id, *posted])
        assert await _history(echo) == history
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {ALICES}"]
        assert await _stored(echo, tmp_path, ALICES) > 0
        await _command(echo, "privacy", ALICE)
        assert "A message you delete on Discord stays in my memory" in rec.contents()[-1]


async def test_a_bulk_delete_forgets_each_message_and_each_reply(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        bobs = await _talk(echo, channel, BOB, _secret(BOBS))
        carols = await _talk(echo, channel, CAROL, "J'aime les tomates.")
        carols_reply = await sent_messages.of_exchange(echo.runtime.store, f"discord:{carols.id}")
        # A moderator clears the channel's last messages: two people's, the reply to the
        # third, and one nobody stored.
        await _bulk_delete(echo, [alices.id, bobs.id, *carols_reply, carols.id + 10_000])
        await _settled(echo)

        for code in (ALICES, BOBS):
            assert await _stored(echo, tmp_path, code) == 0
        assert await _memories(echo, ALICE) == await _memories(echo, BOB) == []
        # Carol's message stays; the reply to it, deleted, left the history.
        assert await _history(echo) == [(f"discord:{carols.id}", "J'aime les tomates.")]
        figures = await counters.read_all(echo.runtime.store)
        assert figures["deletions_followed"] == 2 and figures["deleted_replies_followed"] == 1
        await _command(echo, "stats", fakes.OWNER_ID)
        assert (
            "Followed on Discord: 2 deleted messages forgotten · 1 deleted reply dropped"
            in (rec.contents()[-1])
        )


async def test_the_characters_reply_deleted_leaves_the_history(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_replies = ["Je garde ça pour moi.", "Bien sûr."]
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        message = await _say(echo, channel, ALICE, "Tu te souviens de moi ?")
        [post] = await sent_messages.of_exchange(echo.runtime.store, f"discord:{message.id}")
        await _delete(echo, post)
        assert await _history(echo) == [(f"discord:{message.id}", "Tu te souviens de moi ?")]
        # The reflection still waiting reads the message alone.
        queued = await echo.runtime.store.fetchall("SELECT reply FROM outbox")
        assert [r[0] for r in queued] == [""]
        await _say(echo, channel, ALICE, "Et maintenant ?")
        prompt = canary.prompts(ollama)[-1]
        assert "Je garde ça pour moi." not in prompt and "Tu te souviens de moi ?" in prompt


async def test_an_edit_before_the_reflection_is_what_it_reads(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _say(echo, channel, ALICE, _secret(ALICES))  # not reflected yet

        await _edit(echo, alices, _secret(ALICES_NEW))
        await _reflect(echo)
        await _settled(echo)

        # One reflection reads the new wording (the bot's own may have started on the old one
        # before the edit: it then found its row gone and wrote nothing).
        reflections = [p for _, p in ollama.calls if canary.reflection_request(p)]
        asked = canary.reflection_request(reflections[-1])
        assert asked is not None and ALICES_NEW in asked["user_message"]
        assert len(reflections) == 1 or ALICES in str(reflections[0])
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {ALICES_NEW}"]
        # The reply quoted the old code: it left the history with it.
        assert await _history(echo) == [(f"discord:{alices.id}", _secret(ALICES_NEW))]
        assert await _stored(echo, tmp_path, ALICES) == 0


async def test_an_edit_after_the_reflection_takes_back_the_old_wording(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _talk(echo, channel, BOB, _secret(BOBS))
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        await _talk(echo, channel, CAROL, "Parlons du jardin, les tomates poussent bien.")
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {ALICES}"]

        replies = len(canary.prompts(ollama))
        await _edit(echo, alices, _secret(ALICES_NEW))
        await _reflect(echo)
        await _settled(echo)

        assert len(canary.prompts(ollama)) == replies  # not answered again by default
        assert not [s for s in rec.sent if s.method == "PATCH"]
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {ALICES_NEW}"]
        assert await _stored(echo, tmp_path, ALICES) == 0
        assert await _stored(echo, tmp_path, ALICES_NEW) > 0
        assert await _memories(echo, BOB) == [f"A pour code de coffre {BOBS}"]
        assert await _stored(echo, tmp_path, BOBS) > 0
        # The message keeps its place in the history, with its new wording.
        history = await _history(echo)
        assert [s for s, _ in history].index(f"discord:{alices.id}") == 2
        assert (f"discord:{alices.id}", _secret(ALICES_NEW)) in history
        await _say(echo, channel, CAROL, "Et sinon ?")
        prompt = canary.prompts(ollama)[-1]
        assert ALICES not in prompt and ALICES_NEW in prompt


async def test_an_edit_that_leaves_no_text_forgets_the_message(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        # Only a mention of the bot is left (an attachment aside): no word of hers stays.
        await _edit(echo, alices, f"<@{fakes.BOT_ID}>")
        await _settled(echo)
        assert await _history(echo) == []
        assert await _memories(echo, ALICE) == []
        assert await _stored(echo, tmp_path, ALICES) == 0


async def test_an_edit_flood_costs_two_edits_and_one_reflection(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """One person edits a reflected message 100 times at once: the first edit is followed, the
    99 others arrive meanwhile and only the latest is followed next; one reflection reads it."""
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        alices = await _talk(echo, channel, ALICE, _secret(ALICES))
        before = sum(1 for _, p in ollama.calls if canary.reflection_request(p))
        codes = [f"F{i:02d}CANARY{i:04d}" for i in range(100)]
        await asyncio.gather(*(_edit(echo, alices, _secret(code)) for code in codes))
        await _reflect(echo)
        await _settled(echo)

        figures = await counters.read_all(echo.runtime.store, "edits_followed")
        assert figures == {"edits_followed": 2}
        assert sum(1 for _, p in ollama.calls if canary.reflection_request(p)) == before + 1
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {codes[-1]}"]
        for code in [ALICES, *codes[:-1]]:
            assert await _stored(echo, tmp_path, code) == 0, code


async def test_with_answer_edits_the_reply_is_edited_to_a_new_answer(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    def answer(payload: dict[str, Any]) -> str:
        if canary.reflection_request(payload) is not None:
            return '{"memories": [], "summary": "On se présente."}'
        return f"Enchantée, {payload['messages'][-1]['content'].split()[-1].strip('.')} !"

    ollama.chat_reply = answer
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        settings = echo.runtime.settings
        settings.discord = settings.discord.model_copy(update={"answer_edits": True})
        channel = fakes.text_channel(echo, CHANNEL)
        message = await _talk(echo, channel, ALICE, "Je m'appelle Alice.")
        [post] = await sent_messages.of_exchange(echo.runtime.store, f"discord:{message.id}")
        await _edit(echo, message, "Je m'appelle Alicia.")

        edited = rec.sent[-1]
        assert edited.method == "PATCH" and edited.path.endswith(f"/messages/{post}")
        assert edited.payload["content"] == "Enchantée, Alicia !"
        assert edited.payload["allowed_mentions"] == {"parse": []}
        assert await _history(echo) == [
            (f"discord:{message.id}", "Je m'appelle Alicia."),
            (f"discord:{message.id}:reply", "Enchantée, Alicia !"),
        ]
        assert await sent_messages.of_exchange(echo.runtime.store, f"discord:{message.id}") == [
            post
        ]


async def test_an_update_that_changes_no_text_is_ignored(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        text = f"{_secret(ALICES)} https://example.com"
        alices = await _talk(echo, channel, ALICE, text)
        # An embed unfurled: the same content, with embeds; and a partial update without any.
        await _edit(echo, alices, text, embeds=[{"type": "link", "url": "https://example.com"}])
        await _gateway(echo, echo._connection.parse_message_update, {
            **fakes.payload_of(alices), "content": text, "flags": 4,
        })  # fmt: skip
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {ALICES}"]
        assert await counters.read_all(echo.runtime.store, "edits_followed") == {}
        assert sum(1 for _, p in ollama.calls if canary.reflection_request(p)) == 1
        # The same message edited for real is followed.
        await _edit(echo, alices, f"{_secret(ALICES_NEW)} https://example.com")
        await _reflect(echo)
        assert await _memories(echo, ALICE) == [f"A pour code de coffre {ALICES_NEW}"]
        assert await counters.read_all(echo.runtime.store, "edits_followed") == {
            "edits_followed": 1
        }


async def test_a_deletion_racing_the_reply_keeps_nothing(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    asked = asyncio.Event()
    go = asyncio.Event()

    async def hold(payload: dict[str, Any]) -> None:
        if canary.reflection_request(payload) is None:
            asked.set()
            await go.wait()

    ollama.pause = hold
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        message = fakes.message(echo, channel, author_id=ALICE, content=_secret(ALICES))
        turn = asyncio.create_task(echo.get_cog("Conversation").on_message(message))  # type: ignore[union-attr]
        await asyncio.wait_for(asked.wait(), 10)
        await _delete(echo, message.id)  # while the model writes the reply
        go.set()
        await turn
        await _reflect(echo)
        await _settled(echo)

        assert await _history(echo) == []
        assert await echo.runtime.store.fetchall("SELECT exchange_id FROM outbox") == []
        assert await sent_messages.of_exchange(echo.runtime.store, f"discord:{message.id}") == []
        assert await _memories(echo, ALICE) == []
        assert await _stored(echo, tmp_path, ALICES) == 0


async def test_a_deletion_of_a_message_waiting_in_line_keeps_nothing(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Deleted before its turn even stored it (it waited behind the person's earlier one)."""
    canary.script(ollama)
    asked = asyncio.Event()
    go = asyncio.Event()

    async def hold(payload: dict[str, Any]) -> None:
        if canary.reflection_request(payload) is None and not go.is_set():
            asked.set()
            await go.wait()

    ollama.pause = hold
    async with _bot_with(tmp_path, ollama, database=database) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        conversation = echo.get_cog("Conversation")
        first = fakes.message(echo, channel, author_id=ALICE, content="Bonjour !")
        second = fakes.message(echo, channel, author_id=ALICE, content=_secret(ALICES))
        turns = [asyncio.create_task(conversation.on_message(m)) for m in (first, second)]  # type: ignore[union-attr]
        await asyncio.wait_for(asked.wait(), 10)
        await _delete(echo, second.id)
        go.set()
        await asyncio.gather(*turns)
        await _reflect(echo)
        await _settled(echo)

        # The second came before the first's answer showed: one turn answered both (quick
        # lines); deleted while it was written, that turn keeps nothing, the first line stays.
        history = [s for s, _ in await _history(echo)]
        assert history == [f"discord:{first.id}"]
        assert await _stored(echo, tmp_path, ALICES) == 0
        assert len(rec.messages()) <= 1


async def test_many_people_edit_and_delete_at_once(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Concurrent twin: twelve people in two channels talk, then at once (random latencies)
    four delete, four edit (some racing their reflection), a thirteenth deletes while the reply
    is written, the others are left alone. The end state holds what each chose."""
    canary.script(ollama)
    rng = random.Random(32)
    codes = {p: f"P{p % 100:02d}CANARY{p:04d}" for p in range(2001, 2013)}
    edited = {p: f"E{p % 100:02d}CANARY{p:04d}" for p in codes}
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channels = [fakes.text_channel(echo, CHANNEL), fakes.text_channel(echo, OTHER_CHANNEL)]
        echo.get_cog("Conversation").channels.add(OTHER_CHANNEL)  # type: ignore[union-attr]
        racer = 2013  # speaks once, and deletes it while the reply is written
        codes[racer] = "R13CANARY2013"
        people = sorted(codes)[:-1]
        where = {p: channels[i % 2] for i, p in enumerate([*people, racer])}
        said = dict(zip(people, await asyncio.gather(*(
            _say(echo, where[p], p, _secret(codes[p])) for p in people
        )), strict=True))  # fmt: skip
        deleters, editors, kept = people[:4], people[4:8], people[8:]
        await echo.runtime.worker.run_due(limit=5)  # some reflected, the others waiting
        ollama.chaos = Chaos(seed=32, max_delay=0.03, failure_rate=0.0)

        async def act(person: int) -> None:
            await asyncio.sleep(rng.uniform(0, 0.02))
            message = said[person]
            if person in deleters:
                await _delete(echo, message.id, message.channel.id)
            else:
                await _edit(echo, message, _secret(edited[person]))

        racing = fakes.message(echo, where[racer], author_id=racer, content=_secret(codes[racer]))
        await asyncio.gather(
            *(act(p) for p in deleters + editors),
            echo.runtime.worker.run_due(limit=50),
            echo.get_cog("Conversation").on_message(racing),  # type: ignore[union-attr]
            _delete(echo, racing.id, racing.channel.id),
        )
        await _reflect(echo)
        await _settled(echo)

        for p in [*deleters, racer]:
            assert await _stored(echo, tmp_path, codes[p]) == 0, p
            assert await _memories(echo, p) == []
        for p in editors:
            assert await _stored(echo, tmp_path, codes[p]) == 0, p
            assert await _memories(echo, p) == [f"A pour code de coffre {edited[p]}"]
        for p in kept:
            assert await _memories(echo, p) == [f"A pour code de coffre {codes[p]}"]
            assert await _stored(echo, tmp_path, codes[p]) > 0


# Two characters: Brann, not the home one (Nyx), keeps his people and stories under derived ids.
CAST = [
    {"key": "nyx", "name": "Nyx", "persona": "Tu es Nyx.", "default": True},
    {"key": "brann", "name": "Brann", "persona": "Tu es Brann.", "channels": [OTHER_CHANNEL]},
]


async def test_deletions_to_every_character_leave_nothing_at_once(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Concurrent twin: six people tell Nyx (home) or Brann (derived ids) a secret, it is
    reflected, then at once (random latencies) each deletes it, alone or in a moderator's bulk
    delete. Each was answered lately (the bot still holds its id): nothing of it stays, in
    Brann's story as in Nyx's; a seventh person's secret stays."""
    canary.script(ollama)
    rng = random.Random(26)
    people = list(range(3001, 3007))
    codes = {p: f"D{p % 100:02d}CANARY{p:04d}" for p in [*people, 3007]}
    async with _bot_with(tmp_path, ollama, database=database, characters=CAST) as (echo, _):
        echo.get_cog("Conversation").channels.add(OTHER_CHANNEL)  # type: ignore[union-attr]
        where = {p: fakes.text_channel(echo, (CHANNEL, OTHER_CHANNEL)[p % 2]) for p in codes}
        said = {p: await _talk(echo, where[p], p, _secret(codes[p])) for p in codes}
        await _reflect(echo)
        for p in codes:
            assert await _stored(echo, tmp_path, codes[p]) > 0, p

        async def delete(person: int) -> None:
            await asyncio.sleep(rng.uniform(0, 0.02))
            message = said[person]
            if person % 3:
                await _delete(echo, message.id, message.channel.id)
            else:
                await _bulk_delete(echo, [message.id, message.id + 10_000], message.channel.id)

        await asyncio.gather(*(delete(p) for p in people))
        await _settled(echo)

        for p in people:
            assert await _stored(echo, tmp_path, codes[p]) == 0, p
        assert await _stored(echo, tmp_path, codes[3007]) > 0


async def test_with_answer_edits_a_characters_webhook_reply_is_edited_in_its_voice(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Brann (not the home character) answers through his webhook; the edited message is
    answered again by him, and his webhook's message is edited (the bot may not edit it)."""

    def answer(payload: dict[str, Any]) -> str:
        if canary.reflection_request(payload) is not None:
            return '{"memories": [], "summary": "On se présente."}'
        who = "Brann" if "Tu es Brann." in payload["messages"][0]["content"] else "Nyx"
        return f"{who} : enchanté, {payload['messages'][-1]['content'].split()[-1].strip('.')} !"

    ollama.chat_reply = answer
    cast = [CAST[0], {**CAST[1], "channels": [CHANNEL]}]
    async with _bot_with(tmp_path, ollama, characters=cast,
                         discord={"answer_edits": True}) as (echo, rec):  # fmt: skip
        fakes.allow_webhooks(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        message = await _talk(echo, channel, ALICE, "Je m'appelle Alice.")
        [post] = rec.webhook_posts()
        assert str(post.payload["content"]).endswith("\nBrann : enchanté, Alice !")
        await _edit(echo, message, "Je m'appelle Alicia.")

        [edited] = rec.webhook_edits()
        assert edited.path.endswith(f"/messages/{post.answer['id']}")  # type: ignore[index]
        assert edited.payload["content"] == f"-# ↪ {message.jump_url}\nBrann : enchanté, Alicia !"
        assert edited.payload["allowed_mentions"] == {"parse": []}
        stored = await forgetting.resolve(echo.runtime.store, f"discord:{message.id}:reply")
        assert stored is not None and stored.content == "Brann : enchanté, Alicia !"


async def test_with_answer_edits_a_shorter_answer_deletes_the_webhooks_extra_post(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    replies = iter(["Très long. " * 300, '{"memories": [], "summary": "."}', "Court."])
    ollama.chat_reply = lambda payload: next(replies)
    cast = [CAST[0], {**CAST[1], "channels": [CHANNEL]}]
    async with _bot_with(tmp_path, ollama, characters=cast,
                         discord={"answer_edits": True}) as (echo, rec):  # fmt: skip
        fakes.allow_webhooks(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        message = await _talk(echo, channel, ALICE, "Raconte.")
        first, *rest = (p.answer["id"] for p in rec.webhook_posts())  # type: ignore[index]
        assert rest
        await _edit(echo, message, "Raconte en bref.")
        [edited] = rec.webhook_edits()
        assert edited.path.endswith(f"/messages/{first}")
        deleted = [s.path for s in rec.sent if s.method == "DELETE"]
        assert [p.rpartition("/")[2] for p in deleted] == rest
        assert all(p.startswith("/webhooks/") for p in deleted)  # the bot may not delete them
        assert await sent_messages.of_exchange(echo.runtime.store, f"discord:{message.id}") == [
            int(first)
        ]


@pytest.mark.slow
async def test_one_person_editing_and_deleting_100_messages_at_once_loses_none(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Following an edit or a deletion is erasure: one person edits 100 of their recently
    answered messages at once (each edit takes a code out) and deletes 100 others, while two
    other people talk. None is let pass: every old code leaves the files, every edited message
    holds its new wording, and the others' conversations are answered as usual."""
    canary.script(ollama)
    n = 100
    edited = [f"E{i:03d}CANARY{i:04d}" for i in range(n)]
    deleted = [f"D{i:03d}CANARY{i:04d}" for i in range(n)]
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        elsewhere = fakes.text_channel(echo, OTHER_CHANNEL)
        echo.get_cog("Conversation").channels.add(OTHER_CHANNEL)  # type: ignore[union-attr]

        async def say_all(where: Any, codes: list[str]) -> list[discord.Message]:
            return [await _say(echo, where, ALICE, f"Note {code}") for code in codes]

        # Two places at once (her turns run one at a time in each): half the setting up.
        to_edit, to_delete = await asyncio.gather(
            say_all(channel, edited), say_all(elsewhere, deleted)
        )
        await _reflect(echo)
        others = [f"O{i:02d}CANARY{i:04d}" for i in range(10)]
        ollama.chaos = Chaos(seed=7, max_delay=0.02, failure_rate=0.0)

        async def talk(person: int, codes: list[str]) -> None:
            for code in codes:
                await _say(echo, channel, person, f"Note {code}")

        await asyncio.gather(
            *(_edit(echo, m, f"Note {i} sans code") for i, m in enumerate(to_edit)),
            *(_delete(echo, m.id, OTHER_CHANNEL) for m in to_delete),
            talk(BOB, others[:5]),
            talk(CAROL, others[5:]),
        )
        await _reflect(echo)
        await _settled(echo)

        assert echo.get_cog("Following").edits_waiting == 0  # type: ignore[union-attr]
        left = await canary.stored_each(echo.runtime.store, tmp_path, edited + deleted + others)
        assert {code: n for code, n in left.items() if n and code not in others} == {}
        history = dict(await _history(echo))
        for i, message in enumerate(to_edit):
            assert history[f"discord:{message.id}"] == f"Note {i} sans code"
        history_elsewhere = dict(await _history(echo, OTHER_CHANNEL))
        for message in to_delete:
            assert f"discord:{message.id}" not in history_elsewhere
        assert [code for code in others if not left[code]] == []
