"""The terminal's line reader: whatever way the bytes arrive (a UTF-8 character cut between two
reads, many lines in one), the lines come out as typed; invalid bytes become U+FFFD."""

from __future__ import annotations

import asyncio
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.terminal.lines import LineReader

_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=200)


async def _read_all(chunks: list[bytes]) -> list[str]:
    read, write = os.pipe()
    with os.fdopen(read, "r", encoding="utf-8") as stream:
        reader = LineReader(stream)
        lines: list[str] = []

        async def typist() -> None:
            for chunk in chunks:
                os.write(write, chunk)
                await asyncio.sleep(0)  # the reader may take this chunk alone
            os.close(write)

        typing = asyncio.create_task(typist())
        while line := await reader.readline():
            lines.append(line)
        await typing
    return lines


@settings(max_examples=60, deadline=None)
@given(_text, st.lists(st.integers(min_value=1, max_value=7), max_size=40))
def test_lines_come_out_as_typed_however_the_bytes_are_cut(text: str, cuts: list[int]) -> None:
    data = text.encode()
    chunks, start = [], 0
    for size in cuts:
        chunks.append(data[start : start + size])
        start += size
    chunks.append(data[start:])
    lines = asyncio.run(_read_all([c for c in chunks if c]))
    # Nothing lost or added, and each line is one line: a newline only at its end, and at the
    # end of every line but the last (which has none when the input did not end with one).
    assert "".join(lines) == text
    assert all("\n" not in line[:-1] for line in lines)
    assert all(line.endswith("\n") for line in lines[:-1]) and "" not in lines


def test_bytes_that_are_not_text_become_replacement_characters() -> None:
    assert asyncio.run(_read_all([b"caf\xc3", b"\xa9\n\xff ok\n"])) == ["café\n", "\ufffd ok\n"]
