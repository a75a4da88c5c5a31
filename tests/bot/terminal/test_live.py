"""The terminal chat as a person at a keyboard meets it (interactive: reflections in the
background, questions answered by the next line), driven through Terminal.run with a pipe for
stdin, in the test's own event loop, against the loopback fake Ollama."""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.config import load_settings
from bot.runtime import Runtime, open_runtime
from bot.terminal.chat import Terminal, terminal_user_id
from memory import manage
from tests.bot.terminal.test_e2e import _config
from tests.fakes.ollama import Chaos, FakeOllama

# Only tells a hang from progress: each wait here is met in well under a second.
HANG = 30.0
_WORD = re.compile(r"Mon mot est (\w+)")


def _script(ollama: FakeOllama) -> None:
    """Replies name the word said; each reflection makes one memory of the last word said."""

    def reply(payload: dict[str, Any]) -> str:
        words = _WORD.findall(json.dumps(payload["messages"], ensure_ascii=False))
        if "format" not in payload:
            return f"Noté : {words[-1]}." if words else "D'accord."
        memories = [{"text": f"Son mot est {words[-1]}", "kind": "fact", "scope": "global",
                     "confidence": 0.9}] if words else []  # fmt: skip
        return json.dumps({"memories": memories, "summary": "", "state": {}, "new_anchors": [],
                           "positions": []})  # fmt: skip

    ollama.chat_reply = reply


async def _until(what: str, check: Callable[[], Any]) -> None:
    async with asyncio.timeout(HANG):
        while not await _value(check()):
            await asyncio.sleep(0.01)
    del what  # named for the reader of a failure's traceback


async def _value(result: Any) -> Any:
    return await result if asyncio.iscoroutine(result) else result


class Keyboard:
    """One person's terminal: a pipe for what they type, a buffer for what they see."""

    def __init__(self, runtime: Runtime, name: str) -> None:
        read, self._write = os.pipe()
        self.stdin = os.fdopen(read, "r", encoding="utf-8")
        self.out = io.StringIO()
        self.user_id = terminal_user_id(name)
        self.terminal = Terminal(runtime, name, out=self.out, interactive=True)
        self.task = asyncio.create_task(self.terminal.run(self.stdin))

    def type(self, line: str) -> None:
        os.write(self._write, (line + "\n").encode())

    async def sees(self, text: str, count: int = 1) -> None:
        await _until(text, lambda: self.out.getvalue().count(text) >= count)

    def screen(self) -> str:
        """What the person sees: a status line cleared ("is writing…") is gone from it."""
        return re.sub(r"[^\n]*\r\x1b\[K", "", self.out.getvalue())

    async def memories(self, store: Any) -> list[Any]:
        return await manage.list_memories(store, self.user_id)

    async def close(self) -> None:
        """End of input (Ctrl-D): the chat ends without another line."""
        os.close(self._write)
        async with asyncio.timeout(HANG):
            await self.task
        self.stdin.close()


@asynccontextmanager
async def _runtime(tmp_path: Path, ollama: FakeOllama) -> AsyncIterator[Runtime]:
    async with open_runtime(load_settings(_config(tmp_path, ollama.url))) as runtime:
        yield runtime


async def test_reflections_go_on_while_a_forget_question_waits(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    held, release = False, asyncio.Event()

    async def pause(payload: dict[str, Any]) -> None:
        if "format" in payload and held:
            await release.wait()

    ollama.pause = pause
    async with _runtime(tmp_path, ollama) as runtime:
        marie = Keyboard(runtime, "Marie")
        await marie.sees("> ")  # the prompt
        marie.type("Mon mot est phare.")
        await marie.sees("Écho: Noté : phare.")
        await _until("the first memory", lambda: marie.memories(runtime.store))
        [first] = await marie.memories(runtime.store)
        held = True
        marie.type("Mon mot est lune.")
        await marie.sees("Écho: Noté : lune.")
        marie.type(f"/forget {first.id}")
        await marie.sees(f"Forget #{first.id} (Son mot est phare) for good? [y/N]")
        # The question waits for a line; the reflection held meanwhile finishes all the same.
        release.set()
        await _until("the second memory", lambda: _count(marie.memories(runtime.store), 2))
        marie.type("y")
        await marie.sees(f"Forgotten #{first.id}.")
        # A missing id is said at once, with no question.
        marie.type("/forget 999")
        await marie.sees("No memory #999.")
        await marie.close()
    out = marie.out.getvalue()
    assert "Forget #999" not in out
    assert [m.text for m in await _after(tmp_path, ollama, marie)] == ["Son mot est lune"]


async def test_the_end_of_input_cuts_a_reflection_short_and_the_next_start_makes_it(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    held, release = True, asyncio.Event()

    async def pause(payload: dict[str, Any]) -> None:
        if "format" in payload and held:
            await release.wait()

    ollama.pause = pause
    async with _runtime(tmp_path, ollama) as runtime:
        marie = Keyboard(runtime, "Marie")
        marie.type("Mon mot est phare.")
        await marie.sees("Écho: Noté : phare.")
        await _until("the reflection asked", lambda: ollama.count("/api/chat") == 2)
        await marie.close()  # at once, the reflection still held by the server
        assert await marie.memories(runtime.store) == []
    held = False
    release.set()
    async with _runtime(tmp_path, ollama) as runtime:
        again = Keyboard(runtime, "Marie")
        await _until("the memory", lambda: again.memories(runtime.store))
        await again.close()
    assert "Noté" not in again.out.getvalue()  # made with no new message


async def _count(memories: Any, n: int) -> bool:
    return len(await memories) >= n


async def _after(tmp_path: Path, ollama: FakeOllama, keyboard: Keyboard) -> list[Any]:
    async with _runtime(tmp_path, ollama) as runtime:
        return await keyboard.memories(runtime.store)


async def test_many_people_at_once_each_question_answers_its_own_asker(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Four people talk at once with random latencies; each one's /forget question waits
    while the others talk, and each answer erases only the asker's memory."""
    _script(ollama)
    ollama.chaos = Chaos(seed=17, max_delay=0.05, failure_rate=0.0)
    words = ["phare", "lune", "vent", "sel"]
    rng = random.Random(17)
    async with _runtime(tmp_path, ollama) as runtime:
        people = {word: Keyboard(runtime, f"Personne {word}") for word in words}

        async def one(word: str, keyboard: Keyboard) -> None:
            await asyncio.sleep(rng.uniform(0, 0.05))
            keyboard.type(f"Mon mot est {word}.")
            await keyboard.sees(f"Noté : {word}.")
            await _until(word, lambda: keyboard.memories(runtime.store))
            [mine] = await keyboard.memories(runtime.store)
            keyboard.type(f"/forget {mine.id}")
            await keyboard.sees(f"Forget #{mine.id} (Son mot est {word}) for good? [y/N]")
            await asyncio.sleep(rng.uniform(0, 0.05))  # the others talk meanwhile
            keyboard.type("y" if word != "sel" else "non")
            await keyboard.sees("Forgotten" if word != "sel" else "Kept.")

        await asyncio.gather(*(one(word, k) for word, k in people.items()))
        # Someone else's memory is missing for you: said at once, nothing asked.
        [kept] = await people["sel"].memories(runtime.store)
        people["phare"].type(f"/forget {kept.id}")
        await people["phare"].sees(f"No memory #{kept.id}.")
        for keyboard in people.values():
            await keyboard.close()
        remaining = {
            w: [m.text for m in await k.memories(runtime.store)] for w, k in people.items()
        }
    assert remaining == {"phare": [], "lune": [], "vent": [], "sel": ["Son mot est sel"]}


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/remember Appelle-moi Sam kind:rule", "Memory #1: created. Kept as your wish"),
        ("/remember Aime la mer scope:story kind:preference", "Memory #1: created."),
        ("/remember Aime la mer kind:nope", "kind:nope? kind is one of fact, preference"),
    ],
)
async def test_remember_reads_its_options(
    tmp_path: Path, ollama: FakeOllama, typed: str, said: str
) -> None:
    _script(ollama)
    async with _runtime(tmp_path, ollama) as runtime:
        marie = Keyboard(runtime, "Marie")
        marie.type(typed)
        marie.type("/memories")
        await marie.sees("Your memories" if "nope" not in typed else "No memories here.")
        await marie.close()
    out = marie.out.getvalue()
    assert said in out
    shown = {
        "/remember Appelle-moi Sam kind:rule": r"#1 rule·global · used in this chat · .* — "
        r"Appelle-moi Sam\n",
        "/remember Aime la mer scope:story kind:preference": r"#1 preference·story · used in "
        r"this chat · .* — Aime la mer\n",
    }.get(typed)
    assert shown is None or re.search(shown, out)


async def test_people_meeting_a_card_character_at_once_each_see_its_greeting_first(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """The reply streams into the terminal line by line: the card's greeting, known once the
    first message is stored, is said before it, never after (each person their own)."""
    from tests.memory.character.test_cards import v2

    _script(ollama)
    (tmp_path / "nyx.json").write_text(json.dumps(v2(alternate_greetings=[])), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[llm]\nbase_url = "{ollama.url}"\n[storage]\npath = "echo.sqlite3"\n'
        '[character]\ncard = "nyx.json"\n[conversation]\nsettle_seconds = 0\n',
        encoding="utf-8",
    )
    ollama.chaos = Chaos(seed=5, max_delay=0.03, failure_rate=0.0)
    ollama.stream.on = True  # the reply arrives word by word
    async with open_runtime(load_settings(config)) as runtime:
        people = {name: Keyboard(runtime, name) for name in ("Marie", "Paul", "Zoé")}
        for name, keyboard in people.items():
            keyboard.type(f"Mon mot est {name.lower()}.")
        for name, keyboard in people.items():
            await keyboard.sees(f"Nyx: Noté : {name.lower()}.")
        for name, keyboard in people.items():
            said = [line.removeprefix("> ") for line in keyboard.screen().splitlines()]
            said = [line for line in said if line.startswith("Nyx: ")]
            greeting = f"Nyx: *Nyx opens the door.* Come in, {name}, before the wind does."
            assert said == [greeting, f"Nyx: Noté : {name.lower()}."], name
        for keyboard in people.values():
            await keyboard.close()
