"""The heartbeat says whether the bot's event loop still runs: what a container's health probe
(`python -m bot.heartbeat PATH`) reports."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from bot import heartbeat
from bot.config import Settings
from bot.runtime import open_runtime
from tests.fakes.ollama import FakeOllama


async def test_a_running_bot_is_healthy_and_a_stopped_one_goes_stale(
    tmp_path: Path, ollama: FakeOllama, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "echo.sqlite3"
    settings = Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage={"path": database},  # type: ignore[arg-type]
    )
    beat = heartbeat.path_for(database)
    assert heartbeat.main([str(beat)]) == 1
    assert capsys.readouterr().err == f"no heartbeat at {beat}: the bot has not started\n"
    async with open_runtime(settings):
        await asyncio.sleep(0)  # the beat task's first turn
        assert heartbeat.main([str(beat)]) == 0
        # The age itself is not asserted: a loaded machine may take a second to get here.
        assert re.fullmatch(r"last heartbeat \d+ s ago\n", capsys.readouterr().out)
    # Stopped: the last beat stays and grows old.
    ok, line = heartbeat.check(beat, now=time.time() + heartbeat.STALE_AFTER + 5)
    assert not ok and "the bot is stopped or its event loop is stuck" in line


async def test_a_blocked_event_loop_stops_the_beats(tmp_path: Path) -> None:
    path = tmp_path / "beat"
    async with heartbeat.beating(path, interval=0.01):
        await asyncio.sleep(0.05)
        time.sleep(0.5)  # a blocking call in the loop: no beat can be written meanwhile
        assert not heartbeat.check(path, now=time.time(), stale_after=0.4)[0]
        for _ in range(500):  # the loop free again, the beats come back
            await asyncio.sleep(0.01)
            if heartbeat.check(path, now=time.time(), stale_after=0.4)[0]:
                break
        assert heartbeat.check(path, now=time.time(), stale_after=0.4)[0]


def test_an_unreadable_heartbeat_is_unhealthy_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "beat"
    path.write_text("not a time\n")
    assert heartbeat.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"unreadable heartbeat at {path}") and err.count("\n") == 1


async def test_a_beat_that_cannot_be_written_is_said_once_and_the_bot_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "missing-folder" / "beat"
    async with heartbeat.beating(path, interval=0.01):
        await asyncio.sleep(0.1)
    assert [r.getMessage() for r in caplog.records].count(
        f"cannot write the heartbeat {path}: No such file or directory"
    ) == 1
