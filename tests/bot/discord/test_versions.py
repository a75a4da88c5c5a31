"""Correcting a memory on Discord: the Edit action on /memories and /why opens a form with the
text prefilled; what is submitted is the memory's new version, the old one kept as history
(/memories history:ID), undone by /restore. Real discord.py interactions (a select, a modal
submit) dispatched by the client's own state, as Discord's gateway delivers them."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from bot.discord.app import EchoBot
from memory import manage
from memory.store.tables import memory_versions
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _command, _opt, _remember, _say

_ids = itertools.count(9_000_000)


def _base(user_id: int, kind: int, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(next(_ids)), "application_id": str(fakes.BOT_ID), "type": kind,
        "token": "token", "version": 1, "channel_id": str(CHANNEL), "locale": "en-US",
        "app_permissions": "0", "entitlements": [], "authorizing_integration_owners": {},
        "guild_id": str(fakes.GUILD_ID), "attachment_size_limit": 8_388_608,
        "channel": {"id": str(CHANNEL), "type": 0, "guild_id": str(fakes.GUILD_ID), "name": "c",
                    "position": 0, "permission_overwrites": [], "nsfw": False},
        "member": {"user": fakes.user_payload(user_id), "roles": [],
                   "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False, "mute": False,
                   "permissions": "0", "flags": 0},
        "data": data,
    }  # fmt: skip


async def _deliver(echo: EchoBot, payload: dict[str, Any]) -> None:
    """Hand an interaction to the client as the gateway does, and wait for what it started."""
    echo._connection.parse_interaction_create(payload)  # type: ignore[arg-type]
    for _ in range(3):
        await asyncio.sleep(0)
        running = [
            t for t in asyncio.all_tasks()
            if t.get_name().startswith("discord-ui") and t is not asyncio.current_task()
        ]  # fmt: skip
        await asyncio.gather(*running)


def _select_of(sent: dict[str, Any]) -> dict[str, Any]:
    return next(c for row in sent["components"] for c in row["components"] if c["type"] == 3)


async def _choose(echo: EchoBot, rec: fakes.Recorder, user: int, memory_id: int) -> dict[str, Any]:
    """Pick a memory in the last answer's Edit select; return the form Discord was sent."""
    select = _select_of(rec.messages()[-1])
    data = {"custom_id": select["custom_id"], "component_type": 3, "values": [str(memory_id)]}
    payload = _base(user, 3, data) | {"message": fakes._message_payload(CHANNEL, "")}
    await _deliver(echo, payload)
    modal = next(s for s in reversed(rec.sent) if s.payload.get("type") == 9)
    return dict(modal.payload["data"])


async def _submit(echo: EchoBot, user: int, form: dict[str, Any], text: str) -> None:
    field = form["components"][0]["components"][0]
    data = {
        "custom_id": form["custom_id"],
        "components": [
            {"type": 1, "components": [{"type": 4, "custom_id": field["custom_id"], "value": text}]}
        ],
    }
    await _deliver(echo, _base(user, 5, data))


def _answer(rec: fakes.Recorder) -> str:
    return str(rec.messages()[-1]["content"])


async def test_edit_from_memories_opens_a_prefilled_form_and_keeps_the_old_version(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    lyon = await _remember(echo, ALICE, "Lives in Lyon")
    await _remember(echo, ALICE, "Plays the cello")
    await _command(echo, "memories", ALICE)
    form = await _choose(echo, rec, ALICE, lyon)
    field = form["components"][0]["components"][0]
    assert field["value"] == "Lives in Lyon"  # prefilled
    await _submit(echo, ALICE, form, "Lives in Paris since November")
    assert f"#{lyon} now says: Lives in Paris since November" in _answer(rec)
    memory = await manage.get(echo.runtime.store, ALICE, lyon)
    assert memory.text == "Lives in Paris since November"
    assert [v.text for v in await memory_versions.history(echo.runtime.store, ALICE, lyon)] == [
        "Lives in Lyon"
    ]
    await _command(echo, "memories", ALICE)
    assert "current since" in _answer(rec)
    await _command(echo, "memories", ALICE, options=[_opt("history", lyon)])
    shown = _answer(rec)
    assert "Lives in Paris since November" in shown and "Lives in Lyon" in shown
    assert "edited by you" in shown
    await _command(echo, "restore", ALICE, options=[_opt("memory", lyon)])
    assert f"#{lyon} is back to: Lives in Lyon" in _answer(rec)


async def test_another_person_submitting_the_form_changes_nothing(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    lyon = await _remember(echo, ALICE, "Lives in Lyon")
    await _command(echo, "memories", ALICE)
    form = await _choose(echo, rec, ALICE, lyon)
    await _submit(echo, BOB, form, "Lives on the moon")
    assert _answer(rec) == f"No memory #{lyon}."  # like a missing one
    assert (await manage.get(echo.runtime.store, ALICE, lyon)).text == "Lives in Lyon"
    assert await memory_versions.history(echo.runtime.store, ALICE, lyon) == []
    # Nor can Bob restore or read the history of her memory.
    await _command(echo, "restore", BOB, options=[_opt("memory", lyon)])
    assert _answer(rec) == f"No earlier version of memory #{lyon}."
    await _command(echo, "memories", BOB, options=[_opt("history", lyon)])
    assert _answer(rec) == f"No memory #{lyon}."


async def test_edit_from_why_and_many_people_editing_at_once(
    bot: tuple[EchoBot, fakes.Recorder],
) -> None:
    echo, rec = bot
    people = [ALICE, BOB, 1003, 1004]
    ids = {p: await _remember(echo, p, f"Works as a baker, says {p}") for p in people}
    channel = fakes.text_channel(echo, CHANNEL)
    forms = {}
    for p in people:
        await _say(echo, channel, p, "What do I do for a living?")
        await _command(echo, "why", p)
        assert f"#{ids[p]}" in str(_select_of(rec.messages()[-1])["options"])
        forms[p] = await _choose(echo, rec, p, ids[p])
    await asyncio.gather(
        *(_submit(echo, p, forms[p], f"Works as a nurse, says {p}") for p in people)
    )
    for p in people:
        memory = await manage.get(echo.runtime.store, p, ids[p])
        assert memory.text == f"Works as a nurse, says {p}"
        chain = await memory_versions.history(echo.runtime.store, p, ids[p])
        assert [v.text for v in chain] == [f"Works as a baker, says {p}"]
