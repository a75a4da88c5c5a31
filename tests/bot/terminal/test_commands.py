"""The terminal's commands as a newcomer types them (issue 29): /export, names that differ only
by case, /history's pages, and answers that say what happened. Driven through Terminal.run
with scripted input, in the test's own event loop, against the loopback fake Ollama."""

from __future__ import annotations

import asyncio
import io
import json
import random
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.runtime import Runtime, open_runtime
from bot.terminal import chat as terminal_module
from bot.terminal.chat import Terminal, spelled_user_id, terminal_user_id
from memory import manage
from memory.model import DM_ORIGIN, Scope
from tests.bot.terminal.test_e2e import _config
from tests.bot.terminal.test_live import _script
from tests.bot.test_cli import _run
from tests.fakes.ollama import Chaos, FakeOllama

ROOT = Path(__file__).resolve().parents[3]


@asynccontextmanager
async def _runtime(tmp_path: Path, ollama: FakeOllama) -> AsyncIterator[Runtime]:
    async with open_runtime(load_settings(_config(tmp_path, ollama.url))) as runtime:
        yield runtime


async def _typed(runtime: Runtime, name: str, lines: list[str]) -> str:
    """What the person sees after typing these lines (a script: each turn reflected at once)."""
    out = io.StringIO()
    chat = Terminal(runtime, name, out=out, interactive=False)
    await chat.run(io.StringIO("".join(f"{line}\n" for line in lines)))
    return out.getvalue()


async def _remember(
    runtime: Runtime, user_id: int, text: str, *, scope: Scope = Scope.GLOBAL
) -> None:
    await manage.remember(
        runtime.store, user_id=user_id, story_id=user_id, origin=DM_ORIGIN, text=text, scope=scope
    )


async def test_export_in_the_terminal_writes_the_file(tmp_path: Path, ollama: FakeOllama) -> None:
    _script(ollama)
    target = tmp_path / "mine.json"
    async with _runtime(tmp_path, ollama) as runtime:
        out = await _typed(runtime, "Marie", ["Mon mot est phare.", f"/export {target}"])
    assert "Unknown command" not in out
    said = (
        f"Everything stored about you is in {target} (1 memory, 1 message with their replies), "
        "readable by you only."
    )
    assert said in out
    data = json.loads(target.read_text(encoding="utf-8"))
    assert [m["text"] for m in data["memories"]] == ["Son mot est phare"]
    assert data["user_id"] == terminal_user_id("Marie")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


async def test_export_without_a_file_goes_beside_the_database_not_here(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "checkout"  # where the chat was started: a git checkout, often
    here.mkdir()
    monkeypatch.chdir(here)
    async with _runtime(tmp_path, ollama) as runtime:
        out = await _typed(runtime, "Marie", ["/remember Aime le thé", "/export"])
    assert list(here.iterdir()) == []
    folder = tmp_path / "exports"  # beside echo.sqlite3
    written = folder / f"echo-export-{terminal_user_id('Marie')}.json"
    assert (
        f"Everything stored about you is in {written} (1 memory, 0 messages with their replies), "
        "readable by you only." in out
    )
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert json.loads(written.read_text(encoding="utf-8"))["memories"][0]["text"] == "Aime le thé"


def test_git_ignores_the_exports_folder() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "exports/" in ignored and "data/" in ignored


async def test_names_that_differ_by_case_or_spaces_are_one_person(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _runtime(tmp_path, ollama) as runtime:
        await _typed(runtime, "marie", ["/remember J'ai un chat nommé Félix"])
        for name in ("Marie", " marie ", "MARIE"):
            out = await _typed(runtime, name, ["/memories"])
            assert "A un chat nommé Félix" in out, name  # stored in the third person
        # Someone else entirely sees nothing of hers.
        assert "No memories here." in await _typed(runtime, "Paul", ["/memories"])


async def test_memories_under_an_earlier_spelling_are_said_and_can_be_brought_over(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """A database from before: "Marie" and "marie" were two people. "marie" keeps her id (her
    name is its own key); "Marie"'s memories stay under their old id, and the chat says how to
    bring them over, rather than losing them silently."""
    config = _config(tmp_path, ollama.url)
    async with _runtime(tmp_path, ollama) as runtime:
        await _remember(runtime, spelled_user_id("Marie"), "Aime le thé vert")
        await _remember(runtime, spelled_user_id("marie"), "Joue du violoncelle")
        out = await _typed(runtime, "Marie", ["/memories"])
    old = spelled_user_id("Marie")
    assert "Joue du violoncelle" in out and "Aime le thé vert" not in out
    assert "Memories saved as 'Marie' before names ignored case and spaces are kept apart" in out
    assert f"echo-bot export --user-id {old} old.json" in out
    # Followed word for word, the advice brings them over.
    dump = tmp_path / "old.json"
    code, _, err = await _run("export", "--config", str(config), "--user-id", str(old), str(dump))
    assert code == 0, err
    code, said, err = await _run("import", "--config", str(config), "--user", "marie", str(dump))
    assert code == 0 and said.strip() == "Imported 1 memory: 1 new memory.", err
    async with _runtime(tmp_path, ollama) as runtime:
        out = await _typed(runtime, "Marie", ["/memories"])
    assert "Aime le thé vert" in out and "Joue du violoncelle" in out


async def test_export_of_nobody_says_so_and_fails(tmp_path: Path, ollama: FakeOllama) -> None:
    config = _config(tmp_path, ollama.url)
    async with _runtime(tmp_path, ollama) as runtime:
        await _typed(runtime, "Marie", ["/remember Aime le thé"])
    dump = tmp_path / "nobody.json"
    code, out, err = await _run("export", "--config", str(config), "--user", "Nobody", str(dump))
    nobody = terminal_user_id("Nobody")
    assert code == 1 and out == "" and not dump.exists()
    assert err.splitlines() == [
        f"echo-bot: nothing is stored about 'Nobody' (user id {nobody}): no such person here"
    ]
    code, _, _ = await _run("export", "--config", str(config), "--user", "MARIE", str(dump))
    assert code == 0 and "Aime le thé" in dump.read_text(encoding="utf-8")


async def test_history_pages_and_says_what_is_hidden(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    _script(ollama)
    monkeypatch.setattr(terminal_module, "HISTORY_PAGE", 3)
    words = ["un", "deux", "trois", "quatre"]  # 8 messages: pages of 3, 3 and 2
    marie = terminal_user_id("Marie")
    async with _runtime(tmp_path, ollama) as runtime:
        out = await _typed(
            runtime,
            "Marie",
            [*(f"Mon mot est {w}." for w in words), "/history", "/history 2", "/history 3",
             "/history 4", "/history 0"],
        )  # fmt: skip
        # The memory learned from the first message, on page 3: the hint after /forget says
        # where the message it names is.
        first = min(m.id for m in await manage.list_memories(runtime.store, marie))
        forgot = await _typed(runtime, "Marie", [f"/forget {first}"])
    assert "/history 2 and on the older ones." in " ".join(forgot.split())
    pages = out.split("History, ")[1:]
    assert len(pages) == 3
    first, second, third = pages
    assert "Noté : quatre." in first and "Mon mot est un." not in first
    assert "Older messages are not shown: /history 2." in first
    assert "Mon mot est trois." in second and "Older messages are not shown: /history 3." in second
    assert "Mon mot est un." in third and "Older messages" not in third
    # Every message is on exactly one page.
    ids = [line.split()[0] for page in pages for line in page.splitlines() if line[:1] == "#"]
    assert len(ids) == len(set(ids)) == 8
    assert "No page 4: fewer messages than that." in out
    assert "0 is not an id" in out


async def test_answers_say_what_happened(tmp_path: Path, ollama: FakeOllama) -> None:
    _script(ollama)
    async with _runtime(tmp_path, ollama) as runtime:
        marie = terminal_user_id("Marie")
        await _remember(runtime, marie, "Aime le thé", scope=Scope.STORY)
        [tea] = await manage.list_memories(runtime.store, marie)
        # Pinned, it is served by the next turn: then no memory is left never served.
        out = await _typed(
            runtime,
            "Marie",
            [f"/pin {tea.id}", "Bonjour !", "/memories never", "/memories café", "/remember",
             "/remember kind:rule", f"/pin {tea.id}", f"/unpin {tea.id}", f"/unpin {tea.id}",
             "/memories", "/privacy", "/help"],
        )  # fmt: skip
    lines = out.splitlines()
    assert "Every memory of yours has been used at least once." in lines
    assert "None of your memories has the words 'café'." in lines
    usage = (
        "write /remember TEXT [kind:fact|preference|promise|episode|rule] [scope:global|story] "
        "(1 to 500 characters)."
    )
    assert lines.count(usage) == 2
    assert [line for line in lines if line.endswith((f"#{tea.id}.", "pinned."))] == [
        f"Pinned #{tea.id}.",
        f"#{tea.id} was already pinned.",
        f"Unpinned #{tea.id}.",
        f"#{tea.id} was not pinned.",
    ]
    # In the terminal's terms: no conversation id, no servers and DMs to decode.
    [line] = [line for line in lines if "Aime le thé" in line]
    assert "used in this chat" in line and "conversation" not in line
    assert "What you say in this chat is used in this chat" in out
    assert "full:true lists each history message on a line of its own" in " ".join(out.split())


async def test_importing_a_file_twice_changes_nothing_and_a_newer_version_is_refused(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    async with _runtime(tmp_path, ollama) as runtime:
        await _typed(
            runtime,
            "Léa",
            ["/remember Appelle-moi Lé, pas Léa kind:rule", "/remember Aime le thé",
             f"/export {tmp_path / 'lea.json'}"],
        )  # fmt: skip
    dump = str(tmp_path / "lea.json")
    code, out, err = await _run("import", "--config", str(config), "--user", "Lé", dump)
    assert code == 0 and out.strip() == "Imported 2 memories: 2 new memories.", err
    code, out, _ = await _run("import", "--config", str(config), "--user", "Lé", dump)
    assert out.strip() == "Nothing to import: you already have the file's 2 memories as they are."
    async with _runtime(tmp_path, ollama) as runtime:
        mine = await manage.list_memories(runtime.store, terminal_user_id("Lé"))
    assert sorted(m.text for m in mine) == ["Aime le thé", "Appelle-moi Lé, pas Léa"]

    data = json.loads(Path(dump).read_text(encoding="utf-8"))
    Path(dump).write_text(json.dumps({**data, "version": 99}), encoding="utf-8")
    code, out, err = await _run("import", "--config", str(config), "--user", "Zoé", dump)
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"echo-bot: {dump}: export version 99 is newer than this Écho reads (up to 2): "
        "update Écho, then import it"
    ]


async def test_many_people_at_once_each_gets_their_own_pages_pins_and_export(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six people (two spellings each of three names) type at once, with random latencies:
    each spelling reaches its person's memories and only theirs."""
    _script(ollama)
    ollama.chaos = Chaos(seed=29, max_delay=0.03, failure_rate=0.0)
    monkeypatch.setattr(terminal_module, "HISTORY_PAGE", 2)
    rng = random.Random(29)
    words = {"Alice": "phare", "Bruno": "lune", "Chloé": "vent"}
    async with _runtime(tmp_path, ollama) as runtime:

        async def one(name: str, spelling: str) -> str:
            await asyncio.sleep(rng.uniform(0, 0.03))
            word = words[name]
            return await _typed(
                runtime,
                spelling,
                [f"Mon mot est {word}.", "/history", "/history 2",
                 f"/export {tmp_path / spelling.strip()}.json"],
            )  # fmt: skip

        spellings = [(n, s) for n in words for s in (n, f" {n.upper()} ")]
        outs = await asyncio.gather(*(one(n, s) for n, s in spellings))
        for (name, spelling), out in zip(spellings, outs, strict=True):
            others = [w for n, w in words.items() if n != name]
            assert f"Noté : {words[name]}." in out and not any(w in out for w in others)
            data = json.loads((tmp_path / f"{spelling.strip()}.json").read_text("utf-8"))
            assert data["user_id"] == terminal_user_id(name)
            assert {m["text"] for m in data["memories"]} == {f"Son mot est {words[name]}"}
