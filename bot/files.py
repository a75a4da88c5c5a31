"""The files the one-shot commands read and write: `export`'s JSON, `import`'s, the database's
presence. Each mistake is one line naming the file (InvalidInput), never a traceback.

A file of personal data (an export) is readable by its owner only (mode 0600, an existing file
too), and by default goes in EXPORTS beside the database (mode 0700): the data folder, not the
folder the command was started in, which may be a git checkout."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from bot.render import count
from memory import InvalidInput
from memory.manage import export

# The folder beside the database where exports go when no file is named (.gitignore has it).
EXPORTS = "exports"
PRIVATE = 0o600


def write(path: str, data: str) -> None:
    """Write `data` (personal data) to the file, readable by its owner only, or to stdout for
    `-`."""
    if path == "-":
        print(data)
        sys.stdout.flush()  # a reader that left is said now, before anything else is
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            if stat.S_ISREG(os.fstat(fd).st_mode):  # made before, with its own mode
                os.fchmod(fd, PRIVATE)
            out.write(data + "\n")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be written ({exc.strerror or exc})") from None


def default_export(database: Path, user_id: int) -> Path:
    """Where a person's export goes when no file is named: EXPORTS beside the database (made,
    readable by its owner only, when absent)."""
    folder = database.parent / EXPORTS
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"{folder}: cannot be made ({exc.strerror or exc})") from None
    return folder / f"echo-export-{user_id}.json"


def summary(data: dict[str, Any]) -> str:
    """What an export holds, in words: `3 memories, 2 messages with their replies`."""
    memories = count(len(data.get("memories") or []), "memory", "memories")
    return f"{memories}, {count(len(data.get('messages') or []), 'message')} with their replies"


def read(path: str) -> str:
    """The file's text, or stdin's for `-`."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be read ({exc.strerror or exc})") from None


def exported(text: str, path: str) -> object:
    """An `echo-bot export` file, checked whole; InvalidInput names the file, and the first
    item that is not a memory and why."""
    where = "standard input" if path == "-" else path
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{where}: not JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise InvalidInput(f"{where}: JSON nested too deeply") from None
    try:
        export.parse(data)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    return data


def database_exists(database: Path | str) -> bool:
    """Whether the database file is there (an in-memory one always is; a PostgreSQL URL names
    a server, which says so itself when it has no such database)."""
    if isinstance(database, str):
        return True
    return str(database) == ":memory:" or database.exists()
