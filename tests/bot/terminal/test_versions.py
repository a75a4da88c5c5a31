"""Correcting a memory in the terminal: /edit ID TEXT makes a new version, /memories shows that
it replaces one, /memories history ID shows the chain, /restore ID undoes it; another person's
id answers like a missing one. Through Terminal.run with scripted input."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.terminal.chat import terminal_user_id
from memory import manage
from memory.store.tables import memories, memory_versions
from tests.bot.terminal.test_commands import _remember, _runtime, _typed
from tests.bot.terminal.test_live import _script
from tests.fakes.ollama import FakeOllama


async def test_edit_history_and_restore_in_the_terminal(tmp_path: Path, ollama: FakeOllama) -> None:
    _script(ollama)
    marie, other = terminal_user_id("Marie"), terminal_user_id("Paul")
    async with _runtime(tmp_path, ollama) as runtime:
        await _remember(runtime, marie, "Habite à Lyon")
        await _remember(runtime, marie, "Joue du violoncelle")
        await _remember(runtime, other, "Habite à Brest")
        mine = {m.text: m.id for m in await memories.list_for_user(runtime.store, marie)}
        lyon, cello = mine["Habite à Lyon"], mine["Joue du violoncelle"]
        [brest] = await memories.list_for_user(runtime.store, other)
        out = await _typed(runtime, "Marie", [
            f"/edit {lyon} Habite à Paris depuis novembre",
            "/memories",
            f"/memories history {lyon}",
            f"/edit {brest.id} Habite à Nice",
            f"/edit {cello} Joue du violoncelle",  # unchanged
            f"/edit {lyon} Joue du violoncelle",  # what another memory says: the dedup
        ])  # fmt: skip
        assert f"#{lyon} now says: Habite à Paris depuis novembre" in out
        assert "(current since" in out
        assert "written by you; edited by you) — Habite à Lyon" in out
        assert f"No memory #{brest.id}." in out  # another's id: like a missing one
        assert f"memory #{cello} already says this.\nmemory #{cello} already says this." in out
        [paul] = await memories.list_for_user(runtime.store, other)
        assert paul.text == "Habite à Brest"
        chain = await memory_versions.history(runtime.store, marie, lyon)
        assert [v.text for v in chain] == ["Habite à Lyon"]
        out = await _typed(runtime, "Marie", [f"/restore {lyon}", f"/restore {brest.id}"])
        assert f"#{lyon} is back to: Habite à Lyon" in out
        assert f"No earlier version of memory #{brest.id}." in out
        assert (await manage.get(runtime.store, marie, lyon)).text == "Habite à Lyon"


async def test_many_people_edit_at_once_each_their_own(tmp_path: Path, ollama: FakeOllama) -> None:
    _script(ollama)
    names = [f"P{n}" for n in range(6)]
    async with _runtime(tmp_path, ollama) as runtime:
        for name in names:
            await _remember(runtime, terminal_user_id(name), f"Habite à Lyon, dit {name}")
        ids = {
            name: (await memories.list_for_user(runtime.store, terminal_user_id(name)))[0].id
            for name in names
        }
        outs = await asyncio.gather(*(
            _typed(runtime, name, [f"/edit {ids[name]} Habite à Paris, dit {name}"])
            for name in names
        ))  # fmt: skip
        for name, out in zip(names, outs, strict=True):
            assert f"#{ids[name]} now says" in out
            [now] = await memories.list_for_user(runtime.store, terminal_user_id(name))
            assert now.text == f"Habite à Paris, dit {name}"
            chain = await memory_versions.history(runtime.store, terminal_user_id(name), now.id)
            assert [v.text for v in chain] == [f"Habite à Lyon, dit {name}"]
