"""The files the one-shot commands read and write: `export`'s JSON, `import`'s, the database's
presence. Each mistake is one line naming the file (InvalidInput), never a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memory import InvalidInput
from memory.manage import export


def write(path: str, data: str) -> None:
    """Write `data` to the file, or to stdout for `-`."""
    if path == "-":
        print(data)
        return
    try:
        Path(path).write_text(data + "\n", encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be written ({exc.strerror or exc})") from None


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
