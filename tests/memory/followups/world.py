"""What the follow-ups' tests share: a Monday-evening interview in Paris, a virtual clock, a
front end's deliverer that keeps what it posted, and a conversation (engine, reflection worker,
follow-ups) on one database."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from memory import Engine, Incoming
from memory.backends.chat import OllamaChat
from memory.character.cast import Characters
from memory.context.prompt import Character
from memory.followups.sender import Delivery, FollowUp, FollowUps, Outcome, Policy
from memory.manage import followups
from memory.store import Store
from memory.store.tables import memories
from memory.write.worker import ReflectionWorker
from tests.fakes.ollama import FakeOllama

PARIS = ZoneInfo("Europe/Paris")
MONDAY = datetime(2026, 12, 7, 18, 0, tzinfo=PARIS).timestamp()
TUESDAY_NOON = datetime(2026, 12, 8, 12, 0, tzinfo=PARIS).timestamp()
WEDNESDAY_6 = datetime(2026, 12, 9, 6, 0, tzinfo=PARIS).timestamp()
WEDNESDAY_9 = datetime(2026, 12, 9, 9, 0, tzinfo=PARIS).timestamp()
ASK = "So, how did the job interview go?"


class Clock:
    """A virtual clock the test moves."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Posted:
    """A front end's deliverer: what it posted, where and when."""

    def __init__(self, clock: Clock, outcome: Outcome = Outcome.SENT) -> None:
        self.clock = clock
        self.outcome = outcome
        self.posts: list[tuple[FollowUp, float]] = []
        self.retracted: list[int] = []

    async def post(self, followup: FollowUp) -> Delivery:
        if self.outcome is not Outcome.SENT:
            return Delivery(self.outcome)
        self.posts.append((followup, self.clock()))
        return Delivery(Outcome.SENT, (9_000 + followup.id,))

    async def retract(self, followup: FollowUp, message_ids: Sequence[int]) -> None:
        self.retracted += message_ids


def reflection(payload: dict[str, Any]) -> str:
    """A reflection holding the interview (one per name said) as a promise."""
    exchange = payload["messages"][-1]["content"]
    texts = [
        f"Has a job interview tomorrow ({who})"
        for who in ("Sam", "Alex")
        if f"job interview tomorrow, {who}" in exchange
    ] or (["Has a job interview tomorrow"] if "job interview tomorrow" in exchange else [])
    items = [{"text": t, "kind": "promise", "scope": "story", "confidence": 0.95} for t in texts]
    return json.dumps({"memories": items, "summary": "They talked about plans."})


def reply(payload: dict[str, Any]) -> str:
    """The model: a reflection (above), a follow-up asking how it went, or a reply."""
    if "format" in payload:
        return reflection(payload)
    asked = payload["messages"][-1]["content"]
    return ASK if "ask how it went" in asked else "Good luck!"


class World:
    """One person's conversation on a virtual clock: the engine, the reflection worker, and
    the follow-ups of as many processes as asked for, on one database and one model."""

    def __init__(
        self,
        store: Store,
        ollama: FakeOllama,
        http: httpx.AsyncClient,
        model: Callable[[dict[str, Any]], str] = reply,
    ) -> None:
        ollama.chat_reply = model
        self.store = store
        self.clock = Clock(MONDAY)
        self.chat = OllamaChat(http, ollama.url, "m")
        self.engine = Engine(store, embedder=None, chat=self.chat, clock=self.clock, zone=PARIS)
        self.worker = ReflectionWorker(
            store, self.chat, character_name="Écho", clock=self.clock, zone=PARIS
        )

    def process(self) -> FollowUps:
        """The follow-ups of one process on the database."""
        cast = Characters([Character("Écho", "A friend.", zone=PARIS)])
        return FollowUps(
            self.store,
            chat=lambda: self.chat,
            characters=cast,
            policy=Policy(),
            deadline=lambda: 30.0,
            clock=self.clock,
        )

    async def said(self, user: int, story: int, text: str, n: int = 1) -> int:
        """The person says `text` (exchange t:USER:N), reflected two minutes later; return the
        id of the one memory they have."""
        await self.engine.turn(Incoming(f"t:{user}:{n}", user, "Sam", story, "111", text))
        self.clock.now += 120
        await self.worker.run_due()
        (stored,) = await memories.list_for_user(self.store, user)
        return stored.id


async def a_morning(world: World) -> None:
    """Four people turned follow-ups on and mentioned an interview: on Wednesday at nine, two
    were asked how it went, one had dropped theirs, and one's is planned for Thursday."""
    for user in (1, 2, 3, 4):
        await followups.set_choice(world.store, user, True)
    for user in (1, 2, 3):
        await world.said(user, 10 * user, "I have a job interview tomorrow!")
    world.clock.now = TUESDAY_NOON
    await world.said(4, 40, "I have a job interview tomorrow!")
    sender = world.process()
    await sender.plan()
    (dropped,) = await followups.planned(world.store, 3)
    await followups.drop(world.store, 3, dropped.id)
    world.clock.now = WEDNESDAY_9
    assert await sender.run(Posted(world.clock)) == 2
