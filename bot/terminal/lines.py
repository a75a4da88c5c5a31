"""Lines typed in the terminal, read without blocking the event loop.

Reading stdin in a worker thread held the loop's exit: Ctrl-C waited for Enter, because the
thread stayed blocked in read() and asyncio joins its threads before it stops. Here the loop
itself waits until the terminal or pipe has bytes (add_reader), then reads what is there, so
Ctrl-C cancels a wait like any other, and background work goes on while a question waits.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import stat
from typing import TextIO

CHUNK = 65536


class LineReader:
    """One line at a time from a text stream: a terminal or a pipe through the event loop,
    anything else (a file, a StringIO) directly, since reading it never waits."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._fd = _waitable_fd(stream)
        encoding = getattr(stream, "encoding", None) or "utf-8"
        # Bytes that are not text (a pasted binary, a Latin-1 terminal) become U+FFFD.
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._buffer = ""
        self._ended = False

    async def readline(self) -> str:
        """The next line with its newline; "" at the end of input."""
        if self._fd is None:
            return self._stream.readline()
        while "\n" not in self._buffer and not self._ended:
            await self._readable(self._fd)
            chunk = os.read(self._fd, CHUNK)
            self._buffer += self._decoder.decode(chunk, final=not chunk)
            self._ended = not chunk
        line, newline, self._buffer = self._buffer.partition("\n")
        return line + newline

    async def _readable(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        try:
            loop.add_reader(fd, wake)
        except (OSError, NotImplementedError):
            # epoll refuses /dev/null and its kind, whose reads never wait; a loop without
            # add_reader (Windows' proactor) reads as a blocking call.
            return
        try:
            await ready
        finally:
            loop.remove_reader(fd)


def _waitable_fd(stream: TextIO) -> int | None:
    """The stream's file descriptor when a read on it may wait (a terminal, a pipe, a socket)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else fd
