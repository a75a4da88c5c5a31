"""No fact changed or brought back silently, through conversations: the loopback LLM reflects as a
capable model would (it notes what was said and may name a memory it was shown as replaced); the
code decides. A merge keeps the wording it rewrote; a replacement the code refuses never rewrites
its target another way; a memory forgotten while a reflection shown it is in flight never comes
back; a person's edit made while a reflection is in flight stands. On the `store` fixture's
backend (make test-pg: PostgreSQL)."""

from __future__ import annotations

import ast
import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.render import render_versions
from memory import Engine, Incoming, manage
from memory.backends.chat import OllamaChat
from memory.backends.embedders import OllamaEmbedder
from memory.manage import forgetting
from memory.manage import versions as manage_versions
from memory.model import Scope
from memory.store import Store
from memory.store.tables import counters, memories, memory_versions
from memory.vectors.indexer import Indexer
from memory.write.worker import REASKS, ReflectionWorker
from tests.fakes.canary import reflection_request, stored
from tests.fakes.ollama import FakeOllama

STORY, GUILD = 10, "111"
ROOT = Path(__file__).resolve().parents[3]
# "... #N": the model names memory N as replaced, whatever it was shown. "... COPY": the model
# copies the first memory it was shown into a new one that replaces it (as a model that mixes
# what it read with what was said does).
TARGET = re.compile(r"\s*#(\d+)")
COPY = " COPY"
# What a person says -> the memory a reflection notes.
NOTES = {
    "j'ai un chat, félix": "A un chat nommé Félix",
    "mon chat félix est roux et dort toute la journée": (
        "A un chat nommé Félix, roux, qui dort toute la journée"
    ),
    "il est tout roux et dort toute la journée": (
        "A un chat nommé Félix, roux, qui dort toute la journée"
    ),
    "j'habite à lyon": "Habite à Lyon",
    "je vis à marseille maintenant": "Habite à Marseille",
}


def _reflect(payload: dict[str, Any]) -> str:
    asked = reflection_request(payload)
    if asked is None:
        return "C'est noté."
    said: str = asked["user_message"]
    forced = TARGET.search(said)
    plain = TARGET.sub("", said).replace(COPY, "").strip()
    text = NOTES.get(plain.casefold(), plain)
    replaces = int(forced.group(1)) if forced else 0
    shown = asked.get("memories") or []
    if COPY in said and shown:
        text, replaces = f"{shown[0]['text']}, en résumé", int(shown[0]["id"])
    elif not forced and "marseille" in plain.casefold():
        replaces = next((int(m["id"]) for m in shown if "Lyon" in m["text"]), 0)
    item = {"text": text, "kind": "fact", "scope": "global", "confidence": 0.95}
    return json.dumps({"memories": [item | {"replaces": replaces}], "summary": "On parle."})


def _setup(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, *, vectors: bool = False
) -> tuple[Engine, ReflectionWorker]:
    ollama.chat_reply = _reflect
    chat = OllamaChat(http, ollama.url, "m")
    embedder = OllamaEmbedder(http, ollama.url, "nomic-embed-text") if vectors else None
    engine = Engine(store, embedder=embedder, chat=chat)
    worker = ReflectionWorker(store, chat, character_name="Écho", deadline=5.0)
    return engine, worker


_ids = iter(range(1, 10**6))


async def _turn(engine: Engine, user: int, text: str) -> str:
    source = f"t:{user}:{next(_ids)}"
    await engine.turn(Incoming(source, user, f"p{user}", STORY, GUILD, text))
    await engine.flush_pending()
    return source


async def _say(engine: Engine, worker: ReflectionWorker, user: int, text: str) -> str:
    source = await _turn(engine, user, text)
    assert await worker.reflect_now(source) is not None
    return source


async def _count(store: Store, name: str) -> int:
    return (await counters.read_all(store)).get(name, 0)


async def _texts(store: Store, user: int) -> list[str]:
    return sorted(m.text for m in await memories.list_for_user(store, user))


# --- a merge keeps what it rewrote -----------------------------------------------------------


async def test_a_merge_keeps_the_wording_it_rewrote_and_restore_brings_it_back(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    engine, worker = _setup(store, ollama, http)
    await _say(engine, worker, 1, "J'ai un chat, Félix")
    [felix] = await memories.list_for_user(store, 1)
    await _say(engine, worker, 1, "Mon chat Félix est roux et dort toute la journée")
    [now] = await memories.list_for_user(store, 1)
    assert (now.id, now.text) == (
        felix.id,
        NOTES["mon chat félix est roux et dort toute la journée"],
    )
    [before] = await memory_versions.history(store, 1, now.id)
    assert (before.text, before.ended_by) == ("A un chat nommé Félix", "merge")
    shown = render_versions(await manage_versions.history(store, 1, now.id))
    assert "merged with a reworded copy" in shown and "never changed" not in shown
    restored = await manage_versions.restore(store, 1, now.id)
    assert restored.text == "A un chat nommé Félix"


# --- a refused replacement never rewrites its target ------------------------------------------


async def test_a_refused_replacement_leaves_its_target_as_it_was(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    engine, worker = _setup(store, ollama, http)
    # Written by the person, never shown to a reflection: a proposal naming it is refused as
    # not shown, and the richer variant it says may not rewrite it through the dedup either.
    written = await manage.remember(store, user_id=1, story_id=STORY, origin=GUILD,
                                    text="A un chat nommé Félix", now=1.0)  # fmt: skip
    assert written.memory_id is not None
    felix = await memories.get(store, 1, written.memory_id)
    assert felix is not None
    # Newer memories fill the reply's selection: the oldest, unnamed in the message, is left out.
    for n in range(30):
        await manage.remember(store, user_id=1, story_id=STORY, origin=GUILD,
                              text=f"Souvenir {n} de la collection", now=2.0 + n)  # fmt: skip
    await _say(engine, worker, 1, f"Il est tout roux et dort toute la journée #{felix.id}")
    assert await _count(store, "supersession_refused:not_shown") == 1
    assert await _count(store, "merge_refused:kept") == 1
    kept = await memories.get(store, 1, felix.id)
    assert kept is not None and kept.text == "A un chat nommé Félix"
    assert await memory_versions.history(store, 1, felix.id) == []
    felixes = [t for t in await _texts(store, 1) if "Félix" in t]
    assert felixes == sorted(
        ["A un chat nommé Félix", NOTES["mon chat félix est roux et dort toute la journée"]]
    )


# --- forgetting holds against a reflection in flight -----------------------------------------


def _hold_reflections(ollama: FakeOllama) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold every reflection call until `go` is set; `held` is set when one waits."""
    held, go = asyncio.Event(), asyncio.Event()

    async def pause(payload: dict[str, Any]) -> None:
        if reflection_request(payload) is not None:
            held.set()
            await go.wait()

    ollama.pause = pause
    return held, go


async def test_a_memory_forgotten_while_a_reflection_shown_it_is_in_flight_never_comes_back(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    canary = "XQZCANARY7301"
    engine, worker = _setup(store, ollama, http, vectors=True)
    written = await manage.remember(store, user_id=1, story_id=STORY, origin=GUILD,
                                    text=f"Son code secret est {canary}", now=1.0)  # fmt: skip
    secret_id = written.memory_id
    assert secret_id is not None
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    # The reply uses it (a keyword hit), so the reflection is shown it, and copies it.
    source = await _turn(engine, 1, f"Tu te souviens de mon code secret ?{COPY}")
    held, go = _hold_reflections(ollama)
    reflecting = asyncio.ensure_future(worker.reflect_now(source))
    await held.wait()
    gone = await forgetting.forget_memory(store, 1, secret_id)
    assert gone is not None
    go.set()
    assert await reflecting is None  # nothing written: given back to be asked again
    assert await worker.reflect_now(source) is not None  # asked again, shown it no longer
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    assert all(canary not in t for t in await _texts(store, 1))
    assert await stored(store, tmp_path, canary) == 0


# --- the person's word wins ------------------------------------------------------------------


async def test_an_edit_made_while_a_reflection_is_in_flight_stands(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    engine, worker = _setup(store, ollama, http)
    await _say(engine, worker, 1, "J'habite à Lyon")
    [lyon] = await memories.list_for_user(store, 1)
    source = await _turn(engine, 1, "Je vis à Marseille maintenant")
    held, go = _hold_reflections(ollama)
    reflecting = asyncio.ensure_future(worker.reflect_now(source))
    await held.wait()  # shown « Habite à Lyon », proposing Marseille in its place
    await manage_versions.edit(store, 1, lyon.id, "Habite à Bordeaux depuis hier")
    go.set()
    assert await reflecting is not None
    assert await _count(store, "supersession_refused:stale") == 1
    edited = await memories.get(store, 1, lyon.id)
    assert edited is not None and edited.text == "Habite à Bordeaux depuis hier"
    # The proposal went the normal way, against the current wording: a memory of its own.
    assert "Habite à Marseille" in await _texts(store, 1)
    assert [v.ended_by for v in await memory_versions.history(store, 1, lyon.id)] == ["edit"]


# --- many people at once ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
async def test_many_people_merge_replace_edit_and_forget_at_once(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, seed: int
) -> None:
    engine, worker = _setup(store, ollama, http)
    rng = random.Random(seed)
    people = list(range(100, 112))
    roles = {p: ("merge", "replace", "edit", "forget")[i % 4] for i, p in enumerate(people)}

    async def pause() -> None:
        await asyncio.sleep(rng.uniform(0, 0.02))

    async def person(user: int) -> None:
        await pause()
        if roles[user] == "merge":
            await _say(engine, worker, user, "J'ai un chat, Félix")
            await pause()
            await _say(engine, worker, user, "Mon chat Félix est roux et dort toute la journée")
            return
        await _say(engine, worker, user, "J'habite à Lyon")
        [lyon] = await memories.list_for_user(store, user)
        await pause()
        if roles[user] == "replace":
            await _say(engine, worker, user, "Je vis à Marseille maintenant")
        elif roles[user] == "edit":
            await manage_versions.edit(store, user, lyon.id, "Habite à Bordeaux")
        else:
            await forgetting.forget_memory(store, user, lyon.id)

    await asyncio.gather(*(person(p) for p in people))
    for user in people:
        mine = await memories.list_for_user(store, user)
        chains = {m.text: [v.ended_by for v in await memory_versions.history(store, user, m.id)]
                  for m in mine}  # fmt: skip
        expected = {
            "merge": {NOTES["mon chat félix est roux et dort toute la journée"]: ["merge"]},
            "replace": {"Habite à Marseille": ["reflection"]},
            "edit": {"Habite à Bordeaux": ["edit"]},
            "forget": {},
        }[roles[user]]
        assert chains == expected, (user, roles[user])


# --- history bounded -------------------------------------------------------------------------


async def test_a_memory_keeps_only_its_newest_versions_and_says_how_many_were_dropped(
    store: Store,
) -> None:
    written = await manage.remember(store, user_id=1, story_id=STORY, origin=GUILD,
                                    text="Wording 0", now=1.0)  # fmt: skip
    first = await memories.get(store, 1, written.memory_id or 0)
    assert first is not None
    extra = 7
    for n in range(1, memory_versions.MAX_VERSIONS + extra + 1):

        async def change(tx: Any, n: int = n) -> None:
            memory = await memory_versions.get_in(tx, 1, first.id)
            assert memory is not None
            await memory_versions.supersede(tx, memory, text=f"Wording {n}", scope=Scope.GLOBAL,
                                     confidence=1.0, ended_by="reflection",
                                     exchange_id=f"t:1:{n}", now=1.0 + n)  # fmt: skip

        await store.transact(change)
    chain = await manage_versions.history(store, 1, first.id)
    assert len(chain.earlier) == memory_versions.MAX_VERSIONS
    assert chain.dropped == extra
    # The newest are the ones kept: the version just before the current one is there.
    assert chain.earlier[-1].text == f"Wording {memory_versions.MAX_VERSIONS + extra - 1}"
    assert chain.earlier[0].text == f"Wording {extra}"
    assert f"{extra} older versions no longer kept" in render_versions(chain)
    # Another person's id answers as missing: nothing of the first's history shows.
    assert await memory_versions.dropped(store, 2, first.id) == 0
    await forgetting.forget_memory(store, 1, first.id)
    assert await store.fetchall("SELECT memory_id FROM memory_versions_dropped") == []


# --- one way a wording changes ---------------------------------------------------------------


def _function_calls(path: Path) -> list[tuple[str, str]]:
    """(enclosing function, called name) for every call in a module."""
    tree = ast.parse(path.read_text())
    found: list[tuple[str, str]] = []

    def walk(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = (
                child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else where
            )
            if isinstance(child, ast.Call):
                func = child.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                found.append((where, name))
            walk(child, inner)

    walk(tree, "")
    return found


def test_only_one_path_rewrites_a_memorys_wording() -> None:
    """Every statement that sets memories.text, and every caller of the function that runs it,
    is listed here: a new writer fails this test until it goes through memory_versions.supersede."""
    setters = []
    for path in sorted((ROOT / "memory").rglob("*.py")):
        source = path.read_text()
        for match in re.finditer(r"UPDATE\s+memories\s+SET\s+([^\"']*)", source):
            if re.search(r"\btext\s*=", match.group(1)):
                setters.append(path.relative_to(ROOT).as_posix())
    assert setters == ["memory/store/tables/memories.py"]
    callers = {
        (path.relative_to(ROOT).as_posix(), where)
        for path in sorted((ROOT / "memory").rglob("*.py"))
        for where, name in _function_calls(path)
        if name == "rewrite" and "memories" in path.read_text()
    }
    assert callers == {("memory/store/tables/memory_versions.py", "supersede")}, callers


async def test_forgetting_what_a_reflection_is_shown_again_and_again_costs_its_attempts(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """Each time the reflection is asked, the person forgets one of the memories it was shown:
    it is asked again at once REASKS times, then each time is a failed attempt (its back-off),
    so a worker is never held asking the model forever."""
    engine, worker = _setup(store, ollama, http)
    for n in range(8):
        await manage.remember(store, user_id=1, story_id=STORY, origin=GUILD,
                              text=f"Souvenir {n} du jardin", now=1.0 + n)  # fmt: skip
    source = await _turn(engine, 1, "Tu te souviens du jardin ?")

    async def forget_one(payload: dict[str, Any]) -> None:
        asked = reflection_request(payload)
        if asked is not None and asked.get("memories"):
            await forgetting.forget_memory(store, 1, int(asked["memories"][0]["id"]))

    ollama.pause = forget_one
    for _ in range(REASKS):
        assert await worker.reflect_now(source) is None
        [(attempts,)] = await store.fetchall(
            "SELECT attempts FROM outbox WHERE exchange_id = ?", (source,)
        )
        assert attempts == 0  # given back, asked again at once
    assert await worker.reflect_now(source) is None
    [(attempts, due)] = await store.fetchall(
        "SELECT attempts, next_attempt_at FROM outbox WHERE exchange_id = ?", (source,)
    )
    assert attempts == 1 and due is not None  # now a failed attempt, retried later
