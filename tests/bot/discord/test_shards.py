"""Sharding: each process runs the shards its settings name, only the one holding shard 0 sends
the slash commands, and processes sharing a folder keep their files apart. Real discord.py
clients; no gateway connection is opened."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import discord
import pytest
from discord.ext import commands
from hypothesis import given
from hypothesis import strategies as st

from bot import cli, heartbeat, logs
from bot.config import ConfigError, Settings, WebSettings, load_settings
from bot.discord import i18n
from bot.discord.app import EchoBot, Sync, make_bot
from bot.runtime import open_runtime
from bot.shards import Shards
from bot.web.server import TOKEN_FILE, resolve_token
from tests.bot import discord_fakes as fakes
from tests.fakes.ollama import FakeOllama


def _settings(tmp_path: Path, ollama: FakeOllama, **discord_: Any) -> Settings:
    return Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage={"path": tmp_path / "echo.sqlite3"},  # type: ignore[arg-type]
        discord=discord_,  # type: ignore[arg-type]
    )


@asynccontextmanager
async def _process(
    tmp_path: Path, ollama: FakeOllama, recorder: fakes.Recorder, **discord_: Any
) -> AsyncIterator[EchoBot]:
    """One bot process started as `run` starts it (setup_hook, commands sent if changed)."""
    async with open_runtime(_settings(tmp_path, ollama, **discord_)) as runtime:
        echo = make_bot(runtime, background=False)
        await fakes.install(echo, recorder)
        try:
            await echo.setup_hook()
            yield echo
        finally:
            await echo.close()


@pytest.mark.parametrize(
    ("given_", "count", "ids"),
    [
        ({"shard_count": 4}, 4, None),  # every shard in this one process
        ({"shard_count": 4, "shard_ids": [2, 0]}, 4, [2, 0]),
        ({"shard_count": 2, "shard_ids": [1]}, 2, [1]),
    ],
)
async def test_the_client_runs_the_shards_the_settings_name(
    tmp_path: Path, ollama: FakeOllama, given_: dict[str, Any], count: int, ids: list[int] | None
) -> None:
    async with open_runtime(_settings(tmp_path, ollama, **given_)) as runtime:
        echo = make_bot(runtime, sync=Sync.NEVER, background=False)
        assert isinstance(echo, discord.AutoShardedClient | commands.AutoShardedBot)
        assert isinstance(echo, EchoBot)
        assert (echo.shard_count, echo.shard_ids) == (count, ids)
        await fakes.install(echo, fakes.Recorder())  # as login() leaves it, for close()
        await echo.close()


async def test_without_shard_settings_the_client_is_one_plain_connection(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with open_runtime(_settings(tmp_path, ollama)) as runtime:
        echo = make_bot(runtime, sync=Sync.NEVER, background=False)
        assert not isinstance(echo, discord.AutoShardedClient)
        assert echo.shard_count is None and echo.sharding is None
        await echo.close()


async def test_only_the_process_holding_shard_0_sends_the_commands(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = fakes.Recorder()
    # The second process starts first, on a database that never sent its commands: it does not.
    async with _process(tmp_path, ollama, rec, shard_count=2, shard_ids=[1]):
        pass
    assert rec.commands_sent() == []
    async with _process(tmp_path, ollama, rec, shard_count=2, shard_ids=[0]):
        pass
    assert len(rec.commands_sent()) == 1
    # A release changes a command: the second process still leaves it to the first.
    monkeypatch.setitem(i18n.FRENCH, "why", "pourquoi-donc")
    async with _process(tmp_path, ollama, rec, shard_count=2, shard_ids=[1]):
        pass
    assert len(rec.commands_sent()) == 1
    async with _process(tmp_path, ollama, rec, shard_count=2, shard_ids=[0]):
        pass
    assert len(rec.commands_sent()) == 2


async def test_processes_starting_together_send_the_commands_once(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    rec = fakes.Recorder()
    async with open_runtime(_settings(tmp_path, ollama)):
        pass  # the database made and migrated once, before the processes start

    async def start(ids: list[int]) -> None:
        # One folder, one database, as the compose profile's processes share them.
        async with _process(tmp_path, ollama, rec, shard_count=4, shard_ids=ids):
            await asyncio.sleep(0)

    await asyncio.gather(start([3]), start([1, 2]), start([0]))
    assert len(rec.commands_sent()) == 1


async def test_stats_tells_the_owner_which_shards_this_process_serves(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    rec = fakes.Recorder()
    async with _process(tmp_path, ollama, rec, shard_count=3, shard_ids=[2, 1]) as echo:
        interaction = fakes.interaction(echo, "stats", user_id=rec.owner_id, channel_id=41,
                                        in_guild=False)  # fmt: skip
        await echo.tree._call(interaction)
    assert rec.contents()[-1].endswith("\nThis process: shards 2, 1 of 3")


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ("shard_ids = [0]", "shard_ids needs shard_count"),
        ("shard_count = 2\nshard_ids = [2]", "shard_ids 2 not in 0..1 (shard_count = 2)"),
        ("shard_count = 2\nshard_ids = [-1, 0]", "shard_ids -1 not in 0..1"),
        ("shard_count = 3\nshard_ids = [1, 1]", "shard_ids lists 1 more than once"),
        ("shard_count = 3\nshard_ids = []", "shard_ids is empty"),
        ("shard_count = 0", "discord.shard_count: Input should be greater than or equal to 1"),
    ],
)
def test_bad_shard_settings_are_one_line_at_start(
    tmp_path: Path, toml: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[discord]\n{toml}\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    assert said in str(refused.value) and "\n" not in str(refused.value)
    assert cli.main(["--config", str(config), "check-config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and str(config) in err


def test_a_bad_shard_id_from_the_environment_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[discord]\nshard_count = 2\n")
    monkeypatch.setenv("ECHO_DISCORD__SHARD_IDS", "[0, 5]")
    with pytest.raises(ConfigError, match=r"shard_ids 5 not in 0\.\.1") as refused:
        load_settings(config)
    assert "\n" not in str(refused.value)
    monkeypatch.setenv("ECHO_DISCORD__SHARD_IDS", "[1]")
    assert load_settings(config).discord.shards == Shards(2, (1,))


@given(
    st.integers(2, 64).flatmap(
        lambda n: st.tuples(st.just(n), st.permutations(range(n)), st.integers(1, n - 1))
    )
)
def test_processes_splitting_the_shards_never_share_a_file(
    split: tuple[int, list[int], int],
) -> None:
    count, order, cut = split
    database = Path("/data/echo.sqlite3")
    first, second = Shards(count, tuple(order[:cut])), Shards(count, tuple(order[cut:]))
    for name in (heartbeat.path_for, logs.chat_log):
        assert name(database, first.tag) != name(database, second.tag)
        assert name(database, first.tag).parent == database.parent
    # Exactly one of them sends the commands.
    assert first.sends_commands != second.sends_commands


def test_one_process_keeps_the_file_names_of_an_unsharded_bot() -> None:
    database = Path("/data/echo.sqlite3")
    assert Shards(8).tag == ""
    assert heartbeat.path_for(database, Shards(8).tag) == Path("/data/echo.sqlite3.heartbeat")
    assert heartbeat.path_for(database, Shards(2, (1, 0)).tag) == Path(
        "/data/echo.sqlite3.shards-0-1.heartbeat"
    )
    assert logs.chat_log(database, Shards(2, (1,)).tag) == Path("/data/echo.shards-1.log")


def test_processes_sharing_a_folder_agree_on_one_generated_web_token(tmp_path: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: resolve_token(WebSettings(), tmp_path), range(8)))
    assert len({token for token, _ in results}) == 1
    assert sum(generated for _, generated in results) == 1
    assert (tmp_path / TOKEN_FILE).read_text().strip() == results[0][0]
    assert [p.name for p in tmp_path.iterdir()] == [TOKEN_FILE]  # no partial file left
