"""`echo-bot chat` at a real terminal (a pseudo-terminal for stdin): what the screen shows on a
first start, and Ctrl-C or Ctrl-D ending the chat at once, without another Enter."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.bot import processes
from tests.bot.terminal.test_e2e import _chat, _config, _script
from tests.fakes.ollama import FakeOllama

# Only tells a hang from an exit: Ctrl-C used to wait for Enter forever.
HANG = 30.0
PROMPT = "\n> "
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR) ")


class Session:
    def __init__(self, proc: asyncio.subprocess.Process, keyboard: int) -> None:
        self.proc, self.keyboard = proc, keyboard
        self.screen = ""
        self.errors = ""

    def type(self, text: str) -> None:
        os.write(self.keyboard, text.encode())

    async def sees(self, text: str, count: int = 1) -> None:
        """Read the screen until `text` is on it `count` times."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(HANG):
            while self.screen.count(text) < count:
                chunk = await self.proc.stdout.read(4096)
                assert chunk, f"the chat ended before showing {text!r}:\n{self.screen}"
                self.screen += chunk.decode()

    async def answer(self, line: str) -> None:
        """Type a line and read until the next prompt."""
        prompts = self.screen.count(PROMPT)
        self.type(line + "\n")
        await self.sees(PROMPT, count=prompts + 1)

    async def ends(self) -> int:
        """Wait for the chat to end; the rest of what it showed is read."""
        try:
            out, err = await asyncio.wait_for(self.proc.communicate(), HANG)
        except TimeoutError:
            await processes.stop(self.proc)
            pytest.fail(f"the chat still runs {HANG} s later (it waits for Enter)")
        self.screen += out.decode()
        self.errors += (err or b"").decode()
        return self.proc.returncode or 0


@asynccontextmanager
async def _session(config: Path, *, one_screen: bool = False) -> AsyncIterator[Session]:
    """The chat with a pseudo-terminal for stdin; `one_screen`: its stderr (the warnings) read
    with its stdout, in the order a terminal shows them."""
    keyboard, tty = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    proc = await processes.start(
        sys.executable, "-m", "bot", "--config", str(config), "chat", "--user", "Marie",
        stdin=tty, stdout=asyncio.subprocess.PIPE, env=env,
        stderr=asyncio.subprocess.STDOUT if one_screen else asyncio.subprocess.PIPE,
    )  # fmt: skip
    os.close(tty)
    try:
        yield Session(proc, keyboard)
    finally:
        await processes.stop(proc)
        os.close(keyboard)


async def test_the_first_screen_is_the_conversation_and_ctrl_c_ends_it(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    async with _session(_config(tmp_path, ollama.url)) as chat:
        await chat.sees(PROMPT)  # the commands, then the prompt
        await chat.answer("J'ai un chat roux qui s'appelle Félix.")
        # "Écho is writing…" showed until the reply, then was cleared in place.
        writing = f"\n> Écho is writing…\r\x1b[KÉcho: Félix ! Quel joli nom.{PROMPT}"
        assert chat.screen.endswith(writing)
        # The reflection runs in the background: ask until its memory is there.
        async with asyncio.timeout(HANG):
            while "A un chat roux nommé Félix" not in chat.screen:
                await chat.answer("/memories")
        await chat.answer("/stats")
        assert "\n> Memories: 1 (of 1 person)\n" in chat.screen
        chat.proc.send_signal(signal.SIGINT)  # Ctrl-C, with no Enter after it
        code = await chat.ends()
    assert code == 0  # Ctrl-C is how a person quits: not a failure
    log = tmp_path / "echo.log"
    # Said once, where the log goes; no log line on the screen, all of them in the file.
    assert chat.errors.splitlines() == [f"Log: {log}"]
    assert not LOG_LINE.search(chat.screen) and "Traceback" not in chat.screen
    assert "database migrated from schema 0 to " in log.read_text(encoding="utf-8")
    # Plain text: no Discord markdown, and the abbreviations said.
    assert "**" not in chat.screen and "`" not in chat.screen
    assert "c/s/sem = times a candidate / served / served by meaning." in chat.screen


async def test_ctrl_d_ends_the_chat_at_once_while_a_question_waits(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    async with _session(_config(tmp_path, ollama.url)) as chat:
        await chat.sees(PROMPT)
        chat.type("/forget-me\n")
        await chat.sees("[y/N]")
        chat.type("\x04")  # Ctrl-D at the start of a line: the end of input
        code = await chat.ends()
    assert code == 0
    assert "Erased" not in chat.screen and "Traceback" not in chat.errors


async def test_a_server_that_fails_is_said_once_on_screen_and_each_time_in_the_log(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    ollama.set("/api/embed", "500")  # the embedding server fails: recall by keywords only
    out, err = await _chat(_config(tmp_path, ollama.url), ["Bonjour", "Et toi ?"])
    assert out.splitlines() == ["Écho: Félix ! Quel joli nom."] * 2
    log = tmp_path / "echo.log"
    [start, *warnings] = err.splitlines()
    assert start == f"Log: {log}"
    # Two kinds (the turn's embedding, the memory's re-indexing), each said once, not per turn.
    assert [w.split(":")[1] for w in warnings] == [" turn embedding failed (BackendUnavailable)",
                                                   " re-indexing stopped"]  # fmt: skip
    assert all(w.startswith("[WARNING: ") and w.endswith(f"; more in {log}]") for w in warnings)
    held = log.read_text(encoding="utf-8")
    assert held.count("turn embedding failed") == held.count("re-indexing stopped") == 2


async def test_ctrl_c_while_the_character_thinks_ends_the_chat_cleanly(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.set("/api/chat", "hang")  # the reply never comes
    async with _session(_config(tmp_path, ollama.url)) as chat:
        await chat.sees(PROMPT)
        chat.type("Bonjour\n")
        async with asyncio.timeout(HANG):
            while ollama.count("/api/chat") < 1:
                await asyncio.sleep(0.01)
        chat.proc.send_signal(signal.SIGINT)
        code = await chat.ends()
    assert code == 0  # Ctrl-C is how a person quits: not a failure
    assert chat.errors.splitlines() == [f"Log: {tmp_path / 'echo.log'}"]  # no traceback


async def test_a_warning_while_the_prompt_waits_gets_its_own_line_and_the_prompt_again(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    def reply(payload: dict[str, Any]) -> str:
        # The reflection, run in the background once the prompt is back, gets no JSON: the
        # worker warns while the person may be typing.
        return "pas du JSON" if "format" in payload else "Bonjour !"

    ollama.chat_reply = reply
    async with _session(_config(tmp_path, ollama.url), one_screen=True) as chat:
        await chat.sees(PROMPT)
        chat.type("Salut\n")
        await chat.sees("[WARNING: reflection of exchange")
        await chat.sees(PROMPT, count=3)  # the start, after the reply, after the warning
        await chat.answer("/stats")
        chat.type("\x04")
        await chat.ends()
    after_reply = chat.screen.split("Écho: Bonjour !", 1)[1]
    # The prompt, then the warning below it on a line of its own, then the prompt again, where
    # the next line is typed.
    assert re.match(r"\n> \n\[WARNING: reflection of exchange [^\n]*\]\n> Memories: ",
                    after_reply), after_reply  # fmt: skip
