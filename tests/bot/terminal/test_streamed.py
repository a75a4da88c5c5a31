"""The terminal prints a reply as it arrives (interactive), then the line saying it was cut
when its stream broke; a scripted session keeps one line per reply. Against the loopback fake
Ollama streaming its replies."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from bot import render
from tests.bot.terminal.test_live import Keyboard, _runtime
from tests.fakes.ollama import FakeOllama

REPLY = "Bonjour Marie, ça va ? Le café est chaud ☕ et le thé attend. Fin."


async def test_the_reply_is_printed_as_it_arrives(tmp_path: Path, ollama: FakeOllama) -> None:
    ollama.chat_reply = lambda payload: REPLY if "format" not in payload else '{"memories": []}'
    ollama.stream.on = True
    ollama.stream.gate_at, ollama.stream.gate = 4, asyncio.Event()
    async with _runtime(tmp_path, ollama) as runtime:
        marie = Keyboard(runtime, "Marie")
        await marie.sees("> ")
        marie.type("Salut !")
        # The first pieces are on screen while the server still holds the rest.
        await marie.sees("Écho: Bonjour Marie, ça va")
        assert "Fin." not in marie.out.getvalue()
        ollama.stream.gate.set()
        await marie.sees(f"Écho: {REPLY}\n")
        await marie.close()
    assert marie.out.getvalue().count("Écho:") == 1


async def test_a_broken_stream_is_printed_with_the_line_saying_so(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = lambda payload: REPLY if "format" not in payload else '{"memories": []}'
    ollama.stream.on = True
    ollama.stream.drop_after = 3
    async with _runtime(tmp_path, ollama) as runtime:
        marie = Keyboard(runtime, "Marie")
        await marie.sees("> ")
        marie.type("Salut !")
        await marie.sees(render.interrupted_line())
        await marie.close()
    out = marie.out.getvalue()
    assert f"Écho: Bonjour Marie, ça\n{render.interrupted_line()}\n" in out


async def test_people_streaming_at_once_each_see_their_own_reply_whole(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    rng = random.Random(33)

    def reply(payload: dict[str, Any]) -> str:
        if "format" in payload:
            return '{"memories": []}'
        said = payload["messages"][-1]["content"]
        return f"{REPLY} {said[-10:]}"

    async def pause(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.03))

    ollama.chat_reply, ollama.pause = reply, pause
    ollama.stream.on, ollama.stream.delay = True, 0.003
    async with _runtime(tmp_path, ollama) as runtime:
        people = [Keyboard(runtime, f"Personne{n}") for n in range(6)]
        for n, person in enumerate(people):
            await person.sees("> ")
            person.type(f"Salut, n°{n:03d}")
        for n, person in enumerate(people):
            await person.sees(f"Écho: {REPLY} ")
            await person.sees(f"n°{n:03d}\n")
        for person in people:
            await person.close()
    assert ollama.stream.most > 1
    for n, person in enumerate(people):
        out = person.out.getvalue()
        assert out.count("Écho:") == 1 and f"n°{n:03d}\n" in out
        assert all(f"n°{m:03d}" not in out for m in range(6) if m != n)


class _Clock:
    """The "is writing…" line's clock: its waits return when the test says so, not in time."""

    def __init__(self) -> None:
        self.waits: list[tuple[float, asyncio.Future[None]]] = []

    async def sleep(self, seconds: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waits.append((seconds, woken))
        await woken

    def advance(self) -> None:
        """Past every wait asked so far."""
        for _, woken in self.waits:
            if not woken.done():
                woken.set_result(None)


WRITING = "Écho is writing…"
SLOW = "no word from the server after 15 s"


def _quiet(ollama: FakeOllama, held: dict[str, asyncio.Event]) -> None:
    """The server says nothing to a message until the test releases it (by its last words)."""
    ollama.chat_reply = lambda p: REPLY if "format" not in p else '{"memories": []}'
    ollama.stream.on = True

    async def pause(payload: dict[str, Any]) -> None:
        if "format" not in payload:
            await held[payload["messages"][-1]["content"][-4:]].wait()

    ollama.pause = pause


async def test_the_terminal_shows_the_character_writing_then_says_once_when_slow(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    held = {"n°01": asyncio.Event(), "n°02": asyncio.Event()}
    _quiet(ollama, held)
    async with _runtime(tmp_path, ollama) as runtime:
        marie = Keyboard(runtime, "Marie")
        clock = _Clock()
        marie.terminal.sleep = clock.sleep
        await marie.sees("> ")
        marie.type("Salut n°01")
        await marie.sees(WRITING)
        assert SLOW not in marie.out.getvalue() and len(clock.waits) == 1
        assert clock.waits[0][0] == 15.0
        clock.advance()  # 15 s of the server's silence
        await marie.sees(SLOW)
        held["n°01"].set()
        await marie.sees(f"Écho: {REPLY}\n")
        # The status line was cleared before the reply, on the same line.
        assert f"Ctrl-C stops)\r\x1b[KÉcho: {REPLY}\n" in marie.out.getvalue()
        # A quick answer: the line shows and gives way, never the slow note.
        held["n°02"].set()
        marie.type("Re n°02")
        await marie.sees(f"Écho: {REPLY}\n", count=2)
        assert clock.waits[1][1].cancelled()
        await marie.close()
    out = marie.out.getvalue()
    assert out.count(SLOW) == 1 and out.count(WRITING) == 3  # twice for the slow one, once
    assert out.count("\r\x1b[K") == 3


async def test_the_writing_line_goes_when_the_server_fails(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.set("/api/chat", "500")
    async with _runtime(tmp_path, ollama) as runtime:
        marie = Keyboard(runtime, "Marie")
        marie.terminal.sleep = _Clock().sleep
        await marie.sees("> ")
        marie.type("Salut !")
        await marie.sees("/retry asks again.")
        await marie.close()
    out = marie.out.getvalue()
    assert f"{WRITING}\r\x1b[K[Écho cannot answer" in out and SLOW not in out


async def test_people_waiting_at_once_each_see_their_own_line_and_reply(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    held = {f"n°{n:02d}": asyncio.Event() for n in range(6)}
    _quiet(ollama, held)
    async with _runtime(tmp_path, ollama) as runtime:
        people = [Keyboard(runtime, f"Personne{n}") for n in range(6)]
        clocks = [_Clock() for _ in people]
        for n, (person, clock) in enumerate(zip(people, clocks, strict=True)):
            person.terminal.sleep = clock.sleep
            await person.sees("> ")
            person.type(f"Salut n°{n:02d}")
        for person in people:
            await person.sees(WRITING)
        for clock in clocks[::2]:  # half of them wait past 15 s
            clock.advance()
        rng = random.Random(7)
        for key in rng.sample(sorted(held), len(held)):
            held[key].set()
        for person in people:
            await person.sees(f"Écho: {REPLY}\n")
            await person.close()
    for n, person in enumerate(people):
        out = person.out.getvalue()
        assert out.count(SLOW) == (1 if n % 2 == 0 else 0), n
        assert out.count("Écho:") == 1
