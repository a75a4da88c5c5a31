"""/character set and /character show with real discord.py interactions: a moderator chooses a
channel's character, a person their own in DMs; the choice is kept across a restart, the next
message is answered by the chosen character, and changing it loses nothing of the other's.
/why names the character; /forget-me forgets one character's memory or every one's (0 bytes of
the canary, both backends)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from bot.discord.cogs.erasure import ConfirmErasure
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_context import MANAGE_CHANNELS, _sub
from tests.bot.discord.test_discord import (
    ALICE,
    BOB,
    CHANNEL,
    _bot_with,
    _command,
    _opt,
    _say,
)
from tests.bot.discord.test_erasure import _answer, _press
from tests.fakes import canary
from tests.fakes.ollama import Chaos, FakeOllama

CAST = [
    {"key": "nyx", "name": "Nyx", "persona": "Tu es Nyx, bibliothécaire.", "default": True},
    {"key": "brann", "name": "Brann", "persona": "Tu es Brann, forgeron."},
]
DM_CHANNEL = 77
OTHER = 20


def _personas(ollama: FakeOllama) -> list[str]:
    """The persona of each reply prompt sent so far (reflections left out)."""
    out = []
    for path, payload in ollama.calls:
        system = payload["messages"][0]["content"] if path == "/api/chat" else ""
        for persona in ("Tu es Nyx", "Tu es Brann"):
            if persona in system and "user_message" not in payload["messages"][-1]["content"]:
                out.append(persona)
    return out


def _prompt_texts(ollama: FakeOllama, since: int = 0) -> list[str]:
    """The chat prompts sent since call `since`, as text."""
    return [json.dumps(p["messages"], ensure_ascii=False) for path, p in ollama.calls[since:]
            if path == "/api/chat"]  # fmt: skip


async def test_a_moderator_sets_the_channels_character_and_the_others_story_stays(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama, characters=CAST) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Je range le grimoire vert.")
        assert _personas(ollama)[-1] == "Tu es Nyx"
        await _command(echo, "character", ALICE, options=_sub("set", _opt("key", "brann", 3)))
        assert "Manage Channels" in rec.contents()[-1]
        await _command(echo, "character", ALICE, options=_sub("set", _opt("key", "brann", 3)),
                       permissions=MANAGE_CHANNELS)  # fmt: skip
        assert rec.contents()[-1].startswith("Brann (`brann`) plays in this channel now.")
        assert rec.messages()[-1]["flags"] == fakes.EPHEMERAL
        await _command(echo, "character", BOB, options=_sub("show"))
        assert rec.contents()[-1].startswith("Brann (`brann`) plays in this channel.")
        calls = len(ollama.calls)
        await _say(echo, channel, ALICE, "Tu te souviens du grimoire ?")
        brann = [t for t in _prompt_texts(ollama, calls) if "Tu es Brann" in t]
        assert brann and "grimoire vert" not in brann[0]  # Nyx's story is not Brann's
        await _command(echo, "character", ALICE, options=_sub("set", _opt("key", "nope", 3)),
                       permissions=MANAGE_CHANNELS)  # fmt: skip
        assert "no character 'nope'" in rec.contents()[-1]
    # Kept across a restart; back to Nyx, her story is whole.
    async with _bot_with(tmp_path, ollama, characters=CAST) as (echo, rec):
        await _command(echo, "character", BOB, options=_sub("show"))
        assert rec.contents()[-1].startswith("Brann (`brann`) plays in this channel.")
        await _command(echo, "character", ALICE, options=_sub("set", _opt("key", "nyx", 3)),
                       permissions=MANAGE_CHANNELS)  # fmt: skip
        calls = len(ollama.calls)
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Et le grimoire ?")
        nyx = [t for t in _prompt_texts(ollama, calls) if "Tu es Nyx" in t]
        assert nyx and "grimoire vert" in nyx[0]


async def test_each_person_chooses_their_own_character_in_dms_at_once(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chaos = Chaos(seed=8, max_delay=0.02, failure_rate=0.0)
    rng = random.Random(8)
    people = {2000 + n: CAST[n % 2]["key"] for n in range(6)}
    async with _bot_with(tmp_path, ollama, characters=CAST) as (echo, rec):

        async def one(person: int, key: str) -> None:
            await asyncio.sleep(rng.uniform(0, 0.02))
            await echo.tree._call(fakes.interaction(
                echo, "character", user_id=person, channel_id=person, in_guild=False,
                options=_sub("set", _opt("key", key, 3)),
            ))  # fmt: skip
            dm = fakes.dm_channel(echo, person, person)
            await _say(echo, dm, person, f"Bonsoir, je suis {person}.")

        await asyncio.gather(*(one(p, k) for p, k in people.items()))
        texts = _prompt_texts(ollama)
        for person, key in people.items():
            mine = [t for t in texts if f"je suis {person}" in t and "user_message" not in t]
            persona = f"Tu es {key.title()}"
            assert mine and all(persona in t for t in mine), (person, key)
        chosen: Any = rec.contents()
        assert sum("plays in your DMs now" in c for c in chosen) == len(people)


async def test_why_names_the_character_and_forget_me_forgets_one_or_all(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    nyxs, branns = "NY1CANARY1111", "BR2CANARY2222"
    async with _bot_with(tmp_path, ollama, database=database, characters=CAST) as (echo, rec):
        await echo.tree._call(fakes.interaction(
            echo, "character", user_id=ALICE, channel_id=DM_CHANNEL, in_guild=False,
            options=_sub("set", _opt("key", "brann", 3)),
        ))  # fmt: skip
        places = ((fakes.text_channel(echo, CHANNEL), nyxs),
                  (fakes.dm_channel(echo, DM_CHANNEL, ALICE), branns))  # fmt: skip
        for channel, code in places:
            await _say(echo, channel, ALICE, f"Mon code est {code}.")
            await echo.runtime.worker.run_due()
        await _say(echo, places[1][0], ALICE, "Tu te souviens de mon code ?")
        await echo.tree._call(
            fakes.interaction(echo, "why", user_id=ALICE, channel_id=DM_CHANNEL, in_guild=False)
        )
        why = rec.contents()[-1]
        assert why.startswith("Brann's memories of you (`brann`")
        assert branns in why and nyxs not in why
        await echo.tree._call(fakes.interaction(
            echo, "forget-me", user_id=ALICE, channel_id=CHANNEL,
            options=[_opt("character", "brann", 3)],
        ))  # fmt: skip
        assert "Erase everything Brann (`brann`) stores about you" in rec.contents()[-1]
        playing = echo.runtime.characters.need("brann")
        await _press(echo, ConfirmErasure(ALICE, ALICE, character=playing), ALICE)
        assert _answer(rec).startswith("Erased everything Brann stored about you:")
        assert await canary.stored(echo.runtime.store, tmp_path, branns) == 0
        assert await canary.stored(echo.runtime.store, tmp_path, nyxs) > 0
        await _press(echo, ConfirmErasure(ALICE, ALICE), ALICE)
        assert _answer(rec).startswith("Erased everything about you:")
        assert await canary.stored(echo.runtime.store, tmp_path, nyxs) == 0


async def test_forget_me_for_one_character_follows_the_sharing_setting_as_it_was(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Alice tells Brann a secret while memories are each character's, then, sharing turned on,
    another to Brann and one to Nyx. `/forget-me character:brann` takes both of Brann's, kept
    under his ids for her and under her own; Nyx's stays."""
    canary.script(ollama)
    before, during, nyxs = "BR1CANARY1111", "BR2CANARY2222", "NY3CANARY3333"
    cast = [CAST[0], {**CAST[1], "channels": [OTHER]}]
    discord = {"channels": [CHANNEL, OTHER]}
    async with _bot_with(tmp_path, ollama, database=database, characters=cast,
                         discord=discord) as (echo, _):  # fmt: skip
        await _say(echo, fakes.text_channel(echo, OTHER), ALICE, f"Mon code est {before}.")
        await echo.runtime.worker.run_due()
    shared = {"shared_between_characters": True}
    async with _bot_with(tmp_path, ollama, database=database, characters=cast,
                         discord=discord, memory=shared) as (echo, rec):  # fmt: skip
        for channel, code in ((OTHER, during), (CHANNEL, nyxs)):
            await _say(echo, fakes.text_channel(echo, channel), ALICE, f"Mon code est {code}.")
            await echo.runtime.worker.run_due()
        playing = echo.runtime.characters.need("brann")
        await _press(echo, ConfirmErasure(ALICE, ALICE, character=playing), ALICE)
        assert _answer(rec).startswith("Erased everything Brann stored about you:")
        store = echo.runtime.store
        assert await canary.stored(store, tmp_path, before) == 0
        assert await canary.stored(store, tmp_path, during) == 0
        assert await canary.stored(store, tmp_path, nyxs) > 0
