"""What the scale bench's database holds, and the two ways to write it.

`planned` says which memories exist (person, text, kind, scope, character), `vector` what each
one's vector is; `build` writes them through the product (memories.insert, then the real
indexer: no SQL here), as a person's memories would be written, slowly; bench/scale/loader.py
writes the same rows in bulk. tests/bench/test_scale_loader.py holds the two to the same result.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

MODEL = "bench-scale-embed"
STORY, ORIGIN = 1, "1"
# Memories written per transaction by `build`.
BUILD_CHUNK = 5_000
WORDS = ("tea garden cello Lyon brother nurse piano Saturday train sister cat flight "
         "birthday March bakery river novel chess ferry violin market autumn").split()  # fmt: skip
# The newcomers' message: the words every memory holds (`text`), then the others.
ATTACK = " ".join(["Person", "mentioned", "note", *WORDS])


def vector(text: str, dim: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The bench's vector of `text`: drawn from a generator seeded by the text's hash."""
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
    return np.random.default_rng(seed).standard_normal(dim, dtype=np.float32)


class Embedder:
    """Deterministic unit-free vectors from the text's hash; instant next to a real model."""

    def __init__(self, dim: int) -> None:
        self.model = MODEL
        self.dim = dim

    async def embed(self, texts: Any, *, deadline: float) -> list[list[float]]:
        return [vector(text, self.dim).tolist() for text in texts]


def cast(characters: int) -> Any:
    """A cast of `characters`: the home one (key "default", ids as they are) and others with
    derived ids, as bot.runtime builds it from [[characters]]."""
    from memory import Character, Characters

    keys = ["default", *(f"c{k}" for k in range(1, characters))]
    return Characters([Character(name=f"Bench {k}", persona="", key=k) for k in keys])


def text(person: int, i: int) -> str:
    """Memory `i` of `person`: three words every memory holds, four of WORDS, its number."""
    words = [WORDS[(person * 7 + i * k) % len(WORDS)] for k in (1, 3, 5, 11)]
    return f"Person {person} mentioned {' '.join(words)} (note {i})"


@dataclass(frozen=True, slots=True)
class Planned:
    """One memory of the build, as memories.insert takes it."""

    person: int
    i: int
    key: str
    user_id: int
    story_id: int
    text: str
    kind: Any
    scope: Any


def planned(people: int, per_person: int, characters: int = 1) -> Iterator[Planned]:
    """Every memory of the build in the order of its id: `per_person` for each person, memory i
    being character i mod `characters`'s, under the ids that character keeps them under."""
    from memory.model import Kind, Scope

    played = cast(characters)
    keys = [c.key for c in played]
    kinds = (Kind.FACT, Kind.PREFERENCE, Kind.PROMISE, Kind.EPISODE)
    for person in range(1, people + 1):
        for i in range(per_person):
            key = keys[i % len(keys)]
            yield Planned(
                person, i, key, played.person_id(key, person), played.story_id(key, STORY),
                text(person, i), kinds[i % 4], Scope.STORY if i % 5 == 0 else Scope.GLOBAL,
            )  # fmt: skip


def derived_ids(people: int, characters: int) -> list[tuple[int, str, int, str]]:
    """The ids the characters other than the home one keep each person and the story under,
    as characters.record_ids takes them (what the engine records at a first message)."""
    from memory.store.tables import characters as cast_store

    played = cast(characters)
    rows = []
    for person in range(1, people + 1):
        for key in (c.key for c in played if c.key != played.home):
            rows += [(played.person_id(key, person), cast_store.PERSON, person, key),
                     (played.story_id(key, STORY), cast_store.STORY, STORY, key)]  # fmt: skip
    return rows


async def build(target: str, people: int, per_person: int, dim: int, characters: int = 1) -> None:
    """Write `people` x `per_person` memories through the store, then embed them all."""
    from memory.store import open_store
    from memory.store.tables import characters as cast_store
    from memory.store.tables import memories
    from memory.vectors.indexer import Indexer

    rows = list(planned(people, per_person, characters))
    known = set()
    began = time.perf_counter()
    async with await open_store(target) as store:
        for start in range(0, len(rows), BUILD_CHUNK):
            part = rows[start : start + BUILD_CHUNK]

            async def run(tx: Any, part: list[Planned] = part) -> None:
                for m in part:
                    if m.user_id != m.person and m.user_id not in known:  # as a first message
                        known.add(m.user_id)
                        await cast_store.record_ids(tx, [
                            (m.user_id, cast_store.PERSON, m.person, m.key),
                            (m.story_id, cast_store.STORY, STORY, m.key),
                        ])  # fmt: skip
                    await memories.insert(
                        tx, user_id=m.user_id, text=m.text, kind=m.kind, scope=m.scope,
                        story_id=m.story_id, origin=ORIGIN, confidence=0.9, now=float(m.i),
                    )  # fmt: skip

            await store.transact(run)
            if (start // BUILD_CHUNK) % 20 == 19 or start + len(part) == len(rows):
                print(f"  written {start + len(part):,} / {len(rows):,} "
                      f"({time.perf_counter() - began:,.0f} s)", file=sys.stderr)  # fmt: skip
        print(f"  embedding (fake, {dim}-d) ...", file=sys.stderr)
        await Indexer(store, Embedder(dim), batch_size=512).run_once()
    print(f"  built in {time.perf_counter() - began:,.0f} s", file=sys.stderr)
