"""The day and the dates, as the model reads them: through the engine on a real database and
the loopback fake Ollama, with the clock and the character's time zone set by the test. The
chat prompt says the day and time there, each memory when it was said, a long silence in the
history; the reflection prompt, when its exchange took place."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from memory import Characters, Engine, Incoming, manage
from memory.backends.chat import OllamaChat
from memory.context.prompt import Character
from memory.store import Store, open_store
from memory.store.tables import history
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama

STORY, GUILD, MODEL = 10, "111", "llama3.1:8b"
AUCKLAND = ZoneInfo("Pacific/Auckland")
DAY = 86_400.0
# Tuesday 10 November 2026, 22:30 in Auckland (09:30 UTC): far enough east that the UTC date
# and the local one differ by evening.
START = datetime(2026, 11, 10, 22, 30, tzinfo=AUCKLAND).timestamp()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _engine(
    store: Store, http: httpx.AsyncClient, ollama: FakeOllama, clock: Callable[[], float]
) -> Engine:
    character = Character("Écho", "Tu es Écho.", zone=AUCKLAND)
    return Engine(
        store, embedder=None, chat=OllamaChat(http, ollama.url, MODEL), character=character,
        clock=clock,
    )  # fmt: skip


def _chats(ollama: FakeOllama) -> list[list[dict[str, str]]]:
    return [p["messages"] for path, p in ollama.calls if path == "/api/chat" and "format" not in p]


def _wall(at: float) -> str:
    d = datetime.fromtimestamp(at, AUCKLAND)
    return f"{d:%A} {d.day} {d:%B} {d.year}, {d:%H:%M}"


async def test_the_prompt_says_the_day_each_memory_its_date_and_a_silence_its_length(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    clock = Clock(START)
    async with await open_store(database) as store:
        engine = _engine(store, http, ollama, clock)
        await manage.remember(store, user_id=1, story_id=STORY, origin=GUILD,
                              text="Léa habite à Lyon", now=START)  # fmt: skip
        await engine.turn(Incoming("m1", 1, "Marie", STORY, GUILD, "bonsoir"))
        clock.now = START + 3 * DAY + 3600
        await engine.turn(Incoming("m2", 1, "Marie", STORY, GUILD, "me revoilà"))
        clock.now += 60
        await engine.turn(Incoming("m3", 1, "Marie", STORY, GUILD, "tu te souviens de Léa ?"))
    first, second, third = _chats(ollama)
    system = third[0]["content"]
    # Today, in the character's zone, with the operator's text: before any fenced data.
    assert f"Now it is {_wall(clock.now)} (Pacific/Auckland, UTC+13:00)." in system
    assert system.index("Now it is") < system.index("<memories>")
    assert "Now it is" not in system[system.index("<memories>") :]
    assert "Marie" not in system  # no display name in the system message
    fenced = system[system.index("<memories>") : system.index("</memories>")]
    assert "- (fact; Tue 10 Nov, three days ago) Léa habite à Lyon" in fenced
    assert "- (fact; today) Léa habite à Lyon" in first[0]["content"]
    # Three days of silence before "me revoilà": said on that message, in both prompts.
    assert second[-1]["content"] == "— three days later, Fri 13 Nov —\nMarie: me revoilà"
    assert {"role": "user", "content": "— three days later, Fri 13 Nov —\nMarie: me revoilà"} in (
        third
    )
    assert third[-1]["content"] == "Marie: tu te souviens de Léa ?"  # a minute: no mark
    assert first[-1]["content"] == "Marie: bonsoir"


async def test_many_people_at_once_each_see_their_own_dates(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The concurrent twin: people whose memories were said on different days talk at once,
    their replies arriving in a random order; each prompt holds that person's dates."""
    rng = random.Random(31)
    people = range(1, 13)
    now = START + 40 * DAY

    async def pause(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.02))

    ollama.pause = pause
    async with await open_store(database) as store:
        engine = _engine(store, http, ollama, Clock(now))
        for person in people:
            await manage.remember(store, user_id=person, story_id=STORY + person, origin=GUILD,
                                  text=f"Person {person} keeps bees",
                                  now=now - person * 3 * DAY)  # fmt: skip
        await asyncio.gather(*(
            engine.turn(Incoming(f"p{p}", p, f"user{p}", STORY + p, GUILD, f"hello from {p}"))
            for p in people
        ))  # fmt: skip
    prompts = {m[-1]["content"]: m[0]["content"] for m in _chats(ollama)}
    assert len(prompts) == len(people)
    for person in people:
        system = prompts[f"user{person}: hello from {person}"]
        said = datetime.fromtimestamp(now - person * 3 * DAY, AUCKLAND)
        assert f"Now it is {_wall(now)}" in system
        dated = [line for line in system.splitlines() if "keeps bees" in line]
        assert len(dated) == 1 and f"Person {person} keeps bees" in dated[0]
        assert f"{said.day} {said:%b}" in dated[0] and dated[0].endswith(
            f"ago) Person {person} keeps bees"
        )


def _reflections(ollama: FakeOllama) -> dict[str, str]:
    """Each reflection's system prompt, by the person's message it reflects."""
    found = {}
    for path, payload in ollama.calls:
        if path == "/api/chat" and "format" in payload:
            exchange = json.loads(payload["messages"][1]["content"])
            found[exchange["user_message"]] = payload["messages"][0]["content"]
    return found


async def test_the_reflection_is_told_when_its_exchange_took_place(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """Exchanges of several people at different times, reflected later at once: each
    reflection says its own exchange's weekday, date and time in the character's zone, not the
    time it runs."""
    clock = Clock(START)
    said_at = {}
    async with await open_store(database) as store:
        engine = _engine(store, http, ollama, clock)
        for person in range(1, 6):
            clock.now = START + person * 1.5 * DAY
            said_at[f"news {person}"] = clock.now
            await engine.turn(Incoming(f"r{person}", person, f"user{person}", STORY, GUILD,
                                       f"news {person}"))  # fmt: skip
        clock.now = START + 30 * DAY
        chat = OllamaChat(http, ollama.url, MODEL)
        worker = ReflectionWorker(store, chat, character_name="Écho", clock=clock, zone=AUCKLAND)
        try:
            while await worker.run_due():
                pass
        finally:
            await worker.close()
    reflected = _reflections(ollama)
    assert reflected.keys() == said_at.keys()
    for message, at in said_at.items():
        d = datetime.fromtimestamp(at, AUCKLAND)
        assert (
            f"The exchange took place on {d:%A} {d.day} {d:%B} {d.year} at {d:%H:%M} "
            "(Pacific/Auckland, UTC+13:00)."
        ) in reflected[message]
        assert _wall(clock.now).split(",")[0] not in reflected[message]


async def test_reflections_of_people_talking_at_once_each_say_their_own_exchange_time(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The concurrent twin: eight people talk at once while the clock runs (seven hours at
    each reading), their replies in a random order; then two workers (two processes' worth)
    drain the reflections together. Each reflection says the time its own message was stored at."""
    rng = random.Random(32)
    readings = iter(START + i * 7 * 3600.0 for i in range(10_000))
    now = [START, 1.0]  # the time, and whether it runs

    def clock() -> float:
        if now[1]:
            now[0] = next(readings)
        return now[0]

    async def pause(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.02))

    ollama.pause = pause
    people = range(1, 9)
    async with await open_store(database) as store:
        engine = _engine(store, http, ollama, clock)
        await asyncio.gather(*(
            engine.turn(Incoming(f"c{p}", p, f"user{p}", STORY + p, GUILD, f"news of {p}"))
            for p in people
        ))  # fmt: skip
        stored = {f"news of {p}": await history.by_source(store, f"c{p}") for p in people}
        now[1] = 0.0  # the reflections run a day later, on a clock that stands still
        now[0] += DAY
        chat = OllamaChat(http, ollama.url, MODEL)
        workers = [
            ReflectionWorker(store, chat, character_name="Écho", clock=clock, zone=AUCKLAND, name=w)
            for w in ("w1", "w2")
        ]
        try:
            while sum(await asyncio.gather(*(w.run_due() for w in workers))):
                pass
        finally:
            await asyncio.gather(*(w.close() for w in workers))
    reflected = _reflections(ollama)
    assert reflected.keys() == stored.keys()
    for message, row in stored.items():
        assert row is not None
        d = datetime.fromtimestamp(row.created_at, AUCKLAND)
        assert f"on {d:%A} {d.day} {d:%B} {d.year} at {d:%H:%M} " in reflected[message]


def _cast_engine(
    store: Store, http: httpx.AsyncClient, ollama: FakeOllama, clock: Callable[[], float]
) -> Engine:
    """Two characters in one bot: Nyx says its dates in English, Sel in French."""
    cast = Characters(
        [
            Character("Nyx", "You are Nyx.", zone=AUCKLAND, key="nyx"),
            Character("Sel", "Tu es Sel.", zone=AUCKLAND, key="sel", language="fr"),
        ],
        default="nyx",
    )
    chat = OllamaChat(http, ollama.url, MODEL)
    return Engine(store, embedder=None, chat=chat, characters=cast, clock=clock, zone=AUCKLAND)


async def test_a_french_character_says_the_day_the_dates_and_the_silences_in_french(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    clock = Clock(START)
    async with await open_store(database) as store:
        engine = _cast_engine(store, http, ollama, clock)
        sel = engine.characters.need("sel")
        await manage.remember(store, user_id=engine.characters.person_id("sel", 1),
                              story_id=engine.characters.story_id("sel", STORY), origin=GUILD,
                              text="Léa habite à Lyon", now=START)  # fmt: skip
        await engine.turn(Incoming("m1", 1, "Marie", STORY, GUILD, "bonsoir", character="sel"))
        clock.now = START + 3 * DAY + 3600
        await engine.turn(Incoming("m2", 1, "Marie", STORY, GUILD, "me revoilà", character="sel"))
        clock.now += 60
        await engine.turn(Incoming("m3", 1, "Marie", STORY, GUILD, "et Léa ?", character="sel"))
        worker = ReflectionWorker(store, OllamaChat(http, ollama.url, MODEL), clock=clock,
                                  character_name="Nyx", zone=AUCKLAND,
                                  characters=engine.characters)  # fmt: skip
        try:
            while await worker.run_due():
                pass
        finally:
            await worker.close()
    assert sel.language == "fr"
    first, second, third = _chats(ollama)
    system = third[0]["content"]
    assert (
        "Nous sommes le vendredi 13 novembre 2026, il est 23 h 31 (Pacific/Auckland, UTC+13:00)."
    ) in system
    assert "Now it is" not in system
    assert "- (fact; mar. 10 nov., il y a trois jours) Léa habite à Lyon" in system
    assert "- (fact; aujourd’hui) Léa habite à Lyon" in first[0]["content"]
    silence = "— trois jours plus tard, ven. 13 nov. —\nMarie: me revoilà"
    assert second[-1]["content"] == silence
    assert {"role": "user", "content": silence} in third
    assert third[-1]["content"] == "Marie: et Léa ?"
    reflected = _reflections(ollama)
    assert (
        "L’échange a eu lieu le mardi 10 novembre 2026 à 22 h 30 (Pacific/Auckland, UTC+13:00)."
    ) in reflected["bonsoir"]
    assert "The exchange took place" not in reflected["bonsoir"]


async def test_people_talking_at_once_to_an_english_and_a_french_character_each_get_its_dates(
    database: Path | str, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The concurrent twin: twelve people talk at once, half to Nyx (English), half to Sel
    (French), replies in a random order; then two workers reflect on every exchange together.
    Each prompt and each reflection says its dates in the language of its own character."""
    rng = random.Random(33)
    now = START + 40 * DAY

    async def pause(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.02))

    ollama.pause = pause
    people = {p: "sel" if p % 2 else "nyx" for p in range(1, 13)}
    async with await open_store(database) as store:
        engine = _cast_engine(store, http, ollama, Clock(now))
        await asyncio.gather(*(
            engine.turn(Incoming(f"p{p}", p, f"user{p}", STORY + p, GUILD, f"hello from {p}",
                                 character=key))
            for p, key in people.items()
        ))  # fmt: skip
        workers = [
            ReflectionWorker(store, OllamaChat(http, ollama.url, MODEL), clock=Clock(now + DAY),
                             character_name="Nyx", zone=AUCKLAND, name=w,
                             characters=engine.characters)
            for w in ("w1", "w2")
        ]  # fmt: skip
        try:
            while sum(await asyncio.gather(*(w.run_due() for w in workers))):
                pass
        finally:
            await asyncio.gather(*(w.close() for w in workers))
    prompts = {m[-1]["content"]: m[0]["content"] for m in _chats(ollama)}
    reflected = _reflections(ollama)
    assert len(prompts) == len(reflected) == len(people)
    for person, key in people.items():
        system, reflection = (
            prompts[f"user{person}: hello from {person}"],
            reflected[f"hello from {person}"],
        )
        if key == "sel":
            assert "Nous sommes le dimanche 20 décembre 2026, il est 22 h 30" in system
            assert "L’échange a eu lieu le dimanche 20 décembre 2026 à 22 h 30" in reflection
            assert "Now it is" not in system and "The exchange took" not in reflection
        else:
            assert "Now it is Sunday 20 December 2026, 22:30" in system
            assert "The exchange took place on Sunday 20 December 2026 at 22:30" in reflection
            assert "Nous sommes" not in system and "L’échange" not in reflection
