"""A follow-up sent goes with the memory it was written from: its line in the history quotes
the event, so forgetting the memory, forgetting everything about oneself, forgetting the message
the memory came from, or deleting that message on Discord leaves not one byte of it in the
database files (SQLite) or rows (PostgreSQL). The person may also forget the follow-up's own
line, or delete its post. On a virtual clock, on the `store` fixture's backend."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from memory import Incoming
from memory.errors import Forbidden
from memory.manage import followups, forgetting
from memory.store import Store
from memory.store.tables import history, memories
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama
from tests.memory.followups.world import WEDNESDAY_9, Posted, World

# In the person's message only.
SAID = "XK7CANARY4921"
# In the memory the model wrote (its own word for the interview) and the follow-up that quoted it.
NOTED = "QZ8CANARY1234"
MESSAGE = f"I have a job interview tomorrow! Room {SAID}."


def _model(payload: dict[str, Any]) -> str:
    """A model that notes the interview under its own name for it, and quotes the note when it
    writes the follow-up (as a real one told not to quote may still do)."""
    asked = payload["messages"][-1]["content"]
    if "format" in payload:
        items = [
            {"text": f"Has a job interview tomorrow, code {NOTED}", "kind": "promise",
             "scope": "story", "confidence": 0.95}
        ] if SAID in asked else []  # fmt: skip
        return json.dumps({"memories": items, "summary": "They talked about plans."})
    if "ask how it went" in asked:
        return f"So, how did the {NOTED} interview go?"
    return "Good luck!"


async def _sent(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> tuple[World, int]:
    """Sam says it on Monday, gets the follow-up on Wednesday at nine, and answers it; return
    the world and the memory's id."""
    world = World(store, ollama, http, _model)
    await followups.set_choice(store, 1, True)
    memory_id = await world.said(1, 10, MESSAGE)
    world.clock.now = WEDNESDAY_9
    assert await world.process().run(Posted(world.clock)) == 1
    world.clock.now += 600
    await world.engine.turn(Incoming("t:1:2", 1, "Sam", 10, "111", "It went well, thanks!"))
    world.clock.now += 120
    await world.worker.run_due()
    lines = [m.content for m in await history.recent(store, 10, limit=10)]
    assert f"So, how did the {NOTED} interview go?" in lines
    return world, memory_id


async def _kept(store: Store, tmp_path: Any, *canaries: str) -> dict[str, int]:
    await store.checkpoint()
    return await canary.stored_each(store, tmp_path, canaries)


@pytest.mark.parametrize("erasure", ["memory", "forget-me", "message", "deleted"])
async def test_the_follow_up_line_goes_with_its_memory_however_it_is_erased(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, tmp_path: Any, erasure: str
) -> None:
    world, memory_id = await _sent(store, ollama, http)
    assert (await _kept(store, tmp_path, NOTED))[NOTED] > 0
    engine = world.engine
    if erasure == "memory":
        await forgetting.forget_memory(store, 1, memory_id)
    elif erasure == "forget-me":
        report = await forgetting.forget_person(store, 1, engine=engine)
        # Sam's two messages, the two replies, the follow-up between them.
        assert report.erased.messages == 5
    elif erasure == "message":
        said = await history.by_source(store, "t:1:1")
        report = await forgetting.forget_message(store, said, actor_id=1, engine=engine)
        assert (report.erased.messages, report.erased.memories) == (3, 1)  # message, reply, line
    else:
        assert (await forgetting.forget_deleted(store, ["t:1:1"], engine=engine)).forgotten == 1
    kept = await _kept(store, tmp_path, NOTED, SAID)
    assert kept[NOTED] == 0
    assert (kept[SAID] > 0) is (erasure == "memory")  # the message stays when only the memory goes
    lines = [m.source_id for m in await history.recent(store, 10, limit=10)]
    assert not any(s.startswith("followup:") for s in lines)
    row = await store.fetchone("SELECT count(*) FROM sent_messages")
    assert row is not None and row[0] == 0
    assert await world.process().plan() == 0  # not planned again from anything left


@pytest.mark.parametrize("how", ["forget", "delete"])
async def test_its_person_may_forget_the_follow_up_or_delete_its_post(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, how: str
) -> None:
    world, memory_id = await _sent(store, ollama, http)
    line = next(
        m for m in await history.recent(store, 10, limit=10) if m.source_id.startswith("followup:")
    )
    if how == "forget":
        with pytest.raises(Forbidden):
            await forgetting.forget_message(store, line, actor_id=2, engine=world.engine)
        report = await forgetting.forget_message(store, line, actor_id=1, engine=world.engine)
        assert (report.erased.messages, report.erased.memories) == (1, 0)
    else:
        (sent,) = await followups.planned(store, 1)
        deleted = await forgetting.forget_deleted(store, [], [9_000 + sent.id], engine=world.engine)
        assert deleted.replies == 1
    assert line.content not in [m.content for m in await history.recent(store, 10, limit=10)]
    row = await store.fetchone("SELECT count(*) FROM sent_messages")
    assert row is not None and row[0] == 0
    assert [m.id for m in await memories.list_for_user(store, 1)] == [memory_id]
    assert await world.process().plan() == 0  # the memory stays, never followed up again
