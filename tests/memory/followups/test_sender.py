"""Follow-ups through real turns and reflections: "I have a job interview tomorrow" said on a
Monday evening in Paris is followed up once, on Wednesday from 09:00 (the day after the
interview, out of the quiet hours), in the channel it was said in, by a person who turned
follow-ups on; never when off, forgotten, spoken of since, in quiet hours, or twice (two
processes, a writer killed mid-way, many people due at the same minute). Every wait is on a
virtual clock."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import httpx

from memory import Incoming
from memory.followups.sender import LEASE, Outcome
from memory.manage import followups, forgetting
from memory.store import Store
from memory.store.tables import followups as table
from memory.store.tables import history
from tests.fakes.ollama import FakeOllama
from tests.memory.followups.world import (
    ASK,
    PARIS,
    WEDNESDAY_6,
    WEDNESDAY_9,
    Posted,
    World,
)


async def test_the_interview_is_followed_up_once_the_day_after_at_nine_where_it_was_said(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    world = World(store, ollama, http)
    await followups.set_choice(store, 1, True)
    memory_id = await world.said(1, 10, "I have a job interview tomorrow!")
    sender, posted = world.process(), Posted(world.clock)

    world.clock.now = WEDNESDAY_6  # the day after, in the quiet hours: planned, not sent
    assert await sender.run(posted) == 0
    (plan,) = await followups.planned(store, 1)
    assert (plan.memory_id, plan.status, plan.due_at) == (memory_id, "planned", WEDNESDAY_9)

    world.clock.now = WEDNESDAY_9 + 30
    assert await sender.run(posted) == 1
    world.clock.now += 3600
    assert await sender.run(posted) == 0  # once
    ((sent, at),) = posted.posts
    assert (sent.text, sent.channel_id, sent.memory_id, at) == (
        ASK,
        10,
        memory_id,
        WEDNESDAY_9 + 30,
    )
    last = (await history.recent(store, 10, limit=1))[-1]
    assert (last.role, last.content, last.source_id) == (
        "assistant",
        ASK,
        f"followup:{sent.id}:reply",
    )
    why = await followups.last_sent(store, 1, 10)
    assert why is not None and (why.memory_id, str(why.event_day)) == (memory_id, "2026-12-08")
    assert (await followups.counts(store))["followup_sent"] == 1


async def test_nothing_when_off_by_default_turned_off_forgotten_or_spoken_of_since(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    world = World(store, ollama, http)
    await world.said(1, 10, "I have a job interview tomorrow!")  # never turned on
    await followups.set_choice(store, 2, True)
    forgotten = await world.said(2, 20, "I have a job interview tomorrow!")
    await followups.set_choice(store, 3, True)
    spoken = await world.said(3, 30, "I have a job interview tomorrow!")
    await followups.set_choice(store, 4, True)
    await world.said(4, 40, "I have a job interview tomorrow!")
    sender, posted = world.process(), Posted(world.clock)
    assert await sender.plan() == 3  # 2, 3 and 4: 1 never asked

    await forgetting.forget_memory(store, 2, forgotten)
    world.clock.now = datetime(2026, 12, 8, 20, 0, tzinfo=PARIS).timestamp()
    at = world.clock.now
    await store.transact(  # the person spoke of it on the day: it was confirmed
        lambda tx: tx.execute(
            "INSERT INTO memory_events (memory_id, exchange_id, action, score, at)"
            " VALUES (?, 't:3:2', 'merged', 1.0, ?)",
            (spoken, at),
        )
    )
    await followups.set_choice(store, 4, False)

    world.clock.now = WEDNESDAY_9 + 30
    assert await sender.run(posted) == 0
    assert posted.posts == []
    figures = await followups.counts(store)
    assert figures.get("followup_dropped:spoken") == 1 and "followup_sent" not in figures


async def test_a_writer_killed_mid_way_leaves_it_to_the_next_process_which_sends_it_once(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    world = World(store, ollama, http)
    await followups.set_choice(store, 1, True)
    await world.said(1, 10, "I have a job interview tomorrow!")
    first, second, posted = world.process(), world.process(), Posted(world.clock)
    await first.plan()
    world.clock.now = WEDNESDAY_9
    # The first process claims it, then dies (kill -9: its lease is never given back).
    now = world.clock.now
    held = await store.transact(
        lambda tx: table.claim(tx, holder="dead", now=now, today=first.hours.day(now), lease=LEASE)
    )
    assert held is not None
    assert await second.run(posted) == 0  # the lease still holds
    world.clock.now += LEASE + 1
    assert await second.run(posted) == 1
    world.clock.now += 60
    assert await first.run(posted) + await second.run(posted) == 0
    assert len(posted.posts) == 1


async def test_forgetting_while_it_is_written_sends_nothing_and_keeps_nothing(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    world = World(store, ollama, http)
    await followups.set_choice(store, 1, True)
    memory_id = await world.said(1, 10, "I have a job interview tomorrow!")
    sender, posted = world.process(), Posted(world.clock)
    world.clock.now = WEDNESDAY_9
    writing, go_on = asyncio.Event(), asyncio.Event()
    real = world.chat.chat

    async def slow(*args: Any, **kwargs: Any) -> Any:
        writing.set()
        await go_on.wait()
        return await real(*args, **kwargs)

    world.chat.chat = slow  # type: ignore[method-assign]
    run = asyncio.create_task(sender.run(posted))
    await writing.wait()
    await forgetting.forget_memory(store, 1, memory_id)
    go_on.set()
    assert await run == 0
    assert posted.posts == []
    assert await followups.planned(store, 1) == []
    found = await store.fetchone("SELECT count(*) FROM messages WHERE content = ?", (ASK,))
    assert found is not None and found[0] == 0


async def test_many_people_due_the_same_minute_on_two_processes_each_get_one(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    world = World(store, ollama, http)
    people = range(1, 13)
    for user in people:
        await followups.set_choice(store, user, True)
    await asyncio.gather(
        *(
            world.engine.turn(
                Incoming(f"t:{u}", u, "Sam", 100 + u, "111", "I have a job interview tomorrow!")
            )
            for u in people
        )
    )
    world.clock.now += 120
    while await world.worker.run_due():
        pass
    processes = [world.process() for _ in range(2)]
    posted = Posted(world.clock)
    world.clock.now = WEDNESDAY_9
    sent = await asyncio.gather(*(p.run(posted) for p in processes for _ in range(3)))
    assert sum(sent) == len(people)
    assert sorted(f.user_id for f, _ in posted.posts) == list(people)
    assert {f.channel_id - f.user_id for f, _ in posted.posts} == {100}


async def test_a_person_who_refuses_dms_is_tried_once_then_skipped(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    world = World(store, ollama, http)
    await followups.set_choice(store, 1, True)
    await world.engine.turn(Incoming("t:1", 1, "Sam", 10, "dm", "I have a job interview tomorrow!"))
    await world.engine.turn(
        Incoming("t:2", 1, "Sam", 10, "dm", "and a job interview tomorrow, Alex")
    )
    world.clock.now += 120
    while await world.worker.run_due():
        pass
    sender, refused = world.process(), Posted(world.clock, Outcome.BLOCKED)
    world.clock.now = WEDNESDAY_9
    assert await sender.run(refused) == 0
    world.clock.now += 86_400  # the next day, the other one: not tried
    assert await sender.run(refused) == 0
    figures = await followups.counts(store)
    assert figures["followup_blocked"] == 1 and figures["followup_dropped:blocked"] == 1
