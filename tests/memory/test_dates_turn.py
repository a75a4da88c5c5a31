"""Dates through real turns: a memory "interview tomorrow" said on a Monday is stored as
Tuesday's, "what did I say yesterday?" on the Tuesday recalls it by time, and "what do I have
tomorrow?" on the Monday by the day it means, as /why shows.
The chat model is a loopback Ollama answering turns and reflections as a capable model would;
the twin runs many people in many places at once, with random latencies."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from bot.render import render_why
from memory import Engine, Incoming, manage
from memory.backends.chat import OllamaChat
from memory.manage import forgetting
from memory.model import Reason
from memory.store import Store
from memory.store.tables import memories, memory_dates
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama

PARIS = ZoneInfo("Europe/Paris")
MONDAY = datetime(2026, 12, 7, 18, 0, tzinfo=PARIS).timestamp()
TUESDAY = datetime(2026, 12, 8, 12, 0, tzinfo=PARIS).timestamp()
TUESDAY_DAY = date(2026, 12, 8)
TOLD = "I have a job interview tomorrow!"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _reflection(payload: dict[str, Any]) -> str:
    """What a capable model extracts: the person's plan, in the third person, as they said it."""
    exchange = payload["messages"][-1]["content"]
    said = {
        "job interview tomorrow": "Has a job interview tomorrow",
        "entretien demain": "A un entretien d'embauche demain",
        "dentist next Friday": "Has a dentist appointment next Friday",
        "dans trois jours": "Déménage dans trois jours",
    }
    texts = [memory for words, memory in said.items() if words in exchange]
    items = [{"text": t, "kind": "promise", "scope": "story", "confidence": 0.95} for t in texts]
    return json.dumps({"memories": items, "summary": "They talked about plans."})


def _chat(ollama: FakeOllama) -> None:
    ollama.chat_reply = lambda p: _reflection(p) if "format" in p else "Good luck with that!"


async def test_tomorrow_said_on_monday_is_tuesday_and_yesterday_recalls_it_by_time(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    _chat(ollama)
    clock = Clock(MONDAY)
    chat = OllamaChat(http, ollama.url, "m")
    engine = Engine(store, embedder=None, chat=chat, clock=clock, zone=PARIS)
    worker = ReflectionWorker(store, chat, character_name="Écho", clock=clock, zone=PARIS)
    await engine.turn(Incoming("t:1", 1, "Sam", 10, "111", "I have a job interview tomorrow!"))
    clock.now += 120
    assert await worker.run_due() == 1
    (stored,) = await memories.list_for_user(store, 1)
    assert stored.text == "Has a job interview tomorrow (2026-12-08)"

    clock.now = TUESDAY
    plain = await engine.turn(Incoming("t:2", 1, "Sam", 10, "111", "Hello again"))
    assert all(s.reason is not Reason.TIME for s in plain.recall.selected)
    asked = await engine.turn(Incoming("t:3", 1, "Sam", 10, "111", "what did I say yesterday?"))
    reasons = {s.memory.id: s.reason for s in asked.recall.selected}
    assert reasons[stored.id] is Reason.TIME
    assert "From the time you asked about" in render_why(await manage.why(store, 1, 10))


async def test_reflected_two_days_late_tomorrow_still_means_the_day_after_it_was_said(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """Many people say "tomorrow" on Monday evening, half of them fix a typo on Tuesday, and
    the reflections wait until Wednesday (a backlog, the model down): every memory means
    Tuesday, the day after the message was said, not after the edit or the reflection."""
    _chat(ollama)
    clock = Clock(MONDAY)
    chat = OllamaChat(http, ollama.url, "m")
    engine = Engine(store, embedder=None, chat=chat, clock=clock, zone=PARIS)
    people = range(1, 9)
    typo = "I have a job intervew tomorrow!"
    await asyncio.gather(
        *(
            engine.turn(Incoming(f"t:{p}", p, f"p{p}", 100 + p, "111", typo if p % 2 else TOLD))
            for p in people
        )
    )
    clock.now = TUESDAY
    edited = await asyncio.gather(
        *(
            forgetting.follow_edit(store, f"t:{p}", TOLD, quiet=0, now=clock())
            for p in people
            if p % 2
        )
    )
    assert all(e is not None and e.requeued for e in edited)
    clock.now = datetime(2026, 12, 9, 12, 0, tzinfo=PARIS).timestamp()
    workers = [
        ReflectionWorker(store, chat, character_name="Écho", clock=clock, zone=PARIS, name=f"w{n}")
        for n in range(2)
    ]

    async def drain(worker: ReflectionWorker) -> None:
        while await worker.run_due():
            pass

    await asyncio.gather(*(drain(w) for w in workers))
    for person in people:
        (stored,) = await memories.list_for_user(store, person)
        assert stored.text == "Has a job interview tomorrow (2026-12-08)", person
        assert await memory_dates.of(store, stored.id) == [(TUESDAY_DAY, TUESDAY_DAY)]


async def test_many_people_dating_and_asking_at_once_each_get_their_own(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    rng = random.Random(31)
    plans = [
        ("I have a job interview tomorrow", "Has a job interview tomorrow (2026-12-08)"),
        ("J'ai un entretien demain", "A un entretien d'embauche demain (2026-12-08)"),
        ("Seeing my dentist next Friday", "Has a dentist appointment next Friday (2026-12-11)"),
        ("Je déménage dans trois jours", "Déménage dans trois jours (2026-12-10)"),
    ]
    people = range(1, 13)

    async def slow(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.03))

    _chat(ollama)
    ollama.pause = slow
    clock = Clock(MONDAY)
    chat = OllamaChat(http, ollama.url, "m")
    engine = Engine(store, embedder=None, chat=chat, clock=clock, zone=PARIS)
    workers = [
        ReflectionWorker(store, chat, character_name="Écho", clock=clock, zone=PARIS, name=f"w{n}")
        for n in range(3)
    ]

    def place(person: int) -> tuple[int, str]:
        return 100 + person % 3, str(900 + person % 2)  # stories and servers shared by several

    async def say(person: int) -> None:
        story, origin = place(person)
        message = plans[person % len(plans)][0]
        await engine.turn(Incoming(f"t:{person}:1", person, f"p{person}", story, origin, message))

    await asyncio.gather(*(say(p) for p in people))
    clock.now += 120

    async def drain(worker: ReflectionWorker) -> None:
        while await worker.run_due():
            pass

    await asyncio.gather(*(drain(w) for w in workers))
    for person in people:
        texts = [m.text for m in await memories.list_for_user(store, person)]
        assert texts == [plans[person % len(plans)][1]], person

    clock.now = TUESDAY

    async def ask(person: int) -> tuple[int, list[tuple[int, Reason]]]:
        story, origin = place(person)
        text = "what did I say yesterday?" if person % 2 else "qu'est-ce que je t'ai dit hier ?"
        reply = await engine.turn(
            Incoming(f"t:{person}:2", person, f"p{person}", story, origin, text)
        )
        return person, [(s.memory.user_id, s.reason) for s in reply.recall.selected]

    for person, selected in await asyncio.gather(*(ask(p) for p in people)):
        assert selected == [(person, Reason.TIME)], person


async def test_what_do_i_have_tomorrow_recalls_what_is_dated_then_and_why_says_so(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    _chat(ollama)
    clock = Clock(MONDAY)
    chat = OllamaChat(http, ollama.url, "m")
    engine = Engine(store, embedder=None, chat=chat, clock=clock, zone=PARIS)
    worker = ReflectionWorker(store, chat, character_name="Écho", clock=clock, zone=PARIS)
    said = [
        (1, "I have a job interview tomorrow!"),
        (1, "and the dentist next Friday"),
        (2, "I have a job interview tomorrow too"),  # someone else's tomorrow
    ]
    for n, (person, text) in enumerate(said):
        await engine.turn(Incoming(f"t:{n}", person, f"p{person}", 10, "111", text))
    clock.now += 120
    while await worker.run_due():
        pass
    mine = {m.text: m.id for m in await memories.list_for_user(store, 1)}
    assert set(mine) == {
        "Has a job interview tomorrow (2026-12-08)",
        "Has a dentist appointment next Friday (2026-12-11)",
    }
    interview = mine["Has a job interview tomorrow (2026-12-08)"]

    clock.now += 3600
    told = await engine.turn(Incoming("t:9", 1, "Sam", 10, "111", "I have a meeting tomorrow"))
    assert all(s.reason is not Reason.DATED for s in told.recall.selected)
    asked = await engine.turn(Incoming("t:10", 1, "Sam", 10, "111", "what do I have tmrw?"))
    reasons = {s.memory.id: s.reason for s in asked.recall.selected}
    assert {s.memory.user_id for s in asked.recall.selected} == {1}
    assert [i for i, r in reasons.items() if r is Reason.DATED] == [interview]
    shown = render_why(await manage.why(store, 1, 10))
    assert "Dated in the time to come you asked about" in shown
    assert "dated 8 Dec, asked about “tmrw”" in shown


async def test_many_people_asking_about_their_own_days_at_once_each_get_their_own(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    rng = random.Random(42)
    people = range(1, 13)

    async def slow(payload: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, 0.03))

    _chat(ollama)
    ollama.pause = slow
    clock = Clock(MONDAY)
    chat = OllamaChat(http, ollama.url, "m")
    engine = Engine(store, embedder=None, chat=chat, clock=clock, zone=PARIS)
    worker = ReflectionWorker(store, chat, character_name="Écho", clock=clock, zone=PARIS)

    def place(person: int) -> tuple[int, str]:
        return 100 + person % 3, str(900 + person % 2)  # stories and servers shared by several

    async def say(person: int) -> None:
        story, origin = place(person)
        text = "I have a job interview tomorrow" if person % 2 else "Je déménage dans trois jours"
        await engine.turn(Incoming(f"t:{person}:1", person, f"p{person}", story, origin, text))

    await asyncio.gather(*(say(p) for p in people))
    clock.now += 120
    while await worker.run_due():
        pass
    clock.now += 3600

    async def ask(person: int) -> tuple[int, list[tuple[int, Reason]]]:
        story, origin = place(person)
        # Tuesday (tomorrow) for the interviews, Thursday (in three days) for the moves, in
        # words the memories do not hold (no keyword recalls them); the third asks about a day
        # nobody's plan falls on.
        text = ["anything on tuesday?", "j'ai quoi jeudi ?", "anything on saturday?"][person % 3]
        reply = await engine.turn(
            Incoming(f"t:{person}:2", person, f"p{person}", story, origin, text)
        )
        return person, [(s.memory.user_id, s.reason) for s in reply.recall.selected]

    for person, selected in await asyncio.gather(*(ask(p) for p in people)):
        meets = (person % 3, person % 2) in ((0, 1), (1, 0))
        ((owner, reason),) = selected
        assert owner == person and (reason is Reason.DATED) == meets, (person, reason)
