"""`echo-bot doctor` asking a loopback Discord whose token it is, as a person runs it: the bot's
name for a token Discord takes, the fix for one it refuses, a line for one it cannot check; the
token itself never printed, even by a server that quotes it back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import doctor
from tests.bot.cli_runner import echo_bot
from tests.fakes.discord_api import BOT_ID, FakeDiscord, serve_fake_discord

TOKEN = "MTA5.Zq9-doctor-token-for-tests.abcdef"
# Doctor's own deadline for Discord, shortened so that a server that never answers costs the
# test a fraction of a second.
SHORT_DEADLINE = 0.2


@pytest.fixture
async def discord_api() -> AsyncIterator[FakeDiscord]:
    async with serve_fake_discord() as fake:
        yield fake


def _config(tmp_path: Path, api_url: str) -> Path:
    # Port 9 (discard) refuses connections: the models' lines fail, the Discord line is alone.
    path = tmp_path / "config.toml"
    path.write_text(
        f'[discord]\napi_url = "{api_url}"\n[llm]\nbase_url = "http://127.0.0.1:9"\n'
        f'[storage]\npath = "{tmp_path / "echo.sqlite3"}"\n',
        encoding="utf-8",
    )
    return path


async def _doctor(tmp_path: Path, api_url: str, *args: str) -> tuple[str, str, str]:
    """`echo-bot doctor ARGS` with the token in ECHO_DISCORD__TOKEN: its Discord line, stdout,
    stderr."""
    config = _config(tmp_path, api_url)
    _, out, err = await echo_bot(
        "doctor", "--config", str(config), *args, env={"ECHO_DISCORD__TOKEN": TOKEN}
    )
    [line] = [line for line in out.splitlines() if "Discord" in line]
    return line, out, err


async def test_a_token_discord_takes_is_ok_with_the_bots_name_and_id(
    tmp_path: Path, discord_api: FakeDiscord
) -> None:
    line, out, err = await _doctor(tmp_path, discord_api.api_url)
    assert line == (
        f"OK   Discord accepts the token: the bot is Echo (id {BOT_ID}) at {discord_api.api_url}"
    )
    assert discord_api.requests == ["GET /users/@me"]
    assert TOKEN not in out + err


async def test_a_token_discord_refuses_is_a_failure_with_the_fix(
    tmp_path: Path, discord_api: FakeDiscord
) -> None:
    discord_api.token_refused = True
    line, out, err = await _doctor(tmp_path, discord_api.api_url)
    assert line == (
        "FAIL Discord refuses this token (read from ECHO_DISCORD__TOKEN) → reset it in the "
        "Developer Portal, Bot page, and put the new one in ECHO_DISCORD__TOKEN"
    )
    assert "OK   Discord" not in out
    assert TOKEN not in out + err


@pytest.mark.parametrize("refused", [False, True])
async def test_a_server_quoting_the_token_back_never_gets_it_printed(
    tmp_path: Path, discord_api: FakeDiscord, refused: bool
) -> None:
    discord_api.quote_token, discord_api.token_refused = True, refused
    # -v: every log line is on stderr too, the debug lines of Écho and its libraries.
    line, out, err = await _doctor(tmp_path, discord_api.api_url, "-v")
    assert line.startswith("FAIL Discord refuses" if refused else "OK   Discord accepts")
    if not refused:  # the name as the server gave it, the token taken out before it is cut
        assert "the bot is Echo Bot *** (id 999)" in line
    # Not the token, nor a piece of it (a name cut at 32 characters would keep one).
    assert TOKEN[:12] not in out + err


async def test_a_discord_that_never_answers_is_unreachable_within_the_deadline(
    tmp_path: Path, discord_api: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    discord_api.hang = True
    monkeypatch.setattr(doctor, "DISCORD_DEADLINE", SHORT_DEADLINE)
    line, out, err = await _doctor(tmp_path, discord_api.api_url)
    assert line.startswith(f"FAIL Discord API {discord_api.api_url} unreachable (ReadTimeout)")
    assert line.endswith("`run` retries until it answers (the token is not checked)")
    assert TOKEN not in out + err


async def test_another_answer_is_a_warning_that_the_token_is_not_checked(
    tmp_path: Path, discord_api: FakeDiscord
) -> None:
    # An api_url that is not Discord's API: the fake answers 404 outside /api/v10.
    elsewhere = discord_api.url + "/not-the-api"
    line, _, _ = await _doctor(tmp_path, elsewhere)
    assert line == (
        f"WARN Discord API {elsewhere} answered 404 to /users/@me: the token is not checked → "
        "is [discord] api_url Discord's API (or a proxy in front of it)?"
    )
