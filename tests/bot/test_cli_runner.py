"""The in-process `echo-bot` of tests/bot/cli_runner.py behaves as a process would, and leaves
the test's process as it found it."""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
from pathlib import Path

import pytest

from bot import cli
from tests.bot.cli_runner import echo_bot


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('[llm]\nbase_url = "http://127.0.0.1:9"\n[storage]\npath = "e.sqlite3"\n')
    return path


async def test_a_run_sees_a_fresh_process_and_leaves_this_one_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECHO_CHARACTER__TIMEZONE", "Mars/Olympus")  # the test's, not the run's
    handler = logging.NullHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    httpx = logging.getLogger("httpx")
    httpx.setLevel(logging.DEBUG)
    before = (
        list(root.handlers), root.level, dict(os.environ), list(warnings.filters),
        sys.stdin, sys.stdout, sys.stderr, sys.excepthook, threading.excepthook,
    )  # fmt: skip
    try:
        code, out, err = await echo_bot("check-config", "--config", str(_config(tmp_path)))
        assert (code, err) == (0, "") and out.startswith(f"{tmp_path / 'config.toml'}: OK")
        code, out, err = await echo_bot(
            "check-config", "--config", str(_config(tmp_path)),
            env={"ECHO_CHARACTER__TIMEZONE": "Europe/Pariss"},
        )  # fmt: skip
        assert (code, out) == (2, "") and "'Europe/Pariss'" in err and "Mars" not in err
        after = (
            list(root.handlers), root.level, dict(os.environ), list(warnings.filters),
            sys.stdin, sys.stdout, sys.stderr, sys.excepthook, threading.excepthook,
        )  # fmt: skip
        assert after == before
        assert httpx.level == logging.DEBUG  # main() set WARNING for its own run
    finally:
        root.removeHandler(handler)
        httpx.setLevel(logging.NOTSET)


async def test_an_exception_out_of_main_is_a_traceback_and_exit_code_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(argv: list[str]) -> int:
        print("half a line", end="")
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(cli, "main", broken)
    code, out, err = await echo_bot("doctor")
    assert (code, out) == (1, "half a line")
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("RuntimeError: broken on purpose\n")

    def leaves(argv: list[str]) -> int:
        raise SystemExit("echo-bot: said and gone")

    monkeypatch.setattr(cli, "main", leaves)
    assert await echo_bot("doctor") == (1, "", "echo-bot: said and gone\n")

    def thread_fails(argv: list[str]) -> int:
        def fail() -> None:
            raise ValueError("in a thread")

        thread = threading.Thread(target=fail, name="worker")
        thread.start()
        thread.join()
        return 0

    monkeypatch.setattr(cli, "main", thread_fails)
    code, _, err = await echo_bot("doctor")  # printed as a process prints it, not pytest's
    assert code == 0 and "Exception in thread worker" in err and "Traceback" in err
    assert err.rstrip().endswith("ValueError: in a thread")


async def test_stdin_is_a_pipe_that_ends_and_a_thread_left_running_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def echo(argv: list[str]) -> int:
        print(sys.stdin.read().upper(), end="")
        return 3

    monkeypatch.setattr(cli, "main", echo)
    assert await echo_bot("chat", stdin="été\nfin".encode()) == (3, "ÉTÉ\nFIN", "")
    assert await echo_bot("chat") == (3, "", "")  # /dev/null
    release = threading.Event()

    def hangs(argv: list[str]) -> int:
        threading.Thread(target=release.wait, name="left behind").start()
        return 0

    monkeypatch.setattr(cli, "main", hangs)
    monkeypatch.setattr("tests.bot.cli_runner.THREADS_END_WITHIN", 0.1)
    try:
        with pytest.raises(AssertionError, match="left behind"):
            await echo_bot("chat")
    finally:
        release.set()
