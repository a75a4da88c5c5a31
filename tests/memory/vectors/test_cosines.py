"""The message and the conversation scored in one pass over the matrix give exactly what each
scored alone gives: the same cosines, the same cutoffs, the same eligible memories."""

from __future__ import annotations

import asyncio
import random

import httpx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import manage
from memory.backends.embedders import OllamaEmbedder
from memory.recall.selection import eligibility_cutoff
from memory.recall.semantic import VectorCache
from memory.store import Store
from memory.vectors import cosines
from memory.vectors.cosines import Query
from memory.vectors.indexer import Indexer
from tests.fakes.ollama import FakeOllama

MODEL = "nomic-embed-text"


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 70),
    dim=st.integers(1, 12),
    queries=st.integers(1, 3),
    block_rows=st.integers(1, 80),
    rules=st.lists(
        st.tuples(st.floats(-1, 1), st.none() | st.floats(0, 3), st.integers(0, 30)),
        min_size=3, max_size=3,
    ),
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_one_pass_in_blocks_equals_each_query_scored_alone(
    rows: int,
    dim: int,
    queries: int,
    block_rows: int,
    rules: list[tuple[float, float | None, int]],
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, dim)).astype(np.float32)
    ids = np.arange(100, 100 + rows, dtype=np.int64)
    units = [(u / np.linalg.norm(u)).astype(np.float32)
             for u in rng.standard_normal((queries, dim)) + 1e-3]  # fmt: skip
    asks = [Query(u.tolist(), *rules[k]) for k, u in enumerate(units)]

    # Blocks of any size, down to one row: every block boundary is crossed.
    together = cosines.eligible(
        ids, matrix, asks, units, block_bytes=block_rows * dim * 4, blocks_from=0
    )

    for ask, unit, (scores, cutoff) in zip(asks, units, together, strict=True):
        with np.errstate(all="ignore"):  # as similarities: a flag of the BLAS kernel's own
            alone = matrix @ unit
        want = ask.floor
        if ask.relative_sd is not None and alone.size > 1:
            want = eligibility_cutoff(
                alone, floor=ask.floor, relative_sd=ask.relative_sd, places=ask.places
            )
        assert cutoff == pytest.approx(want, abs=1e-5)
        expected = {int(i): float(s) for i, s in zip(ids, alone, strict=True) if s >= want}
        # A score within rounding of the cutoff may fall either side; every other agrees.
        near = {i for i, s in zip(ids.tolist(), alone.tolist(), strict=True)
                if abs(s - want) < 1e-5}  # fmt: skip
        assert set(scores) - near == set(expected) - near
        for i, s in scores.items():
            assert s == pytest.approx(float(alone[i - 100]), abs=1e-5)


TEXTS = [
    "Has a ginger cat called Felix",
    "Works as a night nurse in Leeds",
    "Plays the cello in an amateur orchestra",
    "Her brother Paul studies medicine in Toulouse",
    "Is learning to sail on the lake",
]


async def test_many_people_at_once_score_two_queries_as_they_score_each_alone(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    embedder = OllamaEmbedder(http, ollama.url, MODEL)
    people = range(1, 9)
    for person in people:
        for text in TEXTS[person % 3 :]:
            await manage.remember(store, user_id=person, story_id=1, origin="1",
                                  text=f"{text}, says {person}", now=1.0)  # fmt: skip
    await Indexer(store, embedder).run_once()
    message, said = await embedder.embed(
        ["ginger cat Felix", "cello orchestra and a nurse"], deadline=5.0
    )
    cache = VectorCache(store)
    rng = random.Random(5)

    async def both(person: int) -> list[tuple[dict[int, float], float]] | None:
        await asyncio.sleep(rng.random() / 100)
        return await cache.scores_of(person, MODEL, [
            Query(message, 0.1, 0.5, 2), Query(said, 0.1, 1.0),
        ])  # fmt: skip

    async def alone(person: int) -> list[tuple[dict[int, float] | None, float]]:
        await asyncio.sleep(rng.random() / 100)
        return [
            await cache.scores(person, MODEL, message, floor=0.1, relative_sd=0.5, places=2),
            await cache.scores(person, MODEL, said, floor=0.1, relative_sd=1.0),
        ]

    together, apart = await asyncio.gather(
        asyncio.gather(*(both(p) for p in people)), asyncio.gather(*(alone(p) for p in people))
    )
    for person, two, one in zip(people, together, apart, strict=True):
        assert two is not None
        assert [sorted(s) for s, _ in two] == [sorted(s or {}) for s, _ in one], person
        for (got, cut), (want, cut_alone) in zip(two, one, strict=True):
            assert cut == pytest.approx(cut_alone)
            assert got == pytest.approx(want)
    # Both queries found something: the comparison is not between empty answers.
    assert all(any(two[k][0] for two in together if two) for k in (0, 1))


async def test_a_query_of_another_width_degrades_the_turn_even_as_the_second_one(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    from memory.errors import BackendResponseError

    embedder = OllamaEmbedder(http, ollama.url, MODEL)
    await manage.remember(store, user_id=1, story_id=1, origin="1", text=TEXTS[0], now=1.0)
    await Indexer(store, embedder).run_once()
    (message,) = await embedder.embed(["cat"], deadline=5.0)
    cache = VectorCache(store)
    with pytest.raises(BackendResponseError, match="dimensions"):
        await cache.scores_of(1, MODEL, [Query(message), Query([*message, 0.5])])
    # A zero query scores nothing but does not stop the other one.
    found = await cache.scores_of(1, MODEL, [Query([0.0] * len(message)), Query(message)])
    assert found is not None and found[0] == ({}, -1.0) and found[1][0]
