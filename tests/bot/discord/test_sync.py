"""The cogs are extensions, and the slash commands reach Discord only when they changed (or on
`echo-bot sync`): real discord.py objects, what would be sent recorded at the HTTP seam, and
`echo-bot sync` run against the loopback Discord."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from bot.config import Settings
from bot.discord import i18n
from bot.discord.app import EXTENSIONS, EchoBot, Sync
from bot.runtime import open_runtime
from tests.bot import discord_fakes as fakes
from tests.bot.cli_runner import echo_bot
from tests.bot.discord.test_startup import EXIT_WITHIN, TOKEN, _config
from tests.fakes.discord_api import BOT_ID, FakeDiscord, serve_fake_discord
from tests.fakes.ollama import FakeOllama

CHANNEL = 10


@asynccontextmanager
async def _started(
    tmp_path: Path,
    ollama: FakeOllama,
    recorder: fakes.Recorder,
    sync: Sync = Sync.CHANGED,
    application_id: int = fakes.BOT_ID,
) -> AsyncIterator[EchoBot]:
    """A bot started as `run` starts it (setup_hook), on the same database each time."""
    settings = Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage={"path": tmp_path / "echo.sqlite3"},  # type: ignore[arg-type]
    )
    async with open_runtime(settings) as runtime:
        echo = EchoBot(runtime, sync=sync, background=False)
        await fakes.install(echo, recorder)
        echo._connection.application_id = application_id
        try:
            await echo.setup_hook()
            yield echo
        finally:
            await echo.close()


def _names(echo: EchoBot) -> set[str]:
    return {c.name for c in echo.tree.get_commands()}


async def test_each_cog_is_an_extension_that_unloads_and_loads_back(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    rec = fakes.Recorder()
    async with _started(tmp_path, ollama, rec, Sync.NEVER) as echo:
        assert sorted(echo.extensions) == sorted(EXTENSIONS)
        everything = _names(echo)
        await echo.unload_extension("bot.discord.cogs.context")
        assert everything - _names(echo) == {
            "context", "strategy", "lore", "Exclude from context", "Include in context"
        }  # fmt: skip
        assert echo.get_cog("ContextCommands") is None
        await echo.load_extension("bot.discord.cogs.context")
        assert _names(echo) == everything
        interaction = fakes.interaction(echo, "strategy", user_id=1, channel_id=CHANNEL)
        await echo.tree._call(interaction)
        assert rec.contents()[-1].startswith("Strategy here: `summarize` (available: ")
    assert rec.commands_sent() == []  # Sync.NEVER


async def test_commands_are_sent_when_they_changed_not_at_every_start(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = fakes.Recorder()
    async with _started(tmp_path, ollama, rec) as echo:
        everything = _names(echo)
    [first] = rec.commands_sent()  # never sent from this database: sent
    assert {c["name"] for c in first} == everything
    for _ in range(2):  # restarts with the same commands: nothing sent
        async with _started(tmp_path, ollama, rec):
            pass
    assert len(rec.commands_sent()) == 1
    # A release changes one command (here its French name): sent at the next start, once.
    monkeypatch.setitem(i18n.FRENCH, "why", "pourquoi-donc")
    for _ in range(2):
        async with _started(tmp_path, ollama, rec):
            pass
    assert len(rec.commands_sent()) == 2
    why = next(c for c in rec.commands_sent()[-1] if c["name"] == "why")
    assert why["name_localizations"]["fr"] == "pourquoi-donc"
    # The same commands under another application (a new bot's token): it has none yet.
    async with _started(tmp_path, ollama, rec, application_id=4242):
        pass
    assert len(rec.commands_sent()) == 3


async def test_echo_bot_sync_sends_the_commands_even_when_unchanged(tmp_path: Path) -> None:
    async with serve_fake_discord() as discord_api:
        for _ in range(2):
            out = await _sync(tmp_path, discord_api)
            count, _, said = out.partition(" ")
            assert int(count) >= 20 and said.startswith("slash commands sent to Discord")
        # Twice, though nothing changed between them; HTTP only, no gateway session.
        assert discord_api.requests.count(f"PUT /applications/{BOT_ID}/commands") == 2
        assert discord_api.identified == 0


async def _sync(tmp_path: Path, discord_api: FakeDiscord) -> str:
    code, out, err = await echo_bot(
        "--config", str(_config(tmp_path, discord_api.url)), "sync",
        env={"ECHO_DISCORD__TOKEN": TOKEN}, timeout=EXIT_WITHIN,
    )  # fmt: skip
    assert code == 0, err
    assert "Traceback" not in err
    return out
