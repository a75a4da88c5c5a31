"""The command tree's one error handler, through real interactions: a person's mistake gets its
short explanation and is not logged as a failure; a bug (a plain ValueError too) is logged with
its traceback and the person gets the generic answer, never the bug's text."""

from __future__ import annotations

import asyncio
import logging

import discord
import pytest
from discord import app_commands

from bot.discord.app import EchoBot
from memory.write.reflection import MAX_MEMORY_CHARS
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import _command, _opt

Bot = tuple[EchoBot, fakes.Recorder]
MANAGE_CHANNELS = 1 << 4
GENERIC = "Something went wrong on my side; it has been logged."


def _with_a_bug(echo: EchoBot) -> None:
    """Add a command whose code has a bug: it raises ValueError, as int("x") would."""

    async def buggy(interaction: discord.Interaction[EchoBot], text: str) -> None:
        raise ValueError(f"invalid literal for int() with base 10: {text!r}")

    echo.tree.add_command(app_commands.Command(name="buggy", description="a bug", callback=buggy))


def _failures(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "bot.discord.ui" and r.levelno >= logging.ERROR]


async def test_a_mistake_is_explained_and_not_logged_as_a_failure(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    echo, rec = bot
    await _command(echo, "remember", 1001, options=[_opt("text", "x" * (MAX_MEMORY_CHARS + 1), 3)])
    assert rec.contents()[-1] == f"a memory is 1 to {MAX_MEMORY_CHARS} characters."
    await _command(echo, "strategy", 1001, options=[_opt("name", "nope", 3)],
                   permissions=MANAGE_CHANNELS)  # fmt: skip
    assert rec.contents()[-1].startswith("no context strategy 'nope' (available: ")
    assert all(m["flags"] == fakes.EPHEMERAL for m in rec.messages())
    assert _failures(caplog) == []


async def test_a_value_error_is_a_bug_logged_with_its_traceback_not_the_persons_mistake(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    echo, rec = bot
    _with_a_bug(echo)
    await _command(echo, "buggy", 1001, options=[_opt("text", "mon secret", 3)])
    assert rec.contents() == [GENERIC]
    assert rec.messages()[-1]["flags"] == fakes.EPHEMERAL
    [failure] = _failures(caplog)
    logged = failure.getMessage()
    assert "buggy" in logged and "ValueError" in logged
    assert "in buggy" in logged  # the traceback's frames, to find the bug
    assert "mon secret" not in caplog.text  # never what the person typed


async def test_many_people_at_once_each_get_their_own_answer(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    echo, rec = bot
    _with_a_bug(echo)
    people = range(2001, 2021)

    async def act(user: int) -> None:
        if user % 2:
            await _command(echo, "buggy", user, options=[_opt("text", f"secret {user}", 3)])
        else:
            await _command(echo, "strategy", user, options=[_opt("name", f"nope-{user}", 3)],
                           permissions=MANAGE_CHANNELS)  # fmt: skip

    await asyncio.gather(*(act(u) for u in people))
    contents = rec.contents()
    mistakes = sorted(c.split("'")[1] for c in contents if c.startswith("no context strategy"))
    assert mistakes == sorted(f"nope-{u}" for u in people if u % 2 == 0)
    assert contents.count(GENERIC) == 10 and len(contents) == 20
    assert not any("secret" in c for c in contents)
    assert len(_failures(caplog)) == 10
    # Twenty refusals in the same channel changed nothing there.
    await _command(echo, "strategy", 2001)
    assert rec.contents()[-1].startswith("Strategy here: `summarize`")
