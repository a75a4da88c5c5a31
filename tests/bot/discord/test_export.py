"""A person's own data: /export gives them, privately, everything stored about them as a JSON
file; an import restores pins and dates, and a bad file writes nothing."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory import Engine, Incoming, manage
from memory.backends.chat import OllamaChat
from memory.errors import InvalidInput
from memory.manage import export, versions
from memory.store import Store, open_store
from memory.store.tables import memory_dates
from memory.write.worker import ReflectionWorker
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, _bot_with, _command, _opt, _say
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama
from tests.memory import test_dates_turn as dated

CAROL = 1003
ALICES, BOBS = "ALICANARY1111", "BOBCANARY2222"


def _exported(rec: fakes.Recorder, who: int) -> tuple[str, dict[str, Any]]:
    """The text and the attached file of this person's /export answer."""
    for sent in reversed(rec.sent):
        name = f"echo-export-{who}.json"
        if name in sent.files:
            data = sent.payload.get("data", sent.payload)
            assert data["flags"] == fakes.EPHEMERAL
            return str(data["content"]), json.loads(sent.files[name])
    raise AssertionError(f"no export for {who}")


async def test_export_gives_a_person_everything_about_them_and_nothing_else(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    canary.script(ollama)
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await asyncio.gather(
            _say(echo, channel, ALICE, f"Mon code de coffre est {ALICES}"),
            _say(echo, channel, BOB, f"Mon code de coffre est {BOBS}"),
        )
        await asyncio.gather(*getattr(echo.get_cog("Conversation"), "_background", ()))
        await echo.runtime.worker.run_due()
        await _command(echo, "remember", ALICE, options=[_opt("text", "Aime le thé vert", 3)])
        [tea] = await manage.list_memories(echo.runtime.store, ALICE, query="thé")
        await _command(echo, "pin", ALICE, options=[_opt("memory", tea.id)])

        await asyncio.gather(  # both export while Carol talks
            _command(echo, "export", ALICE),
            _command(echo, "export", BOB),
            _say(echo, channel, CAROL, "Bonjour à tous"),
        )
        said, data = _exported(rec, ALICE)
        assert said.startswith("Everything I store about you: 2 memories, 1 message (with")
        assert data["user_id"] == ALICE and BOBS not in json.dumps(data)
        memories = {m["text"]: m for m in data["memories"]}
        pinned = memories["Aime le thé vert"]
        assert pinned["pinned"] and pinned["kind"] == "fact" and pinned["scope"] == "global"
        assert pinned["served"] == f"only in server {fakes.GUILD_ID}"
        learned = memories[f"A pour code de coffre {ALICES}"]
        assert learned["created_at"] > 0 and learned["served_count"] >= 0
        [message] = data["messages"]
        assert message["text"] == f"Mon code de coffre est {ALICES}"
        assert message["reply"] == f"Noté : {ALICES}."
        derived = data["derived"]
        assert [a["text"] for a in derived["anchors"]] == [
            f"Le coffre de user{ALICE} s'ouvre avec {ALICES}"
        ]
        assert [p["topic"] for p in derived["positions"]] == [f"coffre {ALICES}"]
        assert derived["state_changes"][0]["field"] == "mood"
        _, bobs = _exported(rec, BOB)
        assert ALICES not in json.dumps(bobs) and len(bobs["memories"]) == 1


async def test_import_restores_pins_and_dates_and_goes_through_dedup(
    tmp_path: Path, store: Store
) -> None:
    async def person(user: int, texts: list[str]) -> None:
        for n, text in enumerate(texts):
            await manage.remember(store, user_id=user, story_id=10, origin="111", text=text,
                                  now=1_000.0 + n)  # fmt: skip

    await asyncio.gather(person(1, ["Aime le thé", "A un chat"]), person(2, ["Joue du cello"]))
    [cat] = await manage.list_memories(store, 1, query="chat")
    await manage.set_pinned(store, 1, cat.id, True)
    exports = await asyncio.gather(
        *(export.export(store, u, default_served="where_learned") for u in (1, 2))
    )
    async with await open_store(tmp_path / "other.sqlite3") as other:
        done = await asyncio.gather(
            *(export.import_memories(other, 40 + n, e) for n, e in enumerate(exports))
        )
        assert done == [{"created": 2}, {"created": 1}]
        again = await export.import_memories(other, 40, exports[0])
        assert again == {"unchanged": 2}
        restored = {m.text: m for m in await manage.list_memories(other, 40)}
        assert restored["A un chat"].pinned and not restored["Aime le thé"].pinned
        assert restored["Aime le thé"].created_at == 1_000.0
        assert restored["A un chat"].updated_at == 1_001.0
        assert restored["A un chat"].origin == "111"


async def test_a_second_import_of_the_same_file_writes_nothing_rules_included(
    store: Store,
) -> None:
    """Rules stay out of dedup (a wish is never merged into a fact): before, each import of the
    same file added the rule again."""
    rule = {"text": "Appelle-moi Lé, pas Léa", "kind": "rule", "scope": "global", "origin": "dm"}
    fact = {"text": "Aime le thé", "kind": "fact", "scope": "story", "story_id": 7, "origin": "5"}
    data = {"version": 2, "memories": [rule, fact]}
    assert await export.import_memories(store, 1, data) == {"created": 2}
    before = await manage.list_memories(store, 1)
    again = await asyncio.gather(*(export.import_memories(store, 1, data) for _ in "abc"))
    assert again == [{"unchanged": 2}] * 3
    assert await manage.list_memories(store, 1) == before
    # The same text in another place, or of another kind, is another memory.
    moved = {"version": 2, "memories": [{**rule, "kind": "preference"}, {**fact, "story_id": 8}]}
    assert await export.import_memories(store, 1, moved) == {"created": 2}


async def test_an_export_newer_than_the_code_is_refused_whole(store: Store) -> None:
    good = {"text": "Aime le thé", "kind": "fact", "scope": "global"}
    for version, said in (
        (99, "export version 99 is newer than this Écho reads (up to 2): update Écho, then "
             "import it"),
        ("2", "version '2' is not an export version (a whole number)"),
    ):  # fmt: skip
        with pytest.raises(InvalidInput) as raised:
            await export.import_memories(store, 1, {"version": version, "memories": [good]})
        assert str(raised.value) == said
    assert await manage.list_memories(store, 1) == []


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ({"text": "", "kind": "fact", "scope": "global"},
         "memories[1]: text must be 1 to 500 characters"),
        ({"text": "x", "kind": "fact", "scope": "story"},
         "memories[1]: story_id must be a 64-bit integer (required for a story memory)"),
        ({"text": "x", "kind": "fact", "scope": "global", "origin": "guild"},
         'memories[1]: origin must be "dm" or a server id'),
        ({"text": "x", "kind": "fact", "scope": "global", "confidence": float("inf")},
         "memories[1]: confidence must be a number from 0 to 1"),
        ({"text": "x", "kind": "fact", "scope": "global", "created_at": -1},
         "memories[1]: created_at must be a date in seconds since 1970"),
        ({"text": "x", "kind": "fact", "scope": "global", "pinned": 1},
         "memories[1]: pinned must be true or false"),
        ({"text": "x", "kind": "fact", "scope": "global",
          "dates": [{"first_day": "2026-12-08", "last_day": "2026-12-07"}]},
         "memories[1].dates[0]: first_day and last_day must be days (YYYY-MM-DD), in order"),
        ({"text": "x", "kind": "fact", "scope": "global",
          "dates": [{"first_day": "20261208", "last_day": "2026-12-08"}]},
         "memories[1].dates[0]: first_day and last_day must be days (YYYY-MM-DD), in order"),
        ({"text": "x", "kind": "fact", "scope": "global", "dates": "2026-12-08"},
         "memories[1]: dates must be a list"),
    ],
)  # fmt: skip
async def test_a_bad_file_names_the_item_and_writes_nothing(
    store: Store, item: dict[str, Any], said: str
) -> None:
    good = {"text": "Aime le thé", "kind": "fact", "scope": "global", "origin": "dm"}
    with pytest.raises(InvalidInput) as raised:
        await export.import_memories(store, 1, {"memories": [good, item]})
    assert str(raised.value) == said
    assert await manage.list_memories(store, 1) == []


async def test_the_export_carries_a_memorys_history_and_the_import_restores_it(
    tmp_path: Path, store: Store
) -> None:
    async def person(user: int) -> None:
        await manage.remember(store, user_id=user, story_id=10, origin="111",
                              text=f"Habite à Lyon, dit {user}", now=1_000.0)  # fmt: skip
        [memory] = await manage.list_memories(store, user)
        await versions.edit(store, user, memory.id, f"Habite à Paris, dit {user}",
                                   now=2_000.0)  # fmt: skip

    await asyncio.gather(person(1), person(2))
    data = await export.export(store, 1, default_served="where_learned")
    [item] = data["memories"]
    assert item["text"] == "Habite à Paris, dit 1"
    [earlier] = item["history"]
    assert (earlier["text"], earlier["valid_from"], earlier["valid_until"]) == (
        "Habite à Lyon, dit 1", 1_000.0, 2_000.0,
    )  # fmt: skip
    assert earlier["ended_by"] == "edit"
    async with await open_store(tmp_path / "other.sqlite3") as other:
        assert await export.import_memories(other, 40, data) == {"created": 1}
        [memory] = await manage.list_memories(other, 40)
        chain = await versions.history(other, 40, memory.id)
        assert [(v.text, v.valid_from, v.valid_until) for v in chain.earlier] == [
            ("Habite à Lyon, dit 1", 1_000.0, 2_000.0)
        ]
        # A file whose history is not in order is refused whole.
        earlier["valid_until"] = 10.0
        with pytest.raises(InvalidInput, match=r"memories\[0\]\.history\[0\]"):
            await export.import_memories(other, 41, data)
        assert await manage.list_memories(other, 41) == []


async def test_the_export_carries_the_days_a_memory_means_and_the_import_restores_them(
    store: Store, database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """Said on Monday, "tomorrow" means Tuesday: the export says so, and the import into another
    database keeps it; several people talk, are reflected on, exported and imported at once."""
    dated._chat(ollama)
    clock = dated.Clock(dated.MONDAY)
    chat = OllamaChat(http, ollama.url, "m")
    engine = Engine(store, embedder=None, chat=chat, clock=clock, zone=dated.PARIS)
    workers = [ReflectionWorker(store, chat, character_name="Écho", clock=clock,
                                zone=dated.PARIS, name=f"w{n}") for n in range(2)]  # fmt: skip
    plans = {1: "I have a job interview tomorrow", 2: "Seeing my dentist next Friday",
             3: "Je déménage dans trois jours"}  # fmt: skip
    meant = {1: date(2026, 12, 8), 2: date(2026, 12, 11), 3: date(2026, 12, 10)}
    await asyncio.gather(*(engine.turn(Incoming(f"t:{p}", p, f"p{p}", 10 + p, "111", said))
                           for p, said in plans.items()))  # fmt: skip
    clock.now += 120

    async def drain(worker: ReflectionWorker) -> None:
        while await worker.run_due():
            pass

    await asyncio.gather(*(drain(w) for w in workers))
    files = await asyncio.gather(
        *(export.export(store, p, default_served="where_learned") for p in plans)
    )
    for p, data in zip(plans, files, strict=True):
        [item] = data["memories"]
        day = meant[p].isoformat()
        assert item["dates"] == [{"first_day": day, "last_day": day}], p
    async with await open_store(database) as other:
        done = await asyncio.gather(
            *(export.import_memories(other, 40 + p, f) for p, f in zip(plans, files, strict=True))
        )
        assert done == [{"created": 1}] * len(plans)
        for p in plans:
            [memory] = await manage.list_memories(other, 40 + p)
            assert await memory_dates.of(other, memory.id) == [(meant[p], meant[p])], p


async def test_export_names_the_character_of_each_message_while_memories_are_shared(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """With `[memory] shared_between_characters`, a message to Brann is kept under the
    person's own id, in Brann's story: the export names Brann for it, not the home character."""
    canary.script(ollama)
    cast = [
        {"key": "nyx", "name": "Nyx", "persona": "Tu es Nyx.", "default": True},
        {"key": "brann", "name": "Brann", "persona": "Tu es Brann.", "channels": [20]},
    ]
    shared = {"shared_between_characters": True}
    async with _bot_with(tmp_path, ollama, characters=cast, memory=shared,
                         discord={"channels": [CHANNEL, 20]}) as (echo, rec):  # fmt: skip
        await asyncio.gather(
            _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, f"Mon code est {ALICES}"),
            _say(echo, fakes.text_channel(echo, 20), ALICE, f"Mon code est {BOBS}"),
        )
        await _command(echo, "export", ALICE)
        _, data = _exported(rec, ALICE)
        named = {m["text"].split()[-1]: m["character"] for m in data["messages"]}
        assert named == {ALICES: "nyx", BOBS: "brann"}
