"""Isolation: random turns, commands and privacy choices by 10 users in 3 guilds and their DMs;
no memory of one person ever reaches another person's turn or command, no DM memory reaches a
guild turn, and a memory is served only where it was learned unless its owner chose everywhere."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from memory import Engine, manage
from memory.errors import NotFound
from memory.manage import privacy
from memory.model import DM_ORIGIN, Kind, Scope
from memory.store import open_store

USERS = list(range(1, 11))
GUILDS = ["101", "202", "303"]
# Two channels per guild; a DM story per user is the user's id + 10_000.
CHANNELS = {1001: "101", 1002: "101", 2001: "202", 2002: "202", 3001: "303", 3002: "303"}


def _where(user: int, place: int) -> tuple[int, str]:
    if place == 0:
        return 10_000 + user, DM_ORIGIN
    channel = list(CHANNELS)[place - 1]
    return channel, CHANNELS[channel]


class Isolation(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.tmp = tempfile.TemporaryDirectory()
        self.owner: dict[int, int] = {}  # memory id -> user
        self.origin: dict[int, str] = {}
        self.story: dict[int, int | None] = {}
        self.everywhere: set[int] = set()  # users who chose to be served everywhere

    def run(self, coro):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(coro)

    @initialize()
    def open_store(self) -> None:
        self.store = self.run(open_store(Path(self.tmp.name) / "iso.sqlite3"))
        self.engine = Engine(self.store, embedder=None)

    def teardown(self) -> None:
        self.run(self.store.close())
        self.loop.close()
        self.tmp.cleanup()

    @rule(user=st.sampled_from(USERS), place=st.integers(0, 6), n=st.integers(0, 10**6),
          scope=st.sampled_from(list(Scope)))  # fmt: skip
    def remember(self, user: int, place: int, n: int, scope: Scope) -> None:
        story, origin = _where(user, place)
        outcome = self.run(manage.remember(
            self.store, user_id=user, story_id=story, origin=origin,
            text=f"Le souvenir {n} de la personne {user}", kind=Kind.FACT, scope=scope, now=1.0,
        ))  # fmt: skip
        if outcome.action == "created":
            assert outcome.memory_id is not None
            self.owner[outcome.memory_id] = user
            self.origin[outcome.memory_id] = origin
            self.story[outcome.memory_id] = story if scope is Scope.STORY else None
        else:
            assert self.owner[outcome.memory_id or -1] == user

    @rule(user=st.sampled_from(USERS), place=st.integers(0, 6))
    def turn(self, user: int, place: int) -> None:
        story, origin = _where(user, place)
        recall = self.run(self.engine.recall(
            user_id=user, story_id=story, origin=origin, text="souvenir personne",
        ))  # fmt: skip
        for selected in recall.selected:
            memory_id = selected.memory.id
            assert self.owner[memory_id] == user
            if origin != DM_ORIGIN:
                assert self.origin[memory_id] != DM_ORIGIN
            if user not in self.everywhere:
                assert self.origin[memory_id] == origin
            if self.story[memory_id] is not None:
                assert self.story[memory_id] == story
        why = self.run(manage.why(self.store, user, story))
        assert why is not None and all(self.owner[s.memory.id] == user for s in why.selected)

    @precondition(lambda self: bool(self.owner))
    @rule(user=st.sampled_from(USERS), pick=st.integers(0, 10**6),
          action=st.sampled_from(["pin", "unpin", "forget"]))  # fmt: skip
    def command(self, user: int, pick: int, action: str) -> None:
        memory_id = sorted(self.owner)[pick % len(self.owner)]
        mine = self.owner[memory_id] == user
        try:
            if action == "forget":
                self.run(manage.forget(self.store, user, memory_id))
            else:
                self.run(manage.set_pinned(self.store, user, memory_id, action == "pin"))
        except NotFound as exc:
            assert not mine and str(exc) == f"no memory #{memory_id}"
        else:
            assert mine
            if action == "forget":
                del self.owner[memory_id]

    @rule(user=st.sampled_from(USERS), everywhere=st.booleans())
    def privacy(self, user: int, everywhere: bool) -> None:
        choice = privacy.EVERYWHERE if everywhere else privacy.DEFAULT
        self.run(privacy.choose(self.store, user, choice, default="where_learned"))
        if everywhere:
            self.everywhere.add(user)
        else:
            self.everywhere.discard(user)

    @rule(user=st.sampled_from(USERS))
    def listing(self, user: int) -> None:
        listed = self.run(manage.list_memories(self.store, user))
        assert {m.id for m in listed} == {i for i, u in self.owner.items() if u == user}

    @invariant()
    def nothing_else_in_the_database(self) -> None:
        if hasattr(self, "store"):
            rows = self.run(self.store.fetchall("SELECT id, user_id FROM memories"))
            assert {int(r[0]): int(r[1]) for r in rows} == self.owner


Isolation.TestCase.settings = settings(
    max_examples=25, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
test_isolation = Isolation.TestCase
