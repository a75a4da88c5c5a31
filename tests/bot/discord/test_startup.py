"""`echo-bot run` against a loopback Discord that refuses the token, the intents, or is not
there yet: one line each, the right exit code, never a traceback; and the configured channels the
bot cannot use are named once it is connected."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import discord
import pytest

from bot.config import Settings
from bot.discord import startup
from bot.discord.app import EchoBot, Sync
from bot.discord.startup import LOGIN_RETRY_CAP, retry_delay
from bot.doctor import doctor
from bot.runtime import open_runtime
from tests.bot import discord_fakes as fakes
from tests.bot import processes
from tests.bot.cli_runner import echo_bot
from tests.fakes.discord_api import FakeDiscord, serve_fake_discord
from tests.fakes.ollama import FakeOllama

# Only tells a hang from an exit: a loaded CI machine took 3.5 s to import the bot.
EXIT_WITHIN = 60.0
TOKEN = "not-a-real-token"


def _config(tmp_path: Path, fake_url: str, *extra: str) -> Path:
    path = tmp_path / "config.toml"
    gateway = fake_url.replace("http://", "ws://") + "/gateway"
    # Port 9 (discard) refuses connections: no model backend is needed to start.
    lines = [
        "[discord]", f'api_url = "{fake_url}/api/v10"', f'gateway_url = "{gateway}"',
        "login_retry = 0.05", *extra,
        "[llm]", 'base_url = "http://127.0.0.1:9"',
        "[storage]", f'path = "{tmp_path / "echo.sqlite3"}"',
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _env(*, token: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("ECHO_")}
    if token:
        env["ECHO_DISCORD__TOKEN"] = TOKEN
    return env


async def _run(config: Path, *args: str, token: bool = True) -> tuple[int, str]:
    """`echo-bot --config CONFIG ARGS run` to its end (in this process): exit code, stderr."""
    env = {"ECHO_DISCORD__TOKEN": TOKEN} if token else {}
    code, _, err = await echo_bot("--config", str(config), *args, "run", env=env,
                                  timeout=EXIT_WITHIN)  # fmt: skip
    return code, err


async def _start(config: Path, env: dict[str, str], *args: str) -> asyncio.subprocess.Process:
    """`echo-bot run` as a process: one read while it runs, signalled, stopped."""
    return await processes.start(
        sys.executable, "-m", "bot", "--config", str(config), *args, "run",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip


async def _finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    try:
        _, err = await asyncio.wait_for(proc.communicate(), EXIT_WITHIN)
    except TimeoutError:
        await processes.stop(proc)
        pytest.fail(f"echo-bot run still running after {EXIT_WITHIN} s")
    return proc.returncode or 0, err.decode()


@pytest.fixture
async def discord_api() -> AsyncIterator[FakeDiscord]:
    async with serve_fake_discord() as fake:
        yield fake


@pytest.mark.parametrize("source", ["environment", "secret file", "config file"])
async def test_a_refused_token_is_one_line_naming_where_it_came_from(
    tmp_path: Path, discord_api: FakeDiscord, source: str
) -> None:
    discord_api.token_refused = True
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    extra: list[str] = []
    if source == "secret file":
        (secrets / "discord__token").write_text(TOKEN + "\n", encoding="utf-8")
    if source == "config file":
        extra = [f'token = "{TOKEN}"']
    config = _config(tmp_path, discord_api.url, *extra)
    code, err = await _run(config, "--secrets-dir", str(secrets), token=source == "environment")
    assert code == 2
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if "refused the bot token" in line]
    assert len(said) == 1
    expected = {
        "environment": "ECHO_DISCORD__TOKEN",
        "secret file": str(secrets / "discord__token"),
        "config file": f"[discord] token in {config}",
    }[source]
    assert expected in said[0]
    assert "Bot → Reset Token" in said[0]
    assert TOKEN not in err
    # Refused once, not retried: a token Discord refuses will not be accepted later.
    assert discord_api.requests.count("GET /users/@me") == 1


async def test_message_content_intent_off_is_one_line_with_the_switch(
    tmp_path: Path, discord_api: FakeDiscord
) -> None:
    code, err = await _run(_config(tmp_path, discord_api.url))
    assert discord_api.identified == 1  # it got as far as the gateway
    assert code == 2
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if line.startswith("echo-bot:")]
    assert len(said) == 1
    assert "Bot → Privileged Gateway Intents → turn on Message Content Intent" in said[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def test_unreachable_discord_is_said_then_retried_until_it_answers(
    tmp_path: Path,
) -> None:
    port = _free_port()  # nothing listens there yet: connection refused
    config = _config(tmp_path, f"http://127.0.0.1:{port}")
    proc = await _start(config, _env())
    assert proc.stderr is not None
    seen: list[str] = []
    try:
        while sum("cannot reach Discord" in line for line in seen) < 3:
            line = await asyncio.wait_for(proc.stderr.readline(), EXIT_WITHIN)
            assert line, f"echo-bot run ended while Discord was unreachable: {seen}"
            seen.append(line.decode())
        # Discord comes up (refusing the token, so the process ends by itself).
        async with serve_fake_discord(port) as fake:
            fake.token_refused = True
            code, rest = await _finish(proc)
    finally:
        await processes.stop(proc)
    err = "".join(seen) + rest
    assert "Traceback" not in err
    unreachable = [line for line in seen if "cannot reach Discord" in line]
    assert all(f"127.0.0.1:{port}" in line and "trying again in" in line for line in unreachable)
    assert code == 2 and "refused the bot token" in rest  # the retries reached it


def test_login_retries_double_with_jitter_up_to_five_minutes() -> None:
    waits = [retry_delay(n, 2.0, 0.0) for n in range(12)]
    assert waits[:4] == [1.0, 2.0, 4.0, 8.0]
    assert max(waits) == LOGIN_RETRY_CAP / 2
    assert all(retry_delay(n, 2.0, 0.999) <= LOGIN_RETRY_CAP for n in range(40))
    assert retry_delay(3, 2.0, 0.999) > retry_delay(3, 2.0, 0.0)  # restarted bots spread out


VIEW, SEND = 1 << 10, 1 << 11
HIDDEN, MUTED, OPEN, ELSEWHERE = 501, 502, 503, 504


def _channel(echo: EchoBot, channel_id: int, deny: int) -> None:
    g = fakes.guild(echo)
    overwrites = [{"id": str(g.id), "type": 0, "allow": "0", "deny": str(deny)}] if deny else []
    data: Any = {
        "id": str(channel_id), "type": 0, "name": f"c{channel_id}", "position": 0,
        "guild_id": str(g.id), "permission_overwrites": overwrites, "nsfw": False,
        "parent_id": None,
    }  # fmt: skip
    g._add_channel(discord.TextChannel(state=echo._connection, guild=g, data=data))


async def test_configured_channels_the_bot_cannot_use_are_named_once(
    tmp_path: Path, ollama: FakeOllama, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage={"path": tmp_path / "echo.sqlite3"},  # type: ignore[arg-type]
        discord={"channels": [HIDDEN, MUTED, OPEN, ELSEWHERE]},  # type: ignore[arg-type]
    )
    async with open_runtime(settings) as runtime:
        echo = EchoBot(runtime, sync=Sync.NEVER, background=False)
        await fakes.install(echo, fakes.Recorder())
        g = fakes.guild(echo, permissions=VIEW | SEND)
        me = {"user": fakes.user_payload(fakes.BOT_ID, "Echo", bot=True), "roles": [],
              "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False, "mute": False,
              "flags": 0}  # fmt: skip
        g._add_member(discord.Member(data=me, guild=g, state=echo._connection))  # type: ignore[arg-type]
        _channel(echo, HIDDEN, VIEW)
        _channel(echo, MUTED, SEND)
        _channel(echo, OPEN, 0)
        with caplog.at_level(logging.WARNING, logger="bot"):
            await echo.on_ready()
            await echo.on_ready()  # a reconnect: not said again
        await echo.close()
    warned = [r.getMessage() for r in caplog.records if r.name == "bot.discord.app"]
    assert len(warned) == 3
    assert f"View Channel in channel {HIDDEN}" in warned[0]
    assert f"Send Messages in channel {MUTED}" in warned[1]
    assert f"channel {ELSEWHERE} is not visible" in warned[2]
    assert not any(str(OPEN) in line for line in warned)


async def test_doctor_tests_the_route_and_the_token_with_discord(
    tmp_path: Path, ollama: FakeOllama, discord_api: FakeDiscord, capsys: pytest.CaptureFixture[str]
) -> None:
    def settings(api_url: str) -> Settings:
        return Settings(
            llm={"base_url": ollama.url},  # type: ignore[arg-type]
            storage={"path": tmp_path / "echo.sqlite3"},  # type: ignore[arg-type]
            discord={"token": TOKEN, "api_url": api_url},  # type: ignore[arg-type]
        )

    await doctor(settings(discord_api.api_url), "config.toml")
    out = capsys.readouterr().out
    [said] = [line for line in out.splitlines() if line.startswith("OK   Discord accepts")]
    assert said.endswith(f"at {discord_api.api_url}")
    closed = f"http://127.0.0.1:{_free_port()}/api/v10"
    code = await doctor(settings(closed), "config.toml")
    out = capsys.readouterr().out
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith(f"FAIL Discord API {closed}")]


async def test_the_memory_keeps_working_while_discord_is_unreachable(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """An exchange queued before a restart is reflected while every login fails to reach
    Discord; the background work stops before each new login and when the token is refused."""
    from bot.runtime import start_jobs
    from memory.model import Exchange
    from memory.store.tables import memories, outbox

    ollama.chat_reply = lambda payload: json.dumps({"memories": [
        {"text": "Joue du violoncelle", "kind": "fact", "scope": "global", "confidence": 0.95}
    ]})  # fmt: skip
    settings = Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage={"path": tmp_path / "echo.sqlite3"},  # type: ignore[arg-type]
    )
    async with open_runtime(settings) as runtime:
        waiting = Exchange("discord:1", 7, 10, "111", "Ana", "Je joue du violoncelle", "Beau !")
        await runtime.store.transact(lambda tx: outbox.enqueue(tx, waiting, now=0.0))
        schedulers: list[Any] = []
        logins = 0

        class Offline:
            """Stands in for the bot while Discord cannot be reached, then refuses the token."""

            async def login(self, token: str) -> None:
                nonlocal logins
                logins += 1
                assert all(not s.running for s in schedulers)  # stopped before each login
                if logins < 3:
                    raise aiohttp.ClientConnectionError("connection refused")
                raise discord.LoginFailure("bad token")

            async def close(self) -> None:
                return None

        def background() -> Any:
            schedulers.append(start_jobs(runtime))
            return schedulers[-1]

        with pytest.raises(startup.StartupFault):
            await startup.start(
                Offline, "token", token_source="the config", first_delay=0.01,  # type: ignore[arg-type]
                sleep=lambda _: asyncio.sleep(0.5), background=background,
            )  # fmt: skip
        assert len(schedulers) == 2 and all(not s.running for s in schedulers)
        row = await runtime.store.fetchone("SELECT status FROM outbox")
        assert row is not None and row[0] == "done"
        assert [m.text for m in await memories.list_for_user(runtime.store, 7)] == [
            "Joue du violoncelle"
        ]


async def test_run_without_a_token_and_without_a_terminal_stops_with_one_line(
    tmp_path: Path, discord_api: FakeDiscord
) -> None:
    """In a container or a service (stdin is not a terminal), `run` without a token does not
    fall back to a chat that would end at once with exit code 0 (a restart policy would start
    it again forever): one line naming the token's settings, exit code 2, no database made."""
    config = _config(tmp_path, discord_api.url)
    code, err = await _run(config, token=False)  # stdin is /dev/null
    assert code == 2
    [line] = err.splitlines()
    assert "ECHO_DISCORD__TOKEN" in line and "no terminal" in line
    assert not list(tmp_path.glob("*.sqlite3*"))
    assert discord_api.requests == []


# Login tries watched before the log is counted: the first start, then three retries.
TRIES = 4
# What the log says once at start-up, besides the login tries: the start, the schema, the
# caches warmed, the re-indexing's first pass.
START_LINES = 4


async def _lines_until_tries(proc: asyncio.subprocess.Process, tries: int) -> list[str]:
    assert proc.stderr is not None
    seen: list[str] = []
    while sum("cannot reach Discord" in line for line in seen) < tries:
        line = await asyncio.wait_for(proc.stderr.readline(), EXIT_WITHIN)
        assert line, f"echo-bot run ended while Discord was unreachable: {seen}"
        seen.append(line.decode())
    return seen


def _said(line: str) -> str:
    """A log line without its time stamp."""
    return line.split(" ", 2)[2].rstrip("\n")


@pytest.mark.slow
async def test_the_service_log_says_one_line_per_login_try(tmp_path: Path) -> None:
    """What `docker logs` shows while Discord cannot be reached: a short start-up, then one
    line per login try; -v shows the libraries' lines (APScheduler's jobs) too."""
    config = _config(tmp_path, f"http://127.0.0.1:{_free_port()}")
    proc = await _start(config, _env())
    try:
        seen = [_said(line) for line in await _lines_until_tries(proc, TRIES)]
    finally:
        await processes.stop(proc)
    tries = [line for line in seen if "cannot reach Discord" in line]
    # A stalled event loop is said whenever it happens (a loaded machine, at start-up): a
    # report of the machine, not a line the start-up says.
    others = [
        line
        for line in seen
        if "cannot reach Discord" not in line and not line.startswith("WARNING memory.looplag")
    ]
    assert len(tries) == TRIES and all(
        line.startswith("WARNING bot.discord.startup") for line in tries
    )
    assert len(others) <= START_LINES, others
    assert len(set(others)) == len(others), others  # nothing said again at each try
    assert sum("database migrated" in line for line in others) == 1  # one line, not 18
    assert not [line for line in others if "voice will NOT be supported" in line]
    assert [
        line
        for line in others
        if line.startswith("INFO bot.cli: starting the Discord bot as Écho: database ")
    ]
    (tmp_path / "echo.sqlite3").unlink()
    verbose = await _start(config, _env(), "-v")
    try:
        told = await _lines_until_tries(verbose, 2)
    finally:
        await processes.stop(verbose)
    assert any("apscheduler" in line for line in told)


async def test_ctrl_c_stops_the_bot_with_exit_code_0(tmp_path: Path) -> None:
    """Ctrl-C, the documented way to stop, is not a failure: `make run` says no "Error 130"."""
    config = _config(tmp_path, f"http://127.0.0.1:{_free_port()}")
    proc = await _start(config, _env())
    try:
        await _lines_until_tries(proc, 1)
        proc.send_signal(signal.SIGINT)
        code, rest = await _finish(proc)
    finally:
        await processes.stop(proc)
    assert code == 0 and "Traceback" not in rest


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
async def test_ctrl_c_under_make_reads_as_no_failure(tmp_path: Path) -> None:
    config = _config(tmp_path, f"http://127.0.0.1:{_free_port()}")
    # The repository's run recipe, with this interpreter: make in front of the bot as
    # `make run` is, Ctrl-C sent to the whole foreground group as a terminal does.
    (tmp_path / "Makefile").write_text(
        f"run:\n\t{sys.executable} -m bot --config {config} run\n", encoding="utf-8"
    )
    make = await processes.start(
        "make", "-C", str(tmp_path), "run", stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=_env(),
    )  # fmt: skip
    try:
        await _lines_until_tries(make, 1)
        os.killpg(make.pid, signal.SIGINT)
        _, rest = await _finish(make)
    finally:
        await processes.stop(make)  # the bot under make too, had make ended without it
    assert "Error" not in rest and "Traceback" not in rest, rest
