"""Each terminal command reads its options as the Discord command does, and an option it does
not take is refused in one line, nothing done (issue 38): `/forget-me character:brann` erased
every character's memory of the person. Driven through Terminal.run with scripted input, on a
three-character configuration, against the loopback fake Ollama."""

from __future__ import annotations

import asyncio
import inspect
import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.runtime import Runtime, open_runtime
from bot.terminal import options
from bot.terminal.chat import Terminal, terminal_user_id
from memory import manage
from memory.model import DM_ORIGIN
from tests.fakes.ollama import FakeOllama

KEYS = ("nyx", "brann", "sel")


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{url}"\n[storage]\npath = "echo.sqlite3"\n'
        + "".join(
            f'[[characters]]\nkey = "{k}"\nname = "{k.title()}"\npersona = "Tu es {k}."\n'
            for k in KEYS
        ),
        encoding="utf-8",
    )
    return path


@asynccontextmanager
async def _runtime(tmp_path: Path, ollama: FakeOllama) -> AsyncIterator[Runtime]:
    async with open_runtime(load_settings(_config(tmp_path, ollama.url))) as runtime:
        yield runtime


async def _typed(runtime: Runtime, name: str, lines: list[str], character: str = "") -> str:
    out = io.StringIO()
    chat = Terminal(runtime, name, out=out, interactive=False, character=character)
    await chat.run(io.StringIO("".join(f"{line}\n" for line in lines)))
    return out.getvalue()


async def _known(runtime: Runtime, name: str) -> dict[str, list[str]]:
    """What each character keeps about the person, by key."""
    person, cast = terminal_user_id(name), runtime.characters
    return {
        key: sorted(m.text for m in await manage.list_memories(
            runtime.store, cast.person_id(key, person)
        ))
        for key in KEYS
    }  # fmt: skip


async def _teach(runtime: Runtime, name: str) -> None:
    person, cast = terminal_user_id(name), runtime.characters
    for key in KEYS:
        who = cast.person_id(key, person)
        await manage.remember(
            runtime.store, user_id=who, story_id=cast.story_id(key, person), origin=DM_ORIGIN,
            text=f"{name} a dit un secret à {key}",
        )  # fmt: skip


def test_every_terminal_command_says_what_it_takes() -> None:
    handlers = {
        name.removeprefix("cmd_").replace("_", "-")
        for name, _ in inspect.getmembers(Terminal, inspect.iscoroutinefunction)
        if name.startswith("cmd_")
    }
    assert handlers == set(options.USAGES)


# An option of another command at the end of each command's line (forget-me takes
# `character`: it gets another), and what the refusal says.
_FOREIGN = {
    name: ("kind:rule" if "character" in usage.options else "character:brann")
    for name, usage in options.USAGES.items()
}
_LINES = {
    "memories": "/memories chat", "pin": "/pin 1", "unpin": "/unpin 1", "forget": "/forget 1",
    "restore": "/restore 1", "edit": "/edit 1 Autre texte", "swipe": "/swipe 1",
    "remember": "/remember J'aime le thé", "positions": "/positions drop 1 faux",
    "anchors": "/anchors add Un fait", "privacy": "/privacy everywhere",
    "context": "/context Et alors ?", "strategy": "/strategy truncate", "history": "/history 1",
    "exclude": "/exclude 1", "include": "/include 1", "export": "/export out.json",
    "lore": "/lore add phare | Le phare", "forget-message": "/forget-message 1",
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(options.USAGES))
async def test_an_option_a_command_does_not_take_is_refused_in_one_line(
    tmp_path: Path, ollama: FakeOllama, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with _runtime(tmp_path, ollama) as runtime:
        await _teach(runtime, "Marie")
        before = await _known(runtime, "Marie")
        line = f"{_LINES.get(command, '/' + command)} {_FOREIGN[command]}"
        out = await _typed(runtime, "Marie", [line], character="brann")
        assert await _known(runtime, "Marie") == before
    [said] = out.splitlines()  # one line, and no question asked
    assert said.startswith(f"/{command} has no option ")
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    "command", sorted(n for n, u in options.USAGES.items() if not u.rest)
)  # fmt: skip
async def test_a_word_after_a_command_that_takes_nothing_is_refused(
    tmp_path: Path, ollama: FakeOllama, command: str
) -> None:
    async with _runtime(tmp_path, ollama) as runtime:
        await _teach(runtime, "Marie")
        before = await _known(runtime, "Marie")
        out = await _typed(runtime, "Marie", [f"/{command} tout"])
        assert await _known(runtime, "Marie") == before
    assert out.splitlines() == [f"/{command} takes nothing after it: write /{command} alone."]


async def test_options_are_read_by_their_discord_names(tmp_path: Path, ollama: FakeOllama) -> None:
    async with _runtime(tmp_path, ollama) as runtime:
        await _teach(runtime, "Marie")
        [mine] = await manage.list_memories(runtime.store, terminal_user_id("Marie"))
        out = await _typed(runtime, "Marie", [
            f"/pin memory:{mine.id}", f"/unpin {mine.id}", f"/pin {mine.id} memory:{mine.id}",
            "/privacy memories:everywhere", f"/memories history:{mine.id}",
            "/remember Aime le thé \\character:brann",
        ])  # fmt: skip
        kept = await _known(runtime, "Marie")
    said = out.splitlines()
    assert said[:3] == [f"Pinned #{mine.id}.", f"Unpinned #{mine.id}.",
                        f"memory is given twice ({mine.id} and memory:{mine.id})."]  # fmt: skip
    assert "are used here too (your choice)" in said[3]
    assert said[4].startswith(f"#{mine.id} now, since")
    assert "Aime le thé character:brann" in kept["nyx"]


async def test_forget_me_for_one_character_keeps_the_others_memories(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _runtime(tmp_path, ollama) as runtime:
        await _teach(runtime, "Marie")
        await _teach(runtime, "Paul")
        out = await _typed(runtime, "Marie", ["/forget-me character:brann", "y"], "brann")
        marie, paul = await _known(runtime, "Marie"), await _known(runtime, "Paul")
    assert "Erase everything Brann (brann) stores about you?" in out
    assert "Erased everything Brann stored about you:" in out
    assert marie == {"brann": [], "nyx": ["Marie a dit un secret à nyx"],
                     "sel": ["Marie a dit un secret à sel"]}  # fmt: skip
    assert all(paul[key] == [f"Paul a dit un secret à {key}"] for key in KEYS)


async def test_many_people_forget_one_character_at_once_each_keeps_the_others(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    people = [f"Personne{n}" for n in range(8)]
    async with _runtime(tmp_path, ollama) as runtime:
        for name in people:
            await _teach(runtime, name)
        # Each forgets another character, at once; the last two only list theirs.
        await asyncio.gather(*(
            _typed(runtime, name, [f"/forget-me character:{KEYS[n % 3]}", "y"])
            if n < 6 else _typed(runtime, name, ["/memories"])
            for n, name in enumerate(people)
        ))  # fmt: skip
        known = {name: await _known(runtime, name) for name in people}
    for n, name in enumerate(people):
        gone = KEYS[n % 3] if n < 6 else None
        for key in KEYS:
            expected = [] if key == gone else [f"{name} a dit un secret à {key}"]
            assert known[name][key] == expected, (name, key)


async def test_forget_me_for_a_character_that_is_not_there_is_one_line(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _runtime(tmp_path, ollama) as runtime:
        await _teach(runtime, "Marie")
        before = await _known(runtime, "Marie")
        out = await _typed(runtime, "Marie", ["/forget-me character:nope"])
        assert await _known(runtime, "Marie") == before
    assert out.splitlines() == ["no character 'nope' (there are: nyx, brann, sel)."]


async def test_character_in_the_terminal_says_who_plays_and_how_to_talk_to_another(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _runtime(tmp_path, ollama) as runtime:
        out = await _typed(runtime, "Marie", ["/character", "/character set nyx"], "brann")
    assert "Unknown command" not in out
    lines = out.splitlines()
    assert lines[0] == (
        "You are talking to Brann (key brann). The others: Nyx (nyx), Sel (sel):"
        " echo-bot chat --character KEY."
    )
    assert lines[1].endswith("start echo-bot chat --character KEY.")
