"""Where the log goes: stderr for the bot and the one-shot commands; a file for the terminal chat,
whose screen keeps the conversation, the prompt, and the warnings that need the person."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TextIO

from memory import Secrets

LOG_NAME = "echo.log"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The warnings the chat's screen shows: what degrades the memory out of the person's sight (the
# embedding server failing, so recall by keywords only; re-indexing or a reflection failing).
# A turn that fails says so in its answer ("cannot answer right now"); errors are always shown.
SCREEN_WARNINGS = (
    "memory.recall.semantic",
    "memory.recall.conversation",
    "memory.vectors.indexer",
    "memory.write.worker",
)


def configure(
    *,
    verbose: bool,
    file: Path | None = None,
    screen: TextIO = sys.stderr,
    warnings_only: bool = False,
) -> str:
    """Send the log to stderr, or to `file` with the errors and SCREEN_WARNINGS also said on
    `screen`, each kind once; return where the log goes, as a person reads it. `warnings_only`
    (without `verbose`) keeps the INFO lines out, and the structured-output probe's warnings: a
    command whose own lines say what it found."""
    _quiet_libraries(verbose=verbose)
    root = logging.getLogger()
    if root.handlers:  # as logging.basicConfig: whoever set the log up first (a test) keeps it
        return "where it was set up before"
    root.setLevel(logging.DEBUG if verbose else logging.WARNING if warnings_only else logging.INFO)
    if warnings_only and not verbose:
        # The structured-output probe's refusals are one of the command's own lines already.
        logging.getLogger("memory.backends.structured").setLevel(logging.ERROR)
    where = "this screen"
    target: logging.Handler = _Screen(screen)
    if file is not None:
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            target = logging.FileHandler(file, encoding="utf-8")
            where = str(file)
        except OSError as exc:
            # The chat still works; its log stays on the screen, as for the other commands.
            where = f"this screen ({file} cannot be written: {exc.strerror or exc})"
        else:
            root.addHandler(_screen_warnings(screen, where))
    target.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(target)
    return where


@contextlib.asynccontextmanager
async def redacting(secrets: Secrets) -> AsyncIterator[None]:
    """Inside, every record the log's handlers write is without `secrets` (its message, its
    arguments, its traceback): a server may quote a key in an error that a library logs."""
    handlers = list(logging.getLogger().handlers)
    hiding = _Redacting(secrets)
    for handler in handlers:
        handler.addFilter(hiding)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(hiding)


class _Redacting(logging.Filter):
    def __init__(self, secrets: Secrets) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError, KeyError):  # arguments that do not fit the message
            message = f"{record.msg} % {record.args!r}"
        # The record is rewritten in place: every handler after this one writes it redacted.
        record.msg, record.args = self.secrets.redact(message), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.secrets.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.secrets.redact(record.stack_info)
        return True


_TRACEBACKS = logging.Formatter()


def chat_log(database: Path, tag: str = "") -> Path:
    """The terminal chat's log file: beside the database (in the folder for `:memory:`);
    `tag` names the process among several sharing the folder (`echo.shards-1.log`)."""
    folder = Path.cwd() if str(database) == ":memory:" else database.parent
    return folder / (LOG_NAME.removesuffix(".log") + tag + ".log")


# The prompt the chat shows while it waits for a line, and where: (None while it does not wait).
_prompt: tuple[str, TextIO] | None = None


@contextlib.contextmanager
def prompt_waiting(prompt: str, out: TextIO) -> Iterator[None]:
    """Show `prompt` on `out` and wait inside: a log line said on the screen meanwhile goes on a
    line of its own, then the prompt is shown again, so the person still types after one."""
    global _prompt
    print(prompt, file=out, end="", flush=True)
    _prompt = (prompt, out)
    try:
        yield
    finally:
        _prompt = None


class _Screen(logging.StreamHandler[TextIO]):
    """A log line on the chat's screen: off the line of a prompt that waits, and the prompt
    shown again after it."""

    def emit(self, record: logging.LogRecord) -> None:
        waiting = _prompt
        if waiting is None:
            super().emit(record)
            return
        prompt, out = waiting
        with contextlib.suppress(OSError, ValueError):  # a closed screen: the file keeps it
            self.stream.write("\n")
            self.flush()
        super().emit(record)
        with contextlib.suppress(OSError, ValueError):
            print(prompt, file=out, end="", flush=True)


def _screen_warnings(screen: TextIO, where: str) -> logging.Handler:
    handler = _Screen(screen)
    handler.setLevel(logging.WARNING)
    handler.addFilter(_OncePerKind())
    handler.setFormatter(_OneLine(f"[%(levelname)s: %(message)s; more in {where}]"))
    return handler


class _OneLine(logging.Formatter):
    """The record's message alone: a traceback (asyncio's or apscheduler's errors carry one)
    would fill the chat's screen, and its exception text may quote what someone said; the
    file keeps it."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        return self.formatMessage(record)


class _OncePerKind(logging.Filter):
    """Each kind of warning (one logger, one wording) once on screen: a server that stays down
    would otherwise repeat itself every re-indexing pass; the file keeps every one."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR and record.name not in SCREEN_WARNINGS:
            return False
        kind = (record.name, str(record.msg))
        if kind in self._seen:
            return False
        self._seen.add(kind)
        return True


# Libraries whose INFO lines are not for the operator: APScheduler says every job added, every
# run (two lines each 5 s) and every start and stop; discord.client says "logging in" at each
# login try, which bot.discord.startup already tells in one line. -v shows them.
_CHATTY = ("apscheduler", "discord.client")


def _quiet_libraries(*, verbose: bool = False) -> None:
    # httpx logs every request at INFO: keep the log for what Écho itself does.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)
    # -v is Écho's own debug log. These print what people said at DEBUG: aiosqlite every
    # statement with its parameters, discord.py every gateway event and request body, httpcore
    # the request headers (an API key among them).
    for name in ("aiosqlite", "discord", "httpcore"):
        logging.getLogger(name).setLevel(logging.INFO)
    # A background job cancelled when the bot stops (a start-up fault, Ctrl-C) is not an error:
    # apscheduler would log it as one, with a traceback.
    executors = logging.getLogger("apscheduler.executors.default")
    if not any(isinstance(f, _NotCancelled) for f in executors.filters):
        executors.addFilter(_NotCancelled())


class _NotCancelled(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None or not isinstance(record.exc_info[1], asyncio.CancelledError)
