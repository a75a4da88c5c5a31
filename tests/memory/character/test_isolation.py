"""Characters are kept apart as people are: across random conversations of several people with
several characters in one channel, answered at once with random latencies, a character's
prompts never hold what anyone told another character (the oracle: who told whom each canary),
unless the operator shares a person's memories between characters: then that person's own are
there, and still nobody else's. Erasure per character
and across characters leaves 0 bytes of the canaries it covers. On the `store` fixture's backend."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from memory import Character, Characters, Engine, Forbidden, Incoming, MemoryConfig
from memory.backends.chat import ChatResult, Message
from memory.errors import StoreError
from memory.manage import export, forgetting
from memory.store import Store
from memory.write.worker import ReflectionWorker
from tests.fakes import canary

GUILD = "111"
CHANNEL = 500
PEOPLE = (1, 2, 3)
KEYS = ("nyx", "brann", "sel")


class Chat:
    """Replies after a random pause and keeps each reply prompt; reflects as a copying model
    would (tests.fakes.canary): a canary told becomes a memory, an anchor, a summary line."""

    model = "fake-chat"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.prompts: list[str] = []

    async def chat(
        self, messages: Sequence[Message], *, schema: Mapping[str, Any] | None = None,
        deadline: float, max_tokens: int | None = None,
    ) -> ChatResult:  # fmt: skip
        await asyncio.sleep(self.rng.random() / 100)
        if schema is not None:
            asked = json.loads(messages[-1]["content"])
            return ChatResult(json.dumps(canary.reflection(asked, str(asked.get("person")))))
        self.prompts.append(json.dumps(list(messages), ensure_ascii=False))
        return ChatResult("D'accord.")


def _cast(*, shared: bool) -> Characters:
    return Characters(
        [Character(name=k.title(), persona=f"Tu es {k.title()}.", key=k) for k in KEYS],
        shared=shared,
    )


def _code(person: int, key: str, n: int) -> str:
    return f"{person}{KEYS.index(key)}{chr(65 + n)}CANARY{person}{KEYS.index(key)}{n:02d}"


async def _converse(store: Store, *, shared: bool, seed: int) -> tuple[Engine, Chat, dict]:
    """Random conversations, all at once; return who told whom which canary."""
    rng = random.Random(seed)
    chat = Chat(rng)
    engine = Engine(
        store, embedder=None, chat=chat, characters=_cast(shared=shared),
        config=MemoryConfig(turn_queue=20),
    )  # fmt: skip
    worker = ReflectionWorker(store, chat, character_name="x", characters=engine.characters)
    told: dict[tuple[int, str], list[str]] = {}
    said = []
    for n in range(12):
        person, key = rng.choice(PEOPLE), rng.choice(KEYS)
        code = _code(person, key, n)
        told.setdefault((person, key), []).append(code)
        said.append(
            Incoming(f"t:{n}", person, f"p{person}", CHANNEL, GUILD, f"Mon code est {code}.", key)
        )

    async def one(message: Incoming) -> None:
        await asyncio.sleep(rng.random() / 50)
        await engine.turn(message)

    await asyncio.gather(*(one(m) for m in said))
    while await worker.run_due(limit=50):
        pass
    await worker.close()
    return engine, chat, told


async def _asked(engine: Engine, chat: Chat, person: int, key: str) -> str:
    chat.prompts.clear()
    await engine.turn(
        Incoming(f"q:{person}:{key}", person, f"p{person}", CHANNEL, GUILD, "Tu te souviens ?", key)
    )
    return chat.prompts[-1]


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("seed", [3, 17])
async def test_a_character_never_hears_what_a_person_told_another_unless_shared(
    store: Store, shared: bool, seed: int
) -> None:
    engine, chat, told = await _converse(store, shared=shared, seed=seed)
    for person in PEOPLE:
        for key in KEYS:
            prompt = await _asked(engine, chat, person, key)
            assert f"Tu es {key.title()}." in prompt
            own = set(told.get((person, key), []))
            # What the person told the others; what anyone else told the others. What others
            # told this character in this channel is its story's (history, summary): allowed.
            theirs = {
                c for (p, k), codes in told.items() if p == person and k != key for c in codes
            }
            elsewhere = {
                c for (p, k), codes in told.items() if p != person and k != key for c in codes
            }
            found = set(canary.CANARY.findall(prompt))
            assert own <= found, (person, key, own - found)
            assert not found & elsewhere, (person, key, found & elsewhere)
            if shared:
                assert theirs <= found, (person, key, theirs - found)
            else:
                assert not found & theirs, (person, key, found & theirs)


async def test_forgetting_one_character_keeps_the_others_and_forgetting_all_keeps_nothing(
    store: Store, tmp_path: Path
) -> None:
    engine, _, told = await _converse(store, shared=False, seed=5)
    person = max(PEOPLE, key=lambda p: len({k for (q, k) in told if q == p}))
    keys = sorted({k for (q, k) in told if q == person})
    assert len(keys) >= 2, told
    gone, kept = keys[0], keys[1:]
    await forgetting.forget_person(store, person, engine=engine, character=gone)
    for code in told[(person, gone)]:
        assert await canary.stored(store, tmp_path, code) == 0, code
    for key in kept:
        for code in told[(person, key)]:
            assert await canary.stored(store, tmp_path, code) > 0, code
    others = [c for (p, _), codes in told.items() if p != person for c in codes]
    await forgetting.forget_person(store, person, engine=engine)
    for key in keys:
        for code in told[(person, key)]:
            assert await canary.stored(store, tmp_path, code) == 0, code
    assert all([await canary.stored(store, tmp_path, c) > 0 for c in others])


async def test_a_person_forgets_their_own_message_to_any_character(
    store: Store, tmp_path: Path
) -> None:
    engine, _, told = await _converse(store, shared=False, seed=11)
    (person, _), codes = next((pk, c) for pk, c in told.items() if pk[1] != KEYS[0])
    for n in range(12):
        stored = await forgetting.resolve(store, f"t:{n}")
        if stored is not None and codes[0] in stored.content:
            break
    else:
        raise AssertionError("the message is not stored")
    other = next(p for p in PEOPLE if p != person)
    with pytest.raises(Forbidden):
        await forgetting.forget_message(store, stored, actor_id=other, engine=engine)
    report = await forgetting.forget_message(store, stored, actor_id=person, engine=engine)
    assert report.whose == "your"
    assert await canary.stored(store, tmp_path, codes[0]) == 0


async def test_forget_me_finds_what_a_character_kept_while_the_database_refused_the_message(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database refuses the message (busy): the turn answers anyway, the exchange is
    written later and reflected under Brann's ids for the person; /export and /forget-me
    find them."""
    chat = Chat(random.Random(1))
    engine = Engine(store, embedder=None, chat=chat, characters=_cast(shared=False))
    worker = ReflectionWorker(store, chat, character_name="x", characters=engine.characters)
    code = "BU5CANARY5555"
    transact = store.transact
    refused = iter([True])

    async def busy_once(fn: Any) -> Any:
        if next(refused, False):
            raise StoreError("database is locked")
        return await transact(fn)

    monkeypatch.setattr(store, "transact", busy_once)
    said = Incoming("b:1", 7, "p7", CHANNEL, GUILD, f"Mon code est {code}.", "brann")
    assert await engine.turn(said) is not None
    await engine.flush_pending()
    while await worker.run_due(limit=50):
        pass
    await worker.close()
    assert await canary.stored(store, tmp_path, code) > 0
    exported = await export.export(store, 7, default_served="where_learned", cast=engine.characters)
    assert [m["character"] for m in exported["memories"] if code in m["text"]] == ["brann"]
    await forgetting.forget_person(store, 7, engine=engine)
    assert await canary.stored(store, tmp_path, code) == 0
