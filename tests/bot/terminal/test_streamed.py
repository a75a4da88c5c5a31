"""The terminal prints a reply as it arrives (interactive), then the line saying it was cut
when its stream broke; a scripted session keeps one line per reply. Against the loopback fake
Ollama streaming its replies."""

from __future__ import annotations

import asyncio
from pathlib import Path

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
