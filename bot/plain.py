"""The terminal's plain text: Discord's markdown (our **bold** and `code`) taken away, and the
texts people wrote, marked while rendering for the terminal, shown exactly as they are."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar

_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_CODE = re.compile(r"`([^`\n]+)`")
# A person's text inside a rendering made for the terminal, between "shift out" and "shift in":
# control characters that `clean` takes out of every stored text, so none can be in it.
_OPEN, _CLOSE = "\x0e", "\x0f"
_THEIRS = re.compile(f"{_OPEN}(.*?){_CLOSE}", re.DOTALL)
_PLACE = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_FOR_TERMINAL: ContextVar[bool] = ContextVar("for_terminal", default=False)


@contextlib.contextmanager
def for_terminal() -> Iterator[None]:
    """Render for `plain` while inside: the texts people wrote are marked, so that `plain`
    takes away our markup only and shows theirs as they wrote it (a memory's `**` included)."""
    token = _FOR_TERMINAL.set(True)
    try:
        yield
    finally:
        _FOR_TERMINAL.reset(token)


def in_terminal() -> bool:
    """Whether what is rendered now is for the terminal (inside `for_terminal`)."""
    return _FOR_TERMINAL.get()


def theirs(text: str) -> str:
    """A person's text in a rendering: marked when rendering for the terminal, as is otherwise.
    Marks already inside (an excerpt within a line marked whole) go: one pair per text."""
    if not _FOR_TERMINAL.get():
        return text
    return f"{_OPEN}{text.replace(_OPEN, '').replace(_CLOSE, '')}{_CLOSE}"


def plain(text: str) -> str:
    """Discord's markdown as a terminal shows it: our **bold** and `code` as their plain words,
    the texts marked as people's (`theirs`) exactly as they are."""
    kept: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        kept.append(match.group(1))
        return f"{_OPEN}{len(kept) - 1}{_CLOSE}"

    ours = _CODE.sub(r"\1", _BOLD.sub(r"\1", _THEIRS.sub(set_aside, text)))
    return _PLACE.sub(lambda m: kept[int(m.group(1))], ours)
