"""The one way in (memory.open), as docs/python-api.md shows it: the page's own example runs
against a loopback Ollama, and many people talking at once through a memory opened that way
each get their reply and their own memories, nobody else's."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import memory
from memory import Character, Characters, Incoming, Options, Server, manage
from tests.fakes.ollama import FakeOllama

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "python-api.md"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert blocks, "docs/python-api.md shows no Python example"
    return blocks[0]


async def test_the_pages_example_runs_and_says_the_reply(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: Any
) -> None:
    ollama.chat_reply = lambda p: "{}" if "format" in p else "Poivre, quel joli nom."
    code = _example()
    assert "http://localhost:11434" in code and '"echo.sqlite3"' in code
    code = code.replace("http://localhost:11434", ollama.url)
    code = code.replace("asyncio.run(main())", "")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, Any] = {}
    exec(compile(code, str(PAGE), "exec"), scope)
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        await scope["main"]()
    assert said.getvalue().splitlines()[0] == "Poivre, quel joli nom."
    assert (tmp_path / "echo.sqlite3").is_file()


def _reflection(payload: dict[str, Any]) -> str:
    """The model's reflection: the person's pet, named in their message, as a memory."""
    said = json.dumps(payload["messages"])
    pet = re.search(r"PET(\d+)", said)
    assert pet is not None
    return json.dumps({
        "memories": [{"text": f"A un lapin nommé PET{pet.group(1)}", "kind": "fact",
                      "scope": "global", "confidence": 0.9}],
        "summary": "",
    })  # fmt: skip


async def test_people_talking_at_once_through_an_opened_memory_each_keep_their_own(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    rng = random.Random(3)

    def reply(payload: dict[str, Any]) -> str:
        return _reflection(payload) if "format" in payload else "Noté."

    ollama.chat_reply = reply
    options = Options(
        database=tmp_path / "echo.sqlite3",
        server=Server(base_url=ollama.url, chat_model="m", embedding_model="e"),
        characters=Characters([Character(name="Ash", persona="Calme.")]),
    )
    people = range(1, 21)
    async with memory.open(options) as echo:

        async def talk(person: int) -> str:
            await asyncio.sleep(rng.uniform(0, 0.05))
            said = Incoming(
                f"t:{person}", person, f"P{person}", 1000 + person % 3, "dm",
                f"Mon lapin s'appelle PET{person}.",
            )  # fmt: skip
            return (await echo.engine.turn(said)).text

        assert await asyncio.gather(*(talk(p) for p in people)) == ["Noté."] * len(people)
        while await echo.worker.run_due(limit=50):
            pass
        for person in people:
            texts = [m.text for m in await manage.list_memories(echo.store, person)]
            assert texts == [f"A un lapin nommé PET{person}"], person
        assert {job.name for job in echo.jobs()} >= {"reflect", "reindex", "erasures"}
