"""`echo-bot` run in the test's own process, as a person runs it from a shell: `bot.cli.main`
with its own environment, stdin, stdout and stderr, in a thread of its own.

A `python -m bot` process costs 1.2-1.5 s of imports before it does anything; the tests that
are about a process itself (signals, the real entry point's exit, a terminal, two processes on
one database) still start one. Here, each run sees what a fresh process would:

- the environment without the test's ECHO_* variables, plus the ones given;
- stdin a pipe holding the given bytes then closed (or /dev/null), stdout and stderr text
  streams with the encodings and error handlers a process has under a C.UTF-8 locale;
- no handler on the root logger (bot/logs.py keeps handlers someone set first), the warnings
  filters a process starts with;
- an exception that escapes `main` printed on stderr as Python prints it, exit code 1;
  SystemExit turned into its code.

Everything the run changes in the process is put back afterwards: the environment, sys's
streams and hooks, every logger that was there before (levels, handlers, filters), the
warnings filters, the signal handlers, discord.py's endpoints (`point_at`). A thread the run
leaves running would keep a process from ending: it fails the test, as a process still
running after its time would.

Runs are one at a time (the streams, the environment and the root logger are the process's):
tests that need two CLIs at once on one database start processes."""

from __future__ import annotations

import asyncio
import gc
import io
import logging
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any

import pytest

from bot import cli, logs

# Only tells a hang from an exit, as the subprocess helpers' bounds did.
EXIT_WITHIN = 60.0
# What a thread the run started gets to end after `main` returns, before it counts as a hang.
THREADS_END_WITHIN = 10.0

# The filters a Python process starts with (no -W, no PYTHONWARNINGS): pytest's "error" is not
# what `python -m bot` runs under.
_PROCESS_WARNINGS: list[tuple[str, type[Warning], str | None]] = [
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
]
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)
_one_run = threading.Lock()


async def echo_bot(
    *argv: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = EXIT_WITHIN,
) -> tuple[int, str, str]:
    """`echo-bot ARGV...` run here: (exit code, stdout, stderr). `stdin` None is /dev/null;
    bytes are what a pipe holds before it is closed. `env` is added to the test's environment
    less its ECHO_* variables, as the subprocess helpers did."""
    handlers = {number: signal.getsignal(number) for number in _SIGNALS}
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[int, str, str]] = loop.create_future()

    def finish(result: tuple[int, str, str] | BaseException) -> None:
        if done.done():
            return
        if isinstance(result, BaseException):
            done.set_exception(result)
        else:
            done.set_result(result)

    def work() -> None:
        try:
            result: tuple[int, str, str] | BaseException = _run(list(argv), stdin, dict(env or {}))
        except BaseException as exc:  # the runner's own failure, told to the test
            result = exc
        with suppress(RuntimeError):  # the test ended (timed out), and its loop with it
            loop.call_soon_threadsafe(finish, result)

    # A daemon: a run that hangs fails its test and does not keep pytest from ending.
    threading.Thread(target=work, name=f"echo-bot {' '.join(argv[:1])}", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(done), timeout)
    except TimeoutError:
        pytest.fail(f"echo-bot {' '.join(argv)} still running after {timeout} s")
    finally:
        # asyncio.run in a thread other than the main one sets no handler; a run that did is
        # undone here, where signal.signal may be called.
        for number, handler in handlers.items():
            if signal.getsignal(number) is not handler and handler is not None:
                signal.signal(number, handler)


def _run(argv: list[str], stdin: bytes | None, env: dict[str, str]) -> tuple[int, str, str]:
    with _one_run, _environment(env), _logging(), _hooks(), _discord(), warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_PROCESS_WARNINGS):
            warnings.filterwarnings(action, category=category, module=module or "")
        out, err = io.BytesIO(), io.BytesIO()
        with _streams(stdin, out, err):
            before, frozen = set(threading.enumerate()), gc.get_freeze_count()
            code = _main(argv)
            sys.stdout.flush()
            sys.stderr.flush()
            left = _threads_left(before)
            # What the run left for the collector goes now, under a process's warnings
            # filters (an unclosed socket's ResourceWarning is not pytest's "error").
            gc.collect()
            if gc.get_freeze_count() > frozen:  # memory/bulk.py froze what a build left
                gc.unfreeze()  # collectable again in this process, which goes on
        if left:
            raise AssertionError(
                f"echo-bot {' '.join(argv)} returned {code} but left threads running (its "
                f"process would not end): {left}\nstderr: {err.getvalue()!r}"
            )
        return code, out.getvalue().decode(), err.getvalue().decode()


def _main(argv: list[str]) -> int:
    """`python -m bot ARGV` as the interpreter runs it: the exit code of main, SystemExit's,
    or 1 with the traceback on stderr."""
    try:
        code: Any = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        traceback.print_exc()
        return -int(signal.SIGINT)  # Python ends itself by the signal
    except BaseException:
        traceback.print_exc()
        return 1
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _threads_left(before: set[threading.Thread]) -> list[str]:
    # Every thread the run started, daemon or not: those main() starts here inherit the
    # runner's daemon flag, where in a process they would hold its exit; and one left behind
    # would run on into the next test.
    started = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    for thread in started:
        thread.join(THREADS_END_WITHIN)
    return [t.name for t in started if t.is_alive()]


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith("ECHO_")]:
        del os.environ[name]
    os.environ.update(env)
    try:
        yield
    finally:
        for name in [n for n in os.environ if n not in saved]:
            del os.environ[name]
        for name, value in saved.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


@contextmanager
def _streams(stdin: bytes | None, out: io.BytesIO, err: io.BytesIO) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    # A process's streams under the C.UTF-8 locale: stdin and stdout surrogateescape, stderr
    # backslashreplace. main() makes stdin and stdout replace what is not text.
    if stdin is None:
        reading = open(os.devnull, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
        feeder = None
    else:
        read, write = os.pipe()
        reading = open(read, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
        feeder = threading.Thread(target=_feed, args=(write, stdin), daemon=True)
        feeder.start()
    sys.stdin = reading
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape")
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace")
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(ValueError, OSError):
                stream.flush()
                stream.detach()  # the bytes stay readable
        reading.close()
        if feeder is not None:
            feeder.join(EXIT_WITHIN)
        sys.stdin, sys.stdout, sys.stderr = saved


def _feed(fd: int, data: bytes) -> None:
    """What the test types, then end of input (a reader that stopped early closes its end)."""
    with suppress(OSError, ValueError), open(fd, "wb") as pipe:
        pipe.write(data)


@contextmanager
def _logging() -> Iterator[None]:
    root = logging.getLogger()
    manager = logging.Logger.manager
    saved = {
        logger: (logger.level, list(logger.handlers), list(logger.filters), logger.propagate,
                 logger.disabled)
        for logger in [root, *manager.loggerDict.values()]
        if isinstance(logger, logging.Logger)
    }  # fmt: skip
    disabled = manager.disable
    root.handlers = []  # as in a fresh process: bot/logs.py sets the log up itself
    try:
        yield
    finally:
        for handler in root.handlers:  # the run's: its log file closed as at a process's exit
            if handler not in saved[root][1]:
                handler.close()
        for logger in [root, *manager.loggerDict.values()]:
            if not isinstance(logger, logging.Logger):
                continue
            if logger not in saved:  # made by the run: no level of its own, as at its making
                logger.setLevel(logging.NOTSET)
                continue
            level, handlers, filters, propagate, off = saved[logger]
            logger.setLevel(level)
            logger.handlers, logger.filters = handlers, filters
            logger.propagate, logger.disabled = propagate, off
        manager.disable = disabled
        manager._clear_cache()  # type: ignore[attr-defined]
        logs._prompt = None


@contextmanager
def _discord() -> Iterator[None]:
    """discord.py's endpoints and voice warnings are class attributes: `run` and `sync` point
    them at the configured Discord (bot/discord/startup.py `point_at`) for the process."""
    import discord
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    saved = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY, discord.VoiceClient.warn_nacl,
             discord.VoiceClient.warn_dave)  # fmt: skip
    try:
        yield
    finally:
        (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY, discord.VoiceClient.warn_nacl,
         discord.VoiceClient.warn_dave) = saved  # fmt: skip


@contextmanager
def _hooks() -> Iterator[None]:
    saved = sys.excepthook, threading.excepthook, sys.unraisablehook
    # A process's own: an exception in one of its threads, or one that cannot be raised (in a
    # __del__), printed on its stderr where a test looks for "Traceback", not pytest's hooks.
    threading.excepthook, sys.unraisablehook = threading.__excepthook__, sys.__unraisablehook__
    try:
        yield
    finally:
        sys.excepthook, threading.excepthook, sys.unraisablehook = saved
