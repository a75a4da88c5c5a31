"""Erasure in `echo-bot chat`, driven through stdin against the loopback fake LLM: /forget-me
answered by y, /forget-message with a /history id, /forget-me in one chat while another person
talks in another chat on the same database, and a -v log (in the chat's log file) that holds no
message text. On the `database` fixture's backend."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from memory.manage import forgetting
from memory.store import open_store
from tests.bot.cli_runner import echo_bot
from tests.fakes import canary
from tests.fakes.ollama import Chaos, FakeOllama

SECRET = "Mon code de coffre est XK7CANARY4921, ne le dis à personne."
CODE = "XK7CANARY4921"


def _config(database: Path | str, tmp_path: Path, url: str) -> Path:
    """The chat's config on the `database` fixture's SQLite file or PostgreSQL URL; its log
    file in tmp_path either way."""
    storage = f'path = "{tmp_path / "echo.sqlite3"}"\n'
    if isinstance(database, str):
        storage += f'url = "{database}"\n'
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{url}"\n[storage]\n{storage}'
        '[character]\nname = "Écho"\npersona = "Tu es Écho."\n',
        encoding="utf-8",
    )
    return path


async def _stored(database: Path | str, tmp_path: Path, code: str) -> int:
    """Copies of a canary in the SQLite files (read with no process open on them), or in the
    rows of the PostgreSQL database (see `canary.stored`)."""
    if isinstance(database, Path):
        return canary.in_files(tmp_path, code)
    assert not (tmp_path / "echo.sqlite3").exists()  # the chat used PostgreSQL
    async with await open_store(database) as store:
        return await canary.stored(store, tmp_path, code)


async def _run(config: Path, lines: list[str], *flags: str, user: str = "Marie") -> tuple[str, str]:
    """`echo-bot chat` with `lines` on its stdin, then the end of input (in this process)."""
    code, out, err = await echo_bot(
        *flags, "--config", str(config), "chat", "--user", user, stdin="\n".join(lines).encode()
    )
    assert code == 0, err
    return out, err


async def _process(
    config: Path, lines: list[str], *flags: str, user: str = "Marie"
) -> tuple[str, str]:
    """`_run` in a `python -m bot` process of its own: several at once on one database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *flags, "--config", str(config), "chat", "--user", user,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate("\n".join(lines).encode()), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()


async def test_forget_me_asks_and_y_erases_everything(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    config = _config(database, tmp_path, ollama.url)
    out, _ = await _run(config, [SECRET, "/forget-me", "non", "/memories"])
    assert "Erase everything I store about you" in out and "Kept; nothing was erased." in out
    assert CODE in out.split("Kept; nothing was erased.")[1]  # still listed
    assert await _stored(database, tmp_path, CODE) > 0

    out, _ = await _run(config, ["/forget-me", "y", "/memories", "/summary"])
    erased = out.split("Erased everything about you: ")[1]
    assert erased.startswith("2 messages of the history (yours and my replies), 1 memory")
    assert CODE not in erased and "No summary yet." in erased
    assert await _stored(database, tmp_path, CODE) == 0


async def test_forget_message_takes_a_history_id(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    config = _config(database, tmp_path, ollama.url)
    out, _ = await _run(config, [SECRET, "Et mon jardin pousse bien.", "/history"])
    assert f"#1 Marie: {SECRET}" in out and "#3 Marie: Et mon jardin" in out
    out, _ = await _run(config, ["/forget-message 3", "/forget-message 1", "/history"])
    assert "Forgotten: 2 messages of the history (yours and my replies), 1 reflection" in out
    forgotten = out.split("Forgotten: ")[2]
    assert forgotten.startswith("2 messages of the history (yours and my replies), 1 memory")
    assert not re.search(r"^#\d+ ", forgotten, re.MULTILINE) and "No messages yet." in forgotten
    assert await _stored(database, tmp_path, CODE) == 0


async def test_verbose_log_holds_no_message_or_memory_text(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    config = _config(database, tmp_path, ollama.url)
    out, err = await _run(config, [SECRET, "/memories", "/forget 1"], "-v")
    assert f"A pour code de coffre {CODE}" in out  # the memory was made and listed
    log = (tmp_path / "echo.log").read_text(encoding="utf-8")
    assert " DEBUG " in log  # -v was on
    for said in (log, err):
        assert CODE not in said and "coffre" not in said


@pytest.mark.slow
async def test_forget_me_in_one_chat_while_others_talk_in_theirs(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    """Marie says her secret and erases herself while Paul and Zoé, each in their own chat
    process on the same database, tell theirs; the LLM answers each call after a random
    delay. Marie's words are stored nowhere afterwards; theirs are all there."""
    canary.script(ollama)
    ollama.chaos = Chaos(seed=7, max_delay=0.03, failure_rate=0.0)
    config = _config(database, tmp_path, ollama.url)
    theirs = {"Paul": "PL1CANARY5555", "Zoé": "ZO2CANARY6666"}

    async def other(name: str) -> str:
        said = [f"Mon code de coffre est {theirs[name]}, ne le dis à personne."]
        out, _ = await _process(config, said + ["Le jardin pousse bien."] * 3 + ["/memories"],
                                user=name)  # fmt: skip
        return out

    marie, paul, zoe = await asyncio.gather(
        _process(config, [SECRET, "Et mon jardin pousse bien.", "/forget-me", "y", "/memories"]),
        other("Paul"),
        other("Zoé"),
    )
    erased = marie[0].split("Erased everything about you: ")[1]
    assert CODE not in erased.split("\n", 1)[1]  # her /memories after it
    for name, out in (("Paul", paul), ("Zoé", zoe)):
        assert f"A pour code de coffre {theirs[name]}" in out  # their /memories
    # A chat that read meanwhile may have kept the erasure pending; the next scheduler pass
    # (run here, as a running bot's would) completes it.
    async with await open_store(database) as store:
        assert await forgetting.settle_pending(store) == 0
    assert await _stored(database, tmp_path, CODE) == 0
    for code in theirs.values():
        assert await _stored(database, tmp_path, code) > 0
