"""How the fake servers stream a reply when asked to (`"stream": true`), scripted by each test:
whether they stream at all, the pace of the pieces, how the bytes are cut into network writes,
and how a stream goes wrong. They count the streams running at once."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aiohttp import web

STREAM_REFUSAL = {"error": {"message": "stream is not supported", "type": "invalid_request_error"}}


def word_pieces(text: str) -> list[str]:
    """A reply cut as a tokenizer would, roughly: each word with the space before it."""
    return re.findall(r"\s*\S+|\s+$", text) or [text]


@dataclass
class StreamScript:
    # Answer a streamed request with a stream (False: with one JSON block, as before).
    on: bool = False
    # Refuse streamed requests with a 400 naming `stream`.
    refuse: bool = False
    # Seconds between two pieces (the scripted token rate).
    delay: float = 0.0
    pieces: Callable[[str], list[str]] = word_pieces
    # How the whole body is cut into network writes (None: one write per line or event).
    split: Callable[[bytes], Sequence[bytes]] | None = None
    # After this many pieces, the connection drops / a line that is not JSON comes.
    drop_after: int | None = None
    malformed_after: int | None = None
    # Pieces of "ha " sent for ever (until the client hangs up), after the reply's.
    endless: bool = False
    # Before the piece of this index, wait for `gate` (a test looks at what arrived so far).
    gate_at: int | None = None
    gate: asyncio.Event | None = None
    # Streams running now, the most at once, and bytes sent in all.
    now: int = 0
    most: int = 0
    streams: int = 0
    bytes_sent: int = 0

    async def send(
        self,
        request: web.Request,
        content_type: str,
        lines: Sequence[bytes],
        last: Sequence[bytes],
        more: Callable[[str], bytes],
    ) -> web.StreamResponse:
        """Stream `lines` (one a piece) then `last`, as scripted; `more(text)` is a line of a
        piece past the reply (for `endless`)."""
        response = web.StreamResponse(headers={"Content-Type": content_type})
        self.now += 1
        self.streams += 1
        self.most = max(self.most, self.now)
        try:
            await response.prepare(request)
            if self.split is not None:
                for chunk in self.split(b"".join([*lines, *last])):
                    await self._write(response, chunk)
                return response
            for index, line in enumerate(lines):
                if index == self.malformed_after:
                    events = content_type == "text/event-stream"
                    await self._write(response, b"data: {not json\n\n" if events else b"{not\n")
                if index == self.gate_at and self.gate is not None:
                    await self.gate.wait()
                if index == self.drop_after:
                    assert request.transport is not None
                    request.transport.close()
                    return response
                await self._write(response, line)
                if self.delay:
                    await asyncio.sleep(self.delay)
            while self.endless:
                await self._write(response, more("ha "))
            for line in last:
                await self._write(response, line)
        except ConnectionError:
            pass  # the client hung up: what `endless` and a deadline are for
        finally:
            self.now -= 1
        return response

    async def _write(self, response: web.StreamResponse, data: bytes) -> None:
        await response.write(data)
        self.bytes_sent += len(data)
