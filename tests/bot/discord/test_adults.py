"""Characters for adults only: they play where Discord marks the channel age-restricted (a
thread: its channel), in DMs only when the operator allows it, and elsewhere decline in one line
before anything is stored (0 bytes of the message's canary in the database files; on
PostgreSQL, in no column of any row). Real discord.py channels and messages, the loopback LLM."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot import runtime
from bot.config import Settings
from bot.discord import adults
from memory import Card
from memory.character.cards import parse_card
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _say
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama

RESTRICTED = 30
THREAD = 31
SECRET = "AD1CANARY3141"
ADULT = {"character": {"adult": True}}


def _asked(ollama: FakeOllama) -> int:
    return len([p for p, _ in ollama.calls if p == "/api/chat"])


async def test_an_adult_character_declines_outside_age_restricted_channels_storing_nothing(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama, database=database, **ADULT) as (echo, rec):
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, f"Mon code est {SECRET}.")
        await _say(echo, fakes.dm_channel(echo, 40, BOB), BOB, f"Et le mien {SECRET}.")
        await echo.runtime.worker.run_due()

        assert rec.contents() == [adults.DECLINE, adults.DECLINE]
        assert _asked(ollama) == 0
        assert await canary.stored(echo.runtime.store, tmp_path, SECRET) == 0
        for table in ("messages", "outbox", "turns", "applied_exchanges", "memories"):
            row = await echo.runtime.store.fetchone(f"SELECT count(*) FROM {table}")
            assert row is not None and row[0] == 0, table


async def test_an_adult_character_plays_in_age_restricted_channels_and_their_threads(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    discord = {"channels": [CHANNEL, RESTRICTED, THREAD]}
    async with _bot_with(tmp_path, ollama, discord=discord, **ADULT) as (echo, rec):
        restricted = fakes.text_channel(echo, RESTRICTED, nsfw=True)
        await _say(echo, restricted, ALICE, "Code AA1CANARY0001")
        await _say(echo, fakes.thread(echo, THREAD, RESTRICTED, nsfw=True), BOB, "BB2CANARY0002")
        assert rec.contents() == ["Noté : AA1CANARY0001.", "Noté : BB2CANARY0002."]


async def test_dms_follow_the_operators_setting(tmp_path: Path, ollama: FakeOllama) -> None:
    canary.script(ollama)
    discord = {"adult_in_dms": True}
    async with _bot_with(tmp_path, ollama, discord=discord, **ADULT) as (echo, rec):
        await _say(echo, fakes.dm_channel(echo, 40, ALICE), ALICE, "Hello")
        await _say(echo, fakes.text_channel(echo, CHANNEL), BOB, "Hello")
        assert rec.contents() == ["D'accord.", adults.DECLINE]


async def test_many_people_at_once_in_both_kinds_of_channel(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Concurrent twin: 20 people write at once, half in an age-restricted channel, half in an
    ordinary one; each of the first is answered, each of the others declined, and only the
    first are stored."""
    canary.script(ollama)
    discord = {"channels": [CHANNEL, RESTRICTED]}
    async with _bot_with(tmp_path, ollama, discord=discord, **ADULT) as (echo, rec):
        open_ = fakes.text_channel(echo, CHANNEL)
        restricted = fakes.text_channel(echo, RESTRICTED, nsfw=True)
        codes = [f"P{i:02d}CANARY{1000 + i}" for i in range(20)]
        await asyncio.gather(*(
            _say(echo, restricted if i % 2 else open_, 2000 + i, f"Code {code}")
            for i, code in enumerate(codes)
        ))  # fmt: skip
        await echo.runtime.worker.run_due(limit=100)

        said = rec.contents()
        assert said.count(adults.DECLINE) == 10
        assert sorted(c for c in said if c != adults.DECLINE) == sorted(
            f"Noté : {code}." for i, code in enumerate(codes) if i % 2
        )
        found = await canary.stored_each(echo.runtime.store, tmp_path, codes)
        assert [n for i, n in enumerate(found.values()) if not i % 2] == [0] * 10
        assert all(n > 0 for i, n in enumerate(found.values()) if i % 2)


def _card(tags: object) -> Card:
    return parse_card(json.dumps({
        "spec": "chara_card_v2", "spec_version": "2.0",
        "data": {"name": "Nyx", "description": "A librarian.", "tags": tags},
    }))  # fmt: skip


def test_a_cards_tags_or_the_operator_say_whether_it_is_for_adults(tmp_path: Path) -> None:
    assert _card(["Fantasy", "NSFW"]).adult and _card([" adult "]).adult and _card(["18+"]).adult
    assert not _card(["SFW", "fantasy"]).adult and not _card("nsfw").adult
    auto = Settings()
    assert runtime.character(auto, _card(["nsfw"])).adult
    assert not runtime.character(auto, _card(["sfw"])).adult
    off = Settings(character={"adult": False})  # type: ignore[arg-type]
    assert not runtime.character(off, _card(["nsfw"])).adult
    on = Settings(character={"adult": True})  # type: ignore[arg-type]
    assert runtime.character(on).adult
    # What check-config and doctor say of it.
    line = runtime.describe_character(on, None, tmp_path / "config.toml")
    assert line.endswith("; for adults (adult = true): plays only in age-restricted channels, "
                         "not in DMs")  # fmt: skip
    assert "adults" not in runtime.describe_character(auto, None, tmp_path / "config.toml")
