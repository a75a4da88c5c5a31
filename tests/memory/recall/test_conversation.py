"""The recent conversation as a second query, through real turns: a real SQLite file, a loopback
server speaking the Ollama API (word vectors: shared words are close), the engine's own path."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from memory import Engine, Incoming
from memory.backends.chat import OllamaChat
from memory.backends.embedders import OllamaEmbedder
from memory.context.prompt import Character
from memory.context.story_view import read_story
from memory.errors import StoreError
from memory.model import Kind, Reason, Scope
from memory.recall.conversation import CONVERSATION_MESSAGES, query_text, recent_messages
from memory.store import Store, Tx, open_store
from memory.store.tables import history, memories, turns
from memory.vectors.indexer import Indexer
from tests.fakes.ollama import Chaos, FakeOllama

GUILD = "111"
# One topic per person of a story; every person holds a memory of each (their own copy).
TOPICS = [
    ("Trains for the half marathon race in spring", "The half marathon race in spring, ran again"),
    ("Plays the cello with the orchestra on Thursdays", "The cello and the orchestra, rehearsal"),
    ("Bakes sourdough bread every weekend", "Fed the sourdough every weekend for bread"),
]
FILLERS = 150
LATER = "I am so nervous about it"


async def _memories(store: Store, user_id: int, story_id: int) -> list[int]:
    """The person's topic memories (returned), among fillers no message shares a word with."""

    async def run(tx: Tx) -> list[int]:
        ids = []
        for i in range(FILLERS):
            await memories.insert(
                tx, user_id=user_id, text=f"zq{user_id}x{i} wk{i}", kind=Kind.FACT,
                scope=Scope.GLOBAL, story_id=story_id, origin=GUILD, confidence=1.0, now=2.0,
            )  # fmt: skip
        for text, _ in TOPICS:
            memory = await memories.insert(
                tx, user_id=user_id, text=text, kind=Kind.FACT, scope=Scope.GLOBAL,
                story_id=story_id, origin=GUILD, confidence=0.5, now=1.0,
            )  # fmt: skip
            ids.append(memory.id)
        return ids

    return await store.transact(run)


def _engine(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Engine:
    return Engine(
        store, embedder=OllamaEmbedder(http, ollama.url, "nomic-embed-text"),
        chat=OllamaChat(http, ollama.url, "m"), character=Character("Écho", "Tu es Écho."),
    )  # fmt: skip


async def test_the_conversation_query_reads_the_persons_own_last_messages(store: Store) -> None:
    """Only this person's messages in this story, oldest first, the last few; never someone
    else's, never the character's replies, never a message they excluded from the context."""

    async def said(tx: Tx, source: str, user_id: int, text: str, story_id: int = 10) -> int:
        row = await history.add_user_message(
            tx, source_id=source, story_id=story_id, user_id=user_id, author_name="x",
            content=text, now=1.0,
        )  # fmt: skip
        assert row is not None
        return row

    async def run(tx: Tx) -> int:
        await said(tx, "a0", 1, "first of mine")
        await said(tx, "b0", 2, "someone else")
        await said(tx, "a1", 1, "second of mine")
        await history.add_reply(tx, source_id="a1:reply", story_id=10, author_name="Écho",
                                content="the reply", now=1.0)  # fmt: skip
        await said(tx, "o0", 1, "mine in another story", story_id=11)
        hidden = await said(tx, "a2", 1, "excluded by me")
        await history.set_excluded(tx, hidden, True)
        await said(tx, "a3", 1, "third of mine")
        await said(tx, "a4", 1, "fourth of mine")
        return await said(tx, "a5", 1, "the message itself")

    before = await store.transact(run)
    story = await read_story(store, 10, before_id=before, history_messages=200)
    got = recent_messages(story.conversation, 1)
    assert got == ("second of mine", "third of mine", "fourth of mine")
    assert len(got) == CONVERSATION_MESSAGES
    assert recent_messages(story.conversation, 3) == ()
    # The query: the earlier messages, then the message; none without earlier messages.
    assert query_text(got, "now this") == "second of mine\nthird of mine\nfourth of mine\nnow this"
    assert query_text((), "now this") == "" and query_text(("  ",), "now this") == ""


async def test_what_a_person_said_just_before_recalls_and_why_says_so(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """'I am so nervous about it' after talking about the half marathon: the half marathon comes
    back as recalled by what they said just before, with its cosine to that; a person who said
    nothing before gets no such memory; the message and the conversation go in one request."""
    race = (await _memories(store, 1, 10))[0]
    await _memories(store, 2, 10)
    engine = _engine(store, ollama, http)
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    await engine.turn(Incoming("m1", 1, "Ana", 10, GUILD, TOPICS[0][1]))
    requests = ollama.count("/api/embed")
    await engine.turn(Incoming("m2", 1, "Ana", 10, GUILD, LATER))
    assert ollama.count("/api/embed") == requests + 1
    assert ollama.embedded_texts()[-2:] == [LATER, f"{TOPICS[0][1]}\n{LATER}"]
    turn = await turns.last(store, 1, 10)
    assert turn is not None
    heard = [s for s in turn.selected if s.reason is Reason.CONVERSATION]
    assert [s.memory.id for s in heard] == [race]
    assert heard[0].score is not None and heard[0].score > 0.3 and heard[0].matched == ()
    await engine.turn(Incoming("n1", 2, "Bo", 10, GUILD, LATER))
    alone = await turns.last(store, 2, 10)
    assert alone is not None and not [s for s in alone.selected if s.reason is Reason.CONVERSATION]
    assert ollama.embedded_texts()[-1] == LATER


async def test_zero_conversation_places_keep_the_message_alone(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """`[memory] conversation_slots = 0`: the earlier messages are neither read into the query
    nor embedded; nothing is recalled by them."""
    await _memories(store, 1, 10)
    engine = _engine(store, ollama, http)
    engine.config = replace(engine.config, conversation_slots=0)
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    await engine.turn(Incoming("m1", 1, "Ana", 10, GUILD, TOPICS[0][1]))
    await engine.turn(Incoming("m2", 1, "Ana", 10, GUILD, LATER))
    assert ollama.embedded_texts()[-1] == LATER
    turn = await turns.last(store, 1, 10)
    assert turn is not None and not [s for s in turn.selected if s.reason is Reason.CONVERSATION]


async def test_concurrent_people_each_recall_by_their_own_conversation(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The twin: three stories, three people each, everyone's second message at once with
    random latencies; each person's conversation recalls their own topic's memory, never the
    topic a neighbour in the same story talked about (everyone holds a memory of every topic)."""
    people = [(story, story * 10 + p, p) for story in (1, 2, 3) for p in range(3)]
    topic_memory = {}
    for story, user, topic in people:
        topic_memory[user] = (await _memories(store, user, story))[topic]
    engine = _engine(store, ollama, http)
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    ollama.chaos = Chaos(seed=5, max_delay=0.02, failure_rate=0.0)
    for story, user, topic in people:  # the stories' first round, interleaved
        await engine.turn(Incoming(f"a{user}", user, f"p{user}", story, GUILD, TOPICS[topic][1]))
    await asyncio.gather(*(
        engine.turn(Incoming(f"b{user}", user, f"p{user}", story, GUILD, LATER))
        for story, user, _ in people
    ))  # fmt: skip
    by_conversation = 0
    for story, user, _ in people:
        turn = await turns.last(store, user, story)
        assert turn is not None
        heard = [s.memory.id for s in turn.selected if s.reason is Reason.CONVERSATION]
        assert heard in ([topic_memory[user]], [])
        # Served either way: the message alone sometimes ranks it among its places (word
        # vectors: a chance cosine), then it is the message's and /why says so.
        reason = {s.memory.id: s.reason for s in turn.selected}[topic_memory[user]]
        assert reason is (Reason.CONVERSATION if heard else Reason.SEMANTIC)
        by_conversation += bool(heard)
    assert by_conversation >= 6


async def test_migration_18_keeps_past_turns_and_accepts_the_new_reason(tmp_path: Path) -> None:
    """A database from before the reason existed keeps what /why shows of its past turns; the
    new reason is accepted, an unknown one still refused."""
    path = tmp_path / "old.sqlite3"
    async with await open_store(path, migrate_to=16) as old:

        async def past(tx: Tx) -> None:
            memory = await memories.insert(
                tx, user_id=1, text="Has a cat", kind=Kind.FACT, scope=Scope.GLOBAL,
                story_id=10, origin=GUILD, confidence=1.0, now=1.0,
            )  # fmt: skip
            await tx.execute("INSERT INTO turns (id, user_id, story_id, origin, degraded,"
                             " created_at) VALUES (7, 1, 10, ?, 0, 1.0)", (GUILD,))  # fmt: skip
            await tx.execute("INSERT INTO turn_selections (turn_id, memory_id, position, reason,"
                             " score, matched) VALUES (7, ?, 0, 'semantic', 0.5, 'cat')",
                             (memory.id,))  # fmt: skip

        await old.transact(past)
    async with await open_store(path) as new:
        turn = await turns.last(new, 1, 10)
        assert turn is not None and [(s.reason, s.score, s.matched) for s in turn.selected] == [
            (Reason.SEMANTIC, 0.5, ("cat",))
        ]
        memory_id = turn.selected[0].memory.id

        def insert(reason: str, position: int) -> Callable[[Tx], Awaitable[object]]:
            return lambda tx: tx.execute(
                "INSERT INTO turn_selections (turn_id, memory_id, position, reason)"
                " VALUES (7, ?, ?, ?)", (memory_id, position, reason),
            )  # fmt: skip

        await new.transact(lambda tx: tx.execute("DELETE FROM turn_selections"))
        await new.transact(insert("conversation", 0))
        with pytest.raises(StoreError, match="CHECK"):
            await new.transact(insert("hunch", 1))
