"""Many people at once, through the Discord cog and the reflection worker, against the loopback
LLM with random latency and random 500s: every message gets exactly one answer, every answered
exchange is reflected exactly once, and nobody's memories reach anyone else."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import logging
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from bot.discord.app import EchoBot
from bot.discord.cogs.conversation import SLOW_DOWN, UNAVAILABLE
from memory.model import Exchange
from memory.store import Store
from memory.store.tables import outbox
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import CHANNEL, OTHER_CHANNEL, _bot_with
from tests.fakes.ollama import Chaos, FakeOllama

PEOPLE = [2000 + n for n in range(20)]
MESSAGES_EACH = 10
TAG = re.compile(r"Tag(\d+)x(\d+)")

# Each message its own turn, as these tests of the admission count them: quick lines (a
# person's lines joined while the first answer is unseen) are tested in
# tests/bot/discord/test_quick_lines.py.
EACH_A_TURN = {"quick_pause": 0}


def _tag(user: int, n: int) -> str:
    return f"Tag{user}x{n}"


def _llm(payload: dict[str, Any]) -> str:
    """Replies name the message they answer; reflections turn its tag into one memory."""
    messages = payload["messages"]
    if "format" in payload:
        said = json.loads(messages[-1]["content"])["user_message"]
        found = TAG.search(said)
        memories = []
        if found:
            memories = [{"text": f"A un chat nommé {found.group(0)}", "kind": "fact",
                         "scope": "global", "confidence": 0.95}]  # fmt: skip
        return json.dumps({"memories": memories, "summary": "Des gens parlent de leurs chats."})
    found = TAG.search(messages[-1]["content"])
    return f"Joli nom, {found.group(0) if found else 'vraiment'} !"


def _places(echo: EchoBot, user: int) -> list[tuple[Any, str]]:
    """Where a person writes: the configured channel, a channel where they mention the bot,
    and their DM."""
    mention = f"<@{fakes.BOT_ID}> "
    return [
        (fakes.text_channel(echo, CHANNEL), ""),
        (fakes.text_channel(echo, OTHER_CHANNEL), mention),
        (fakes.dm_channel(echo, 50_000 + user, user), ""),
    ]


def _answers(rec: fakes.Recorder) -> dict[int, list[str]]:
    """What the bot sent in reply to each message id."""
    out: dict[int, list[str]] = {}
    for sent in rec.messages():
        reference = sent.get("message_reference")
        if reference:
            out.setdefault(int(reference["message_id"]), []).append(str(sent["content"]))
    return out


async def _drain(echo: EchoBot, ollama: FakeOllama) -> None:
    """Heal the LLM and run the worker until no reflection waits (retries made due at once)."""
    ollama.chaos = None
    ollama.behaviours.clear()
    cog: Any = echo.get_cog("Conversation")
    await asyncio.gather(*cog._background)
    runtime = echo.runtime
    runtime.worker.clock = lambda: time.time() + 10**7
    for _ in range(100):
        await runtime.engine.flush_pending()
        await runtime.worker.run_due(limit=50)
        row = await runtime.store.fetchone("SELECT count(*) FROM outbox WHERE status = 'pending'")
        if row is not None and row[0] == 0:
            return
    raise AssertionError("the outbox does not drain")


async def test_two_people_in_two_places_at_the_same_moment_both_get_a_reply(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.set("/api/chat", "slow", delay=0.3)
    ollama.chat_reply = _llm
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        cog: Any = echo.get_cog("Conversation")
        alice = fakes.message(echo, fakes.text_channel(echo, CHANNEL), author_id=1, content="Salut")
        bob = fakes.message(echo, fakes.dm_channel(echo, 77, 2), author_id=2, content="Coucou")
        await asyncio.gather(cog.on_message(alice), cog.on_message(bob))
        answers = _answers(rec)
        assert len(answers[alice.id]) == 1 and len(answers[bob.id]) == 1
        await _drain(echo, ollama)
        rows = await echo.runtime.store.fetchall("SELECT exchange_id, status FROM outbox")
        assert sorted(tuple(r) for r in rows) == [
            (f"discord:{alice.id}", "done"), (f"discord:{bob.id}", "done"),
        ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
async def test_twenty_people_ten_messages_each_all_at_once(
    tmp_path: Path, ollama: FakeOllama, caplog: pytest.LogCaptureFixture, seed: int
) -> None:
    caplog.set_level(logging.WARNING)
    ollama.chat_reply = _llm
    ollama.chaos = Chaos(seed, max_delay=0.05, failure_rate=0.1)
    rng = random.Random(seed)
    async with _bot_with(
        tmp_path, ollama, limits={"turn_queue": MESSAGES_EACH}, discord=EACH_A_TURN
    ) as (echo, rec):
        cog: Any = echo.get_cog("Conversation")
        sent: dict[int, tuple[int, str]] = {}  # message id -> (author, tag)
        work = []
        for user in PEOPLE:
            places = _places(echo, user)
            for n in range(MESSAGES_EACH):
                channel, prefix = rng.choice(places)
                tag = _tag(user, n)
                msg = fakes.message(
                    echo, channel, author_id=user, content=f"{prefix}Mon chat s'appelle {tag}",
                    mentions=[fakes.BOT_ID] if prefix else None,
                )  # fmt: skip
                sent[msg.id] = (user, tag)
                work.append(cog.on_message(msg))
        for _ in range(3):  # the indexer and a few reflections run between the turns
            work.append(echo.runtime.indexer.run_once())
            work.append(echo.runtime.worker.run_due())
        rng.shuffle(work)
        await asyncio.gather(*work)
        await asyncio.gather(*cog._background)

        # Every message: exactly one answer, the reply to it or the one-line unavailable.
        answers = _answers(rec)
        assert set(answers) == set(sent)
        replied = set()
        for message_id, (_, tag) in sent.items():
            [answer] = answers[message_id]
            assert answer in (f"Joli nom, {tag} !", UNAVAILABLE)
            if answer != UNAVAILABLE:
                replied.add(tag)
        assert ollama.chaos is not None and ollama.chaos.failures > 0  # the faults happened
        assert len(replied) > len(sent) // 2

        # Each person's messages and the replies to them alternate in every place: a reply is
        # stored before the same person's next message there (their line is held until then).
        rows = await echo.runtime.store.fetchall(
            "SELECT source_id, story_id FROM messages ORDER BY id"
        )
        author = {f"discord:{mid}": user for mid, (user, _) in sent.items()}
        seen: dict[tuple[int, int], list[str]] = {}
        for source, story in rows:
            base = str(source).removesuffix(":reply")
            seen.setdefault((author[base], int(story)), []).append(str(source))
        for sequence in seen.values():
            for earlier, later in itertools.pairwise(sequence):
                if later.endswith(":reply"):
                    assert later == f"{earlier}:reply", sequence

        # Every answered exchange reflected exactly once, into its author's memories only.
        await _drain(echo, ollama)
        store = echo.runtime.store
        rows = await store.fetchall("SELECT user_id, text FROM memories")
        made = [(int(r[0]), TAG.search(str(r[1])).group(0)) for r in rows]  # type: ignore[union-attr]
        assert sorted(t for _, t in made) == sorted(replied)
        owner = {tag: user for user, tag in sent.values()}
        assert all(owner[tag] == user for user, tag in made)
        statuses = await store.fetchall("SELECT status, count(*) FROM outbox GROUP BY status")
        assert dict((str(r[0]), int(r[1])) for r in statuses) == {"done": len(replied)}

        # Isolation: no turn ever used another person's memory, nor a DM memory in a guild.
        leaks = await store.fetchone(
            "SELECT count(*) FROM turn_selections s JOIN turns t ON t.id = s.turn_id"
            " JOIN memories m ON m.id = s.memory_id"
            " WHERE m.user_id != t.user_id OR (m.origin = 'dm' AND t.origin != 'dm')"
        )
        assert leaks is not None and leaks[0] == 0
        served = 0
        for path, payload in ollama.calls:
            if path != "/api/chat" or "format" in payload:
                continue
            asker = TAG.search(payload["messages"][-1]["content"])
            system = "\n".join(m["content"] for m in payload["messages"] if m["role"] == "system")
            for line in system.splitlines():
                if line.startswith("- (fact") and (found := TAG.search(line)) and asker:
                    served += 1
                    assert found.group(1) == asker.group(1)
        assert served > 0  # memories were recalled while others were being written

        # Nothing crashed: no error and no traceback in the log.
        assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []


async def test_a_flood_costs_the_flooder_not_the_others(tmp_path: Path, ollama: FakeOllama) -> None:
    ollama.set("/api/chat", "slow", delay=0.05)
    async with _bot_with(tmp_path, ollama, discord=EACH_A_TURN) as (echo, rec):
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        flood = [fakes.message(echo, channel, author_id=1, content=f"spam {n}") for n in range(50)]
        calm = fakes.message(echo, channel, author_id=2, content="Bonjour")
        await asyncio.gather(*(cog.on_message(m) for m in flood), cog.on_message(calm))
        answers = _answers(rec)
        assert len(answers[calm.id]) == 1 and answers[calm.id][0] != SLOW_DOWN
        # One in flight and three waiting are answered, in the order they were sent.
        answered = [m.id for m in flood if m.id in answers and answers[m.id] != [SLOW_DOWN]]
        assert answered == [m.id for m in flood[:4]]
        notices = [mid for mid, texts in answers.items() if texts == [SLOW_DOWN]]
        assert len(notices) == 1  # told once, not 46 times
        status = echo.runtime.engine.status()
        assert status.admission.refused == 46 and status.admission.notices == 1
        assert status.admission.waiting == 0
        chats = [p for path, p in ollama.calls if path == "/api/chat" and "format" not in p]
        assert len(chats) == 5  # the refused messages cost no LLM call
        typing = [s for s in rec.sent if s.path.endswith("/typing")]
        assert len(typing) == 5  # nor a "typing…" indicator


async def test_the_outbox_is_drained_in_turn_and_bounded_per_person(store: Store) -> None:
    def exchange(user: int, n: int) -> Exchange:
        return Exchange(f"x{user}-{n}", user, 10, "111", f"u{user}", f"message {n}", "ok")

    async def enqueue(user: int, n: int) -> int:
        return await store.transact(
            lambda tx: outbox.enqueue(tx, exchange(user, n), now=float(n), backlog=5)
        )

    # The flooder's twelve exchanges and two others' arrive interleaved, all at once.
    dropped = await asyncio.gather(
        *(enqueue(1, n) for n in range(12)), *(enqueue(u, n) for u in (2, 3) for n in range(2))
    )
    # Five kept, and the oldest (the worker may be reflecting on it): the six between dropped.
    assert sum(dropped) == 6
    rows = await store.fetchall("SELECT exchange_id, status FROM outbox ORDER BY id")
    status = {str(r[0]): str(r[1]) for r in rows}
    assert [x for x, s in status.items() if s == "dropped"] == [f"x1-{n}" for n in range(1, 7)]
    assert all(status[f"x{u}-{n}"] == "pending" for u in (2, 3) for n in range(2))
    # Each person's oldest, the longest waiting first; then each one's second, and so on.
    due = await outbox.due(store, now=100.0, limit=7)
    expected = ["x1-0", "x2-0", "x3-0", "x1-7", "x2-1", "x3-1", "x1-8"]
    assert [r.exchange.exchange_id for r in due] == expected


@pytest.mark.parametrize("seed", [3, 4])
async def test_pools_stay_equal_to_a_rebuild_under_concurrent_recalls_and_writes(
    store: Store, seed: int
) -> None:
    """Recalls of one person in two places interleaved with that person's /remember, /pin and
    /forget at every await: afterwards each cached pool equals a fresh build, and no recall
    ever served a forgotten memory after its erasure returned."""
    from memory import Engine, manage
    from memory.recall.selection import RankedPool
    from memory.store.tables import memories as memory_store

    rng = random.Random(seed)
    engine = Engine(store, embedder=None)
    places = [(10, "111"), (20, "111")]
    forgotten: set[int] = set()
    live: list[int] = []

    async def recall(story: int, origin: str) -> None:
        await asyncio.sleep(rng.uniform(0, 0.005))
        gone_before = set(forgotten)
        result = await engine.recall(user_id=1, story_id=story, origin=origin, text="chat")
        assert not {s.memory.id for s in result.selected} & gone_before

    async def write(n: int) -> None:
        await asyncio.sleep(rng.uniform(0, 0.005))
        choice = rng.random()
        if choice < 0.6 or not live:
            text = f"Aime le chat numéro {n} {rng.random()}"
            outcome = await manage.remember(store, user_id=1, story_id=10, origin="111", text=text)
            if outcome.memory_id is not None:
                live.append(outcome.memory_id)
        elif choice < 0.8:
            await manage.set_pinned(store, 1, rng.choice(live), True)
        else:
            victim = live.pop(rng.randrange(len(live)))
            await manage.forget(store, 1, victim)
            forgotten.add(victim)

    work = [recall(*rng.choice(places)) for _ in range(60)] + [write(n) for n in range(40)]
    rng.shuffle(work)
    await asyncio.gather(*work)
    for story, origin in places:
        pool, _ = await engine.recaller.pool(1, story, origin)
        fresh = await memory_store.visible(store, 1, story, origin, counters=False)
        assert pool == RankedPool.build(fresh)


async def test_one_person_in_forty_channels_does_not_take_the_llm_from_the_others(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.set("/api/chat", "slow", delay=0.2)
    async with _bot_with(tmp_path, ollama, limits={"max_concurrent_chats": 4}) as (echo, rec):
        engine = echo.runtime.engine
        engine.config = dataclasses.replace(engine.config, chat_deadline=1.5)
        cog: Any = echo.get_cog("Conversation")
        mention = f"<@{fakes.BOT_ID}> hello"
        spread = [
            fakes.message(echo, fakes.text_channel(echo, 500 + n), author_id=1, content=mention,
                          mentions=[fakes.BOT_ID])
            for n in range(40)
        ]  # fmt: skip
        other = fakes.message(echo, fakes.dm_channel(echo, 77, 2), author_id=2, content="Salut")
        await asyncio.gather(*(cog.on_message(m) for m in spread), cog.on_message(other))
        answers = _answers(rec)
        assert answers[other.id] == ["D'accord."]  # not "I can't reach my language model"
        status = echo.runtime.engine.status().admission
        # Two in flight and six waiting for the person in all places; the rest turned away.
        assert status.refused == 32 and status.notices == 1
        assert sum(1 for m in spread if answers.get(m.id) == ["D'accord."]) == 8


async def test_a_message_delivered_again_while_it_waits_in_line_is_answered_once(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.set("/api/chat", "slow", delay=0.1)
    async with _bot_with(tmp_path, ollama, discord=EACH_A_TURN) as (echo, rec):
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        first = fakes.message(echo, channel, author_id=1, content="un")
        second = fakes.message(echo, channel, author_id=1, content="deux")
        copies = [fakes.message(echo, channel, author_id=1, content="deux", message_id=second.id)
                  for _ in range(5)]  # fmt: skip
        await asyncio.gather(cog.on_message(first), *(cog.on_message(m) for m in copies))
        assert _answers(rec) == {first.id: ["D'accord."], second.id: ["D'accord."]}
        assert echo.runtime.engine.status().admission.refused == 0


async def test_a_refused_typing_indicator_does_not_cost_the_reply(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        rec.refuse_typing = True
        cog: Any = echo.get_cog("Conversation")
        channel = fakes.text_channel(echo, CHANNEL)
        msgs = [fakes.message(echo, channel, author_id=u, content="Salut") for u in (1, 2, 3)]
        await asyncio.gather(*(cog.on_message(m) for m in msgs))
        assert rec.contents() == ["D'accord."] * 3
