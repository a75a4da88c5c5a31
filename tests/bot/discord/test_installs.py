"""`[discord] user_install`: the commands as Discord receives them say where each may be
installed and used only when it is on; then a person's own commands work in a group DM the bot
is not in (a real discord.py interaction from Discord's payload), through their installed app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings
from bot.discord.app import EchoBot, Sync
from bot.discord.installs import PERSONAL
from bot.runtime import open_runtime
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, _opt
from tests.fakes.ollama import FakeOllama

GROUP_DM = 5050
GUILD, BOT_DM, PRIVATE = 0, 1, 2
GUILD_INSTALL, USER_INSTALL = 0, 1


@asynccontextmanager
async def _started(
    tmp_path: Path, ollama: FakeOllama, rec: fakes.Recorder, *, user_install: bool
) -> AsyncIterator[EchoBot]:
    """A bot started as `run` starts it, sending its commands (a fresh database each time)."""
    settings = Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage={"path": tmp_path / f"echo-{user_install}.sqlite3"},  # type: ignore[arg-type]
        discord={"user_install": user_install},  # type: ignore[arg-type]
    )
    async with open_runtime(settings) as runtime:
        echo = EchoBot(runtime, sync=Sync.CHANGED, background=False)
        await fakes.install(echo, rec)
        try:
            await echo.setup_hook()
            yield echo
        finally:
            await echo.close()


def _by_name(sent: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in sent}


@pytest.mark.parametrize("user_install", [False, True])
async def test_the_commands_say_where_they_may_be_installed_only_when_asked(
    tmp_path: Path, ollama: FakeOllama, user_install: bool
) -> None:
    rec = fakes.Recorder()
    async with _started(tmp_path, ollama, rec, user_install=user_install):
        pass
    [sent] = rec.commands_sent()
    commands = _by_name(sent)
    assert set(commands) >= PERSONAL
    if not user_install:  # as before: Discord's defaults (and what @guild_only says)
        assert all(c.get("integration_types") is None for c in sent)
        placed = {name: c["contexts"] for name, c in commands.items() if c.get("contexts")}
        assert placed == {"forget-member": [GUILD]}
        assert not commands["channel"]["dm_permission"]
        return
    for name, command in commands.items():
        if name in PERSONAL:
            assert command["integration_types"] == [GUILD_INSTALL, USER_INSTALL], name
            assert command["contexts"] == [GUILD, BOT_DM, PRIVATE], name
        else:
            assert command["integration_types"] == [GUILD_INSTALL], name
            assert PRIVATE not in command["contexts"], name
    # Those for servers only stay there; the others keep the bot's DMs.
    assert commands["forget-member"]["contexts"] == [GUILD]
    assert commands["channel"]["contexts"] == [GUILD]
    assert commands["why"]["contexts"] == [GUILD, BOT_DM]
    assert commands["channel"]["name_localizations"]["fr"] == "salon"


async def test_a_person_remembers_and_lists_their_memories_in_a_group_dm(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    rec = fakes.Recorder()
    async with _started(tmp_path, ollama, rec, user_install=True) as echo:
        said = {"user_id": ALICE, "channel_id": GROUP_DM, "in_guild": False, "group_dm": True}
        remember = fakes.interaction(
            echo, "remember", options=[_opt("text", "Grows tomatoes on the balcony", 3)], **said
        )
        assert remember.context.private_channel and remember.guild_id is None
        await echo.tree._call(remember)
        assert rec.contents()[-1].startswith("Memory #")
        await echo.tree._call(fakes.interaction(echo, "memories", **said))
        listed = rec.messages()[-1]
        assert listed["flags"] == fakes.EPHEMERAL
        assert "tomatoes on the balcony" in listed["content"]
