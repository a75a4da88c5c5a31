"""Erasure in `echo-bot chat`, driven through stdin against the loopback fake LLM: /forget-me
answered by y, /forget-message with a /history id, and a -v log (in the chat's log file) that
holds no message text."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from tests.bot.test_terminal_e2e import _config
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama

SECRET = "Mon code de coffre est XK7CANARY4921, ne le dis à personne."
CODE = "XK7CANARY4921"


async def _run(config: Path, lines: list[str], *flags: str) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *flags, "--config", str(config), "chat", "--user", "Marie",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate("\n".join(lines).encode()), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()


async def test_forget_me_asks_and_y_erases_everything(tmp_path: Path, ollama: FakeOllama) -> None:
    canary.script(ollama)
    config = _config(tmp_path, ollama.url)
    out, _ = await _run(config, [SECRET, "/forget-me", "non", "/memories"])
    assert "Erase everything I store about you" in out and "Kept; nothing was erased." in out
    assert CODE in out.split("Kept; nothing was erased.")[1]  # still listed
    assert canary.in_files(tmp_path, CODE) > 0

    out, _ = await _run(config, ["/forget-me", "y", "/memories", "/summary"])
    erased = out.split("Erased everything about you: ")[1]
    assert erased.startswith("2 messages of the history (yours and my replies), 1 memory")
    assert CODE not in erased and "No summary yet." in erased
    assert canary.in_files(tmp_path, CODE) == 0


async def test_forget_message_takes_a_history_id(tmp_path: Path, ollama: FakeOllama) -> None:
    canary.script(ollama)
    config = _config(tmp_path, ollama.url)
    out, _ = await _run(config, [SECRET, "Et mon jardin pousse bien.", "/history"])
    assert f"#1 Marie: {SECRET}" in out and "#3 Marie: Et mon jardin" in out
    out, _ = await _run(config, ["/forget-message 3", "/forget-message 1", "/history"])
    assert "Forgotten: 2 messages of the history (yours and my replies), 1 reflection" in out
    forgotten = out.split("Forgotten: ")[2]
    assert forgotten.startswith("2 messages of the history (yours and my replies), 1 memory")
    assert not re.search(r"^#\d+ ", forgotten, re.MULTILINE) and "No messages yet." in forgotten
    assert canary.in_files(tmp_path, CODE) == 0


async def test_verbose_log_holds_no_message_or_memory_text(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    config = _config(tmp_path, ollama.url)
    out, err = await _run(config, [SECRET, "/memories", "/forget 1"], "-v")
    assert f"A pour code de coffre {CODE}" in out  # the memory was made and listed
    log = (tmp_path / "echo.log").read_text(encoding="utf-8")
    assert " DEBUG " in log  # -v was on
    for said in (log, err):
        assert CODE not in said and "coffre" not in said
