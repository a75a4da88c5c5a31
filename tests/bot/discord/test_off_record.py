"""Off the record, and receipts: a person's 🤐 reaction (MESSAGE_REACTION_ADD parsed by
discord.py) or "Don't remember this" keeps their message out of memory, before or after it is
answered, and receipts DM what a reflection stored. Through the project's Discord fakes and the
loopback LLM that reflects as a model would (tests/fakes/canary.py): what was learned from a
message, in words of neither the message nor the reply, leaves 0 bytes in the database files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import discord

from bot.discord.app import EchoBot
from bot.discord.cogs import off_record
from memory import manage
from memory.store.tables import counters
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _command, _opt, _say
from tests.bot.discord.test_following import _gateway, _history
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama

GARDEN = "J'adore mon jardin."
BOOKS = "Je lis beaucoup de romans le soir."
# What the scripted model learns from GARDEN (canary.REWORDED): in no word of the message.
LEARNED = ("Aime jardiner", "On cultive des plantes", "Les plantes aiment le soleil")


async def _zip(echo: EchoBot, message: discord.Message, by: int) -> None:
    """The 🤐 reaction of `by` on `message`, as the gateway brings it."""
    await _gateway(echo, echo._connection.parse_message_reaction_add, {
        "user_id": str(by), "channel_id": str(message.channel.id),
        "message_id": str(message.id), "guild_id": str(fakes.GUILD_ID),
        "emoji": {"id": None, "name": off_record.ZIPPED},
        "message_author_id": str(message.author.id), "burst": False, "type": 0,
        "member": {"user": fakes.user_payload(by), "roles": [], "deaf": False, "mute": False,
                   "joined_at": "2026-01-01T00:00:00+00:00", "flags": 0},
    })  # fmt: skip


async def _reflect(echo: EchoBot) -> None:
    conversation = echo.get_cog("Conversation")
    await asyncio.gather(*getattr(conversation, "_background", ()))
    await echo.runtime.worker.run_due(limit=100)
    await _cog(echo).receipts.drain()


def _cog(echo: EchoBot) -> off_record.OffRecord:
    # The extension's module as loaded (load_extension imports its own copy).
    return cast("off_record.OffRecord", echo.get_cog("OffRecord"))


async def _learned(echo: EchoBot, folder: Path) -> dict[str, int]:
    return await canary.stored_each(echo.runtime.store, folder, LEARNED)


async def _memories(echo: EchoBot, user_id: int) -> list[str]:
    return sorted(m.text for m in await manage.list_memories(echo.runtime.store, user_id))


def _reflected(ollama: FakeOllama) -> list[str]:
    """The messages a reflection was asked about, in order."""
    asked = [canary.reflection_request(p) for path, p in ollama.calls if path == "/api/chat"]
    return [str(a["user_message"]) for a in asked if a is not None]


def _dms(rec: fakes.Recorder) -> list[tuple[int, dict[str, Any]]]:
    """Each direct message the bot sent: to whom, and what."""
    return [
        (rec.dms[int(s.path.split("/")[2])], s.payload)
        for s in rec.sent
        if s.method == "POST" and s.path.endswith("/messages") and not s.refused
        and int(s.path.split("/")[2]) in rec.dms
    ]  # fmt: skip


async def _press(echo: EchoBot, sent: dict[str, Any], custom_id: str, user: int) -> None:
    """Press a button of a message the bot sent, as Discord delivers it; wait for its work."""
    message = {**fakes.payload_of(fakes.message(echo, fakes.text_channel(echo, CHANNEL),
               author_id=fakes.BOT_ID, content=sent["content"])),
               "components": sent["components"]}  # fmt: skip
    payload = fakes.component_payload(
        user_id=user, channel_id=CHANNEL, custom_id=custom_id, message=message
    )
    echo._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
    store = echo._connection._view_store
    while tasks := set(store._ViewStore__tasks):  # type: ignore[attr-defined]
        await asyncio.gather(*tasks)


async def test_a_zipper_after_the_reply_takes_back_what_was_learned(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        books = await _say(echo, channel, BOB, BOOKS)
        garden = await _say(echo, channel, ALICE, GARDEN)
        await _reflect(echo)
        assert await _memories(echo, ALICE) == ["Aime jardiner"]
        assert all(n > 0 for n in (await _learned(echo, tmp_path)).values())

        await _zip(echo, garden, ALICE)

        assert await _learned(echo, tmp_path) == dict.fromkeys(LEARNED, 0)
        assert await _memories(echo, ALICE) == []
        assert await _memories(echo, BOB) == ["Dévore des livres"]
        history = await _history(echo)
        assert (f"discord:{garden.id}", GARDEN) in history  # kept for the conversation
        assert len(history) == 4  # both messages, both replies
        # Answered again later (an edit, a retry): still never reflected.
        await _say(echo, channel, ALICE, "Bonne nuit.")
        await _reflect(echo)
        assert _reflected(ollama).count(GARDEN) == 1
        assert await _memories(echo, ALICE) == []
        assert books.id  # Bob's exchange untouched
        figures = await counters.read_all(echo.runtime.store, "kept_off_record")
        assert figures == {"kept_off_record": 1}


async def test_a_zipper_before_the_reply_means_it_is_never_reflected(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        garden = fakes.message(echo, channel, author_id=ALICE, content=GARDEN)
        await _zip(echo, garden, ALICE)  # while the character is still writing
        await echo.get_cog("Conversation").on_message(garden)  # type: ignore[union-attr]
        await _reflect(echo)

        assert rec.contents() == ["D'accord."]  # answered as usual
        assert GARDEN not in _reflected(ollama)  # never sent to be reflected
        assert await _memories(echo, ALICE) == []
        assert await _learned(echo, tmp_path) == dict.fromkeys(LEARNED, 0)
        assert (f"discord:{garden.id}", GARDEN) in await _history(echo)
        row = await echo.runtime.store.fetchone(
            "SELECT status, user_message FROM outbox WHERE exchange_id = ?",
            (f"discord:{garden.id}",),
        )
        assert row is not None and tuple(row) == ("done", "")


async def test_someone_elses_zipper_does_nothing(tmp_path: Path, ollama: FakeOllama) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        garden = await _say(echo, channel, ALICE, GARDEN)
        await _reflect(echo)
        await _zip(echo, garden, BOB)
        assert await _memories(echo, ALICE) == ["Aime jardiner"]
        assert rec.contents() == ["D'accord."]  # and nothing said about it


async def test_the_message_menu_is_for_its_author_only(tmp_path: Path, ollama: FakeOllama) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        garden = await _say(echo, channel, ALICE, GARDEN)
        await _reflect(echo)
        name = "Don't remember this"

        await echo.tree._call(fakes.message_command(
            echo, name, user_id=BOB, channel_id=CHANNEL, target=garden))  # fmt: skip
        assert rec.messages()[-1]["content"] == off_record.NOT_YOURS
        assert rec.messages()[-1]["flags"] == fakes.EPHEMERAL
        assert await _memories(echo, ALICE) == ["Aime jardiner"]

        await echo.tree._call(fakes.message_command(
            echo, name, user_id=ALICE, channel_id=CHANNEL, target=garden))  # fmt: skip
        assert rec.messages()[-1]["content"] == off_record.TAKEN_BACK
        assert await _memories(echo, ALICE) == []
        assert await _learned(echo, tmp_path) == dict.fromkeys(LEARNED, 0)


async def test_many_people_marking_and_talking_at_once(tmp_path: Path, ollama: FakeOllama) -> None:
    """Concurrent twin: 12 people each say two things at once and zip the first, half of them
    before its reply, half after; the reflections run among the marks. Each keeps exactly the
    memory of their second message."""
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        people = range(3000, 3012)
        kept = {p: f"K{p % 100:02d}CANARY{p}" for p in people}
        hidden = {p: f"H{p % 100:02d}CANARY{p}" for p in people}
        first = {
            p: fakes.message(echo, channel, author_id=p, content=f"Code {hidden[p]}")
            for p in people
        }
        conversation = echo.get_cog("Conversation")

        async def person(p: int) -> None:
            if p % 2:
                await _zip(echo, first[p], p)
            await conversation.on_message(first[p])  # type: ignore[union-attr]
            await _say(echo, channel, p, f"Code {kept[p]}")
            if not p % 2:
                await asyncio.gather(_zip(echo, first[p], p), echo.runtime.worker.run_due())

        await asyncio.gather(*(person(p) for p in people))
        await _reflect(echo)

        for p in people:
            assert await _memories(echo, p) == [f"A pour code de coffre {kept[p]}"]
        await echo.runtime.store.checkpoint()  # the WAL's older copies of the pages folded
        found = await canary.stored_each(echo.runtime.store, tmp_path, [*hidden.values()])
        # Each hidden code is left only in its message and the reply quoting it: the history.
        history = " ".join(text for _, text in await _history(echo))
        assert found == {code: history.count(code) for code in hidden.values()}


async def test_receipts_are_off_by_default_and_dm_only_the_author(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, GARDEN)
        await _reflect(echo)
        assert _dms(rec) == []  # off by default

        await _command(echo, "privacy", ALICE, options=[_opt("receipts", "on", 3)])
        assert "Receipts: on" in rec.contents()[-1]
        await _say(echo, channel, BOB, BOOKS)  # Bob asked for none
        await _say(echo, channel, ALICE, "Code RC1CANARY2024")
        await _reflect(echo)

        [(to, sent)] = _dms(rec)
        assert to == ALICE
        memory = (await manage.list_memories(echo.runtime.store, ALICE))[0]
        assert sent["content"] == (
            f"Noted from your message in <#{CHANNEL}>:\n• #{memory.id} {memory.text}"
        )
        assert sent["allowed_mentions"]["parse"] == []
        buttons = [c["custom_id"] for row in sent["components"] for c in row["components"]]
        assert buttons == [
            f"echo:receipt:undo:{ALICE}:{memory.id}",
            f"echo:receipt:edit:{ALICE}:{memory.id}",
        ]

        # Undo, pressed by someone else: refused; by Alice: the memory is gone.
        await _press(echo, sent, buttons[0], BOB)
        assert "Only the person this receipt was sent to" in rec.contents()[-1]
        assert memory.text in await _memories(echo, ALICE)
        await _press(echo, sent, buttons[0], ALICE)
        assert rec.contents()[-1].startswith(f"Forgotten #{memory.id}.")
        assert memory.text not in await _memories(echo, ALICE)


async def test_closed_dms_get_no_receipt_and_are_counted(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        rec.closed_dms.add(ALICE)
        await _command(echo, "privacy", ALICE, options=[_opt("receipts", "on", 3)])
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, GARDEN)
        await _reflect(echo)
        assert _dms(rec) == []
        figures = await counters.read_all(echo.runtime.store, "receipts_undelivered")
        assert figures == {"receipts_undelivered": 1}
        assert await _memories(echo, ALICE) == ["Aime jardiner"]  # the reflection stands
        await _command(echo, "stats", fakes.OWNER_ID)  # the operator sees it counted
        assert "0 receipts sent, 1 undelivered (DMs closed)" in rec.contents()[-1]
