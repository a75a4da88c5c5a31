"""The story read once per turn (memory.store.queries.story_snapshot, memory.context.story_view),
on both backends: what the one statement gives equals what the separate reads gave, part for
part; the prompt built on it is the one the separate reads built; the prompt and the
conversation query of a turn see the same story while others change it; a warm turn reads the
story once."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace

import httpx

from bench.statements import warm_turn
from memory import Engine, Incoming
from memory.backends.chat import OllamaChat
from memory.backends.embedders import OllamaEmbedder
from memory.context.builder import ContextBuilder, ContextConfig
from memory.context.prompt import Character
from memory.context.story_view import read_story
from memory.model import CondensedHistory, Kind, Scope, Source
from memory.recall.conversation import CONVERSATION_MESSAGES, CONVERSATION_WINDOW
from memory.store import Store, Tx
from memory.store.queries import moderation
from memory.store.queries.story_snapshot import StorySnapshot
from memory.store.tables import anchors, history, memories, positions, story_state
from memory.store.tables import story_context as stored
from memory.vectors.indexer import Indexer
from memory.write.stances import PROMPT_POSITIONS
from tests.fakes.ollama import Chaos, FakeOllama

GUILD = "111"
# A warm turn's statements that read the story (bench/results/statements.md: read apart, 10).
STORY_READS = 1
# State fields whose order differs between collations (upper case, accents, underscore).
FIELDS = ("mood", "Closeness", "énergie", "trust", "_tension", "Zèle")
CHARACTER = Character("Écho", "Tu es Écho.")


async def position_speakers(store: Store, story_id: int) -> dict[int, tuple[str, ...]]:
    """Main's read of who shaped each position of a story (the one read took its place)."""
    rows = await store.fetchall(
        "SELECT s.position_id, (SELECT author_name FROM messages WHERE story_id = p.story_id"
        " AND user_id = s.user_id ORDER BY id DESC LIMIT 1) FROM position_sources s"
        " JOIN positions p ON p.id = s.position_id"
        " WHERE p.story_id = ? AND s.user_id IS NOT NULL ORDER BY s.position_id, s.exchange_id",
        (story_id,),
    )
    found: dict[int, list[str]] = {}
    for r in rows:
        names = found.setdefault(int(r[0]), [])
        if r[1] is not None and str(r[1]) not in names:
            names.append(str(r[1]))
    return {k: tuple(v) for k, v in found.items()}


async def separate_reads(
    store: Store, story_id: int, *, before_id: int | None, history_messages: int
) -> StorySnapshot:
    """The slow truth: what the turn read before, one query per part, as it read them."""
    window = await history.recent(
        store, story_id, limit=history_messages, before_id=before_id, include_excluded=True
    )
    conversation = await history.recent(
        store, story_id, limit=CONVERSATION_WINDOW, before_id=before_id
    )
    freshest = (await positions.for_story(store, story_id))[:PROMPT_POSITIONS]
    speakers = await position_speakers(store, story_id)
    return StorySnapshot(
        story_id=story_id,
        history=tuple(window),
        conversation=tuple(conversation),
        summary=await history.summary(store, story_id),
        anchors=tuple(a for a in await moderation.anchors(store, story_id) if a.dropped_at is None),
        positions=tuple(freshest),
        speakers={p.id: speakers[p.id] for p in freshest if p.id in speakers},
        state=tuple((await story_state.for_story(store, story_id)).items()),
        strategy=await stored.strategy(store, story_id),
        condensed=await stored.condensed(store, story_id),
    )


async def random_story(store: Store, rnd: random.Random, story_id: int) -> list[int]:
    """A story with what the loops keep, each part there or not: messages (some excluded, some
    replies), anchors (a reflection's, a moderator's, some dropped), positions (tied dates,
    sources known and not), state, summary, strategy, condensed history. Its message ids."""
    people = [story_id * 100 + p for p in range(rnd.randint(1, 4))]

    async def run(tx: Tx) -> list[int]:
        ids: list[int] = []
        for n in range(rnd.choice([0, 1, 5, 15, 40])):
            if rnd.random() < 0.3:
                await history.add_reply(
                    tx, source_id=f"{story_id}:{n}:reply", story_id=story_id, author_name="Écho",
                    content=f"réponse {n}", now=float(n),
                )  # fmt: skip
                continue
            who = rnd.choice(people)
            row = await history.add_user_message(
                tx, source_id=f"{story_id}:{n}", story_id=story_id, user_id=who,
                author_name=f"p{who}-{n % 3}", content=f"message {n} de {who}", now=float(n),
            )  # fmt: skip
            assert row is not None
            ids.append(row)
            if rnd.random() < 0.4:
                await history.set_excluded(tx, row, True)
        for n in range(rnd.randint(0, 6)):
            if rnd.random() < 0.5:
                anchor = await moderation.add_anchor(tx, story_id, f"fait {n}", by=9, now=float(n))
            else:
                # A person who never wrote here too: no speaker known.
                source = Source(f"{story_id}:{n}", rnd.choice([*people, 999]))
                anchor = await anchors.add_from_exchange(
                    tx, story_id, f"fait {n}", now=float(n), source=source
                )
            if rnd.random() < 0.3:
                await moderation.drop_anchor(tx, story_id, anchor, "faux", by=9, now=50.0)
        for n in range(rnd.choice([0, 2, 5, 8])):
            pid = await positions.create(
                tx, story_id, f"sujet {n}", f"idée {n}", "parce que", now=float(rnd.randint(1, 4))
            )
            for k in range(rnd.randint(0, 3)):
                who = rnd.choice([*people, None, 999])
                await positions.shaped_by(tx, pid, Source(f"{story_id}:{n}:{k}", who))
            if rnd.random() < 0.3:
                await positions.reanchor(tx, pid, f"idée {n}'", "encore", now=float(n))
        for name in rnd.sample(FIELDS, rnd.randint(0, len(FIELDS))):
            await story_state.set_value(
                tx, story_id, name, rnd.uniform(-1, 1), change=0.1, now=1.0,
                source=Source(f"{story_id}:s"),
            )  # fmt: skip
        if rnd.random() < 0.7:
            await history.set_summary(
                tx, story_id, f"Résumé de {story_id}.", 1.0, source=Source(f"{story_id}:r")
            )
        if rnd.random() < 0.5:
            await stored.set_strategy(tx, story_id, rnd.choice(["truncate", None]), now=1.0)
        if ids and rnd.random() < 0.6:
            through = rnd.choice(ids)
            cut = [i for i in ids if i <= through]
            await stored.set_condensed(
                tx, story_id,
                CondensedHistory(tuple(f"phrase {i}" for i in cut), through, (cut[0],),
                                 tuple(cut)),
                now=1.0,
            )  # fmt: skip
        return ids

    return await store.transact(run)


async def test_the_one_read_gives_what_the_separate_reads_gave(store: Store) -> None:
    """Thirty stories in one database, each read before its end, at a message, past every id,
    in windows of several sizes: the one statement gives what the queries of each part gave,
    part for part, whatever the story holds."""
    rnd = random.Random(30)
    for story_id in range(1, 31):
        ids = await random_story(store, rnd, story_id)
        for before_id in (None, rnd.choice([*ids, 1]), 10**9):
            for messages in rnd.sample([0, 1, 3, 12, 200], 2):
                one = await read_story(
                    store, story_id, before_id=before_id, history_messages=messages
                )
                assert one == await separate_reads(
                    store, story_id, before_id=before_id, history_messages=messages
                ), (story_id, before_id, messages)


async def test_the_conversation_window_reaches_past_a_short_prompt_window(store: Store) -> None:
    """The prompt's last 2 messages are excluded ones: the conversation query still gets the
    last 12 nobody excluded, from further back, in the same read."""

    async def run(tx: Tx) -> None:
        for n in range(20):
            row = await history.add_user_message(
                tx, source_id=f"m{n}", story_id=5, user_id=1, author_name="Ana",
                content=f"message {n}", now=1.0,
            )  # fmt: skip
            if n >= 16:
                assert row is not None
                await history.set_excluded(tx, row, True)

    await store.transact(run)
    one = await read_story(store, 5, before_id=None, history_messages=2)
    assert [m.content for m in one.history] == ["message 18", "message 19"]
    assert all(m.excluded for m in one.history)
    assert [m.content for m in one.conversation] == [f"message {n}" for n in range(4, 16)]


async def test_the_prompt_on_the_one_read_is_the_prompt_on_the_separate_reads(
    store: Store,
) -> None:
    """The prompt (every message, byte for byte) a turn builds on the one read is the one it
    built on the separate reads, small budgets (the condensed history at work) and large."""
    rnd = random.Random(7)
    for story_id in range(1, 16):
        ids = await random_story(store, rnd, story_id)
        for config in (ContextConfig(context_length=500, response_tokens=100), ContextConfig()):
            builder = ContextBuilder(store, character=CHARACTER, chat_model="m", config=config)
            before_id = rnd.choice([None, *ids])
            args = dict(before_id=before_id, history_messages=config.history_messages)
            snapshots = (
                await read_story(store, story_id, **args),  # type: ignore[arg-type]
                await separate_reads(store, story_id, **args),  # type: ignore[arg-type]
            )
            plans = [
                await builder.plan(
                    user_name="Marie", origin=GUILD, text="Et maintenant ?", selected=[], story=s
                )
                for s in snapshots
            ]
            assert plans[0].messages == plans[1].messages, (story_id, config)
            assert plans[0].decisions == plans[1].decisions


async def test_a_warm_turn_reads_the_story_once(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """A counter, not a timing: a warm turn on a story with everything the loops keep (a
    condensed history included) reads the story in one statement (read apart: 10)."""
    counts, trace = await warm_turn(store, http, ollama.url)
    assert counts.story_reads <= STORY_READS, trace.story_reads()
    seen = await read_story(store, 10, before_id=None, history_messages=200)
    assert seen.condensed.sentences and seen.anchors and seen.positions and seen.state
    assert seen.summary and seen.strategy == "summarize" and seen.conversation


def _engine(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Engine:
    return Engine(
        store, embedder=OllamaEmbedder(http, ollama.url, "nomic-embed-text"),
        chat=OllamaChat(http, ollama.url, "m"), character=CHARACTER,
    )  # fmt: skip


def _said(user: int, story_id: int, n: int) -> str:
    return f"tour {n} de {user} dans {story_id} : le chat Félix dort"


def _conversations(ollama: FakeOllama) -> dict[str, list[str]]:
    """Per message: the person's earlier messages its conversation query was made of."""
    found = {}
    for path, payload in ollama.calls:
        if path == "/api/embed" and payload["input"][0].startswith("tour "):
            texts = payload["input"]
            found[texts[0]] = texts[1].split("\n")[:-1] if len(texts) > 1 else []
    return found


async def test_concurrent_turns_see_one_story_in_the_prompt_and_the_conversation(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    """The twin: three stories, three people each, rounds of everyone's turns at once with
    random latencies, while moderators keep excluding and including messages. Each turn's
    conversation query is the person's last messages among the last CONVERSATION_WINDOW its
    prompt shows: the two come from the same read, never from two moments of the story."""
    people = [(s, s * 10 + p) for s in (1, 2, 3) for p in range(3)]

    async def remember(tx: Tx) -> None:
        for story_id, user in people:
            await memories.insert(
                tx, user_id=user, text="Son chat Félix dort au soleil", kind=Kind.FACT,
                scope=Scope.GLOBAL, story_id=story_id, origin=GUILD, confidence=0.9, now=1.0,
            )  # fmt: skip

    await store.transact(remember)
    engine = _engine(store, ollama, http)
    engine.config = replace(engine.config, turn_embedding_timeout=30.0)
    await Indexer(store, engine.embedder).run_once()  # type: ignore[arg-type]
    ollama.chaos = Chaos(seed=11, max_delay=0.02, failure_rate=0.0)
    rnd = random.Random(11)
    done = asyncio.Event()

    async def moderate() -> None:
        while not done.is_set():
            story_id = rnd.choice((1, 2, 3))
            shown = await history.recent(store, story_id, limit=8, include_excluded=True)
            mine = [m for m in shown if m.role == "user"]
            if mine:
                m = rnd.choice(mine)
                await store.transact(lambda tx, m=m: history.set_excluded(tx, m.id, not m.excluded))
            await asyncio.sleep(rnd.uniform(0, 0.004))

    moderator = asyncio.create_task(moderate())
    try:
        for n in range(4):
            replies = await asyncio.gather(*(
                engine.turn(Incoming(f"{s}:{u}:{n}", u, f"p{u}", s, GUILD, _said(u, s, n)))
                for s, u in people
            ))  # fmt: skip
            assert all(r is not None for r in replies)
    finally:
        done.set()
        await moderator
    conversations = _conversations(ollama)
    checked = 0
    for path, payload in ollama.calls:
        if path != "/api/chat":
            continue
        *shown, last = [m for m in payload["messages"] if m["role"] != "system"]
        speaker, _, text = last["content"].partition(": ")
        window = shown[-CONVERSATION_WINDOW:]
        own = [
            m["content"].removeprefix(f"{speaker}: ")
            for m in window
            if m["role"] == "user" and m["content"].startswith(f"{speaker}: ")
        ]
        assert conversations[text] == own[-CONVERSATION_MESSAGES:], text
        checked += bool(own)
    assert checked >= 9  # not vacuous: conversations were there to compare
