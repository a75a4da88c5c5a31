"""Text that is not well-formed Unicode (bytes that are not UTF-8 on a terminal, lone surrogates
in a Discord message) is cleaned on the way in: the person is answered, nothing crashes, and
what is stored encodes as UTF-8."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from bot.discord.app import EchoBot
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import CHANNEL, _say
from tests.bot.terminal.test_e2e import _config
from tests.fakes.ollama import FakeOllama

Bot = tuple[EchoBot, fakes.Recorder]


async def _chat_bytes(config: Path, stdin: bytes) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--config", str(config), "chat", "--user", "Marie",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(stdin), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_the_terminal_answers_bytes_that_are_not_utf8(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    lines = [
        b"Salut \xff\xfe \xc3\x28 \xed\xa0\x80 !",  # invalid bytes, a UTF-8-encoded surrogate
        "J'aime l'été".encode("latin-1"),  # a Latin-1 terminal
        b"/remember j'aime le th\xe9",
        b"/history",
        b"/pin 99999999999999999999999",  # past SQLite's 64 bits: a mistake, not a crash
    ]
    code, out, err = await _chat_bytes(config, b"\n".join(lines) + b"\n")
    assert code == 0, err
    assert out.splitlines().count("Écho: D'accord.") == 2  # both lines answered
    assert "Memory #1: created." in out
    assert "Traceback" not in err
    assert "Salut \ufffd\ufffd" in out and "l'\ufffdt\ufffd" in out  # /history shows them
    assert "99999999999999999999999 is not an id (a number, e.g. /pin 3)." in out


async def test_a_discord_message_with_lone_surrogates_is_answered_and_stored(
    bot: Bot, ollama: FakeOllama
) -> None:
    echo, rec = bot
    ollama.chat_replies = ["Je suis là."]
    # JSON from the gateway may carry "\ud800" escapes: json.loads makes lone surrogates.
    await _say(echo, fakes.text_channel(echo, CHANNEL), 1001, "Salut \ud800 toi \udfff")
    assert rec.contents() == ["Je suis là."]
    stored = await history.recent(echo.runtime.store, CHANNEL, limit=5)
    assert [m.content for m in stored] == ["Salut \ufffd toi \ufffd", "Je suis là."]
    [(_, chat)] = [c for c in ollama.calls if c[0] == "/api/chat"]
    assert chat["messages"][-1]["content"].endswith("Salut \ufffd toi \ufffd")


async def test_lone_surrogates_in_names_and_in_the_models_reply_never_cost_the_answer(
    bot: Bot, ollama: FakeOllama
) -> None:
    echo, rec = bot
    # The model's JSON answer may hold "\udc00" escapes too.
    ollama.chat_reply = lambda payload: "{}" if "format" in payload else "Bonjour \udc00 !"
    channel = fakes.text_channel(echo, CHANNEL)
    messages = []
    for user in (1001, 1002, 1003):
        msg = fakes.message(echo, channel, author_id=user, content=f"Salut {user}")
        assert msg.author.display_name  # the gateway's name, made hostile below
        msg.author.global_name = f"N\ud800{user}"  # type: ignore[union-attr]
        messages.append(msg)
    await asyncio.gather(*(echo.get_cog("Conversation").on_message(m) for m in messages))  # type: ignore[union-attr]
    assert rec.contents() == ["Bonjour \ufffd !"] * 3
    stored = await history.recent(echo.runtime.store, CHANNEL, limit=10)
    names = {m.author_name for m in stored if m.role == "user"}
    assert names == {f"N\ufffd{u}" for u in (1001, 1002, 1003)}
    assert all(m.content == "Bonjour \ufffd !" for m in stored if m.role == "assistant")
