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
