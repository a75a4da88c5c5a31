"""Keyword recall (FTS5) in step with the memories, and its place in a turn."""

from __future__ import annotations

import asyncio
import math
import random
import tempfile
from pathlib import Path

import httpx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import Engine, MemoryConfig, lexicon, manage
from memory.backends.embedders import OllamaEmbedder
from memory.model import Kind, Reason, Scope
from memory.recall.lexical import (
    MAX_KEYWORD_HITS,
    RARE_TERM_CAP,
    KeywordRecall,
    keyword_hits,
    keyword_recall,
    query_terms,
)
from memory.recall.semantic import VectorCache
from memory.store import Store, Tx, open_store
from memory.store.tables import keywords, memories
from memory.text import words as tokens
from tests.fakes.ollama import FakeOllama

USER, STORY, GUILD = 1, 10, "111"


async def _add(store: Store, text: str, *, user_id: int = USER, now: float = 1.0) -> int:
    outcome = await manage.remember(
        store, user_id=user_id, story_id=STORY, origin=GUILD, text=text, kind=Kind.FACT,
        scope=Scope.GLOBAL, now=now,
    )  # fmt: skip
    assert outcome.memory_id is not None
    return outcome.memory_id


async def _hits(store: Store, text: str, user_id: int = USER) -> dict[int, tuple[str, ...]]:
    return await keyword_hits(store, user_id=user_id, story_id=STORY, origin=GUILD, text=text)


def test_query_terms_drop_stopwords_and_fold_accents() -> None:
    assert query_terms("Tu te souviens de Félix, mon chat ?") == ["souviens", "felix", "chat"]
    assert query_terms("I don't like the hospital") == ["don", "like", "hospital"]


def test_chat_questions_search_for_their_content_words_only() -> None:
    # « est » was a recall keyword: "est-ce" passed as one word, then split after the check.
    assert query_terms("Qu'est-ce que tu sais de moi ?") == ["sais"]
    assert query_terms("Est-ce que Pepper est là ?") == ["pepper"]
    assert query_terms("c'est-à-dire là-bas, ouais") == ["dire", "bas"]
    assert query_terms("yeah I'm ok, im home") == ["home"]
    assert query_terms("Je bois du thé") == ["bois", "the"]  # « thé » is not "the"


# Those the tokenizer reads as one word ("user's", the reflection's phrase, is two).
_FUNCTION_WORDS = sorted(
    w for w in lexicon.STOPWORDS | lexicon.NEGATIONS | lexicon.NOT_KEYWORDS if tokens(w) == [w]
)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(_FUNCTION_WORDS),
            st.sampled_from([" ", "-", "'", " ? ", ", ", "... "]),
            st.booleans(),
        ),
        max_size=12,
    )
)
def test_function_words_of_either_language_are_never_keywords(
    pieces: list[tuple[str, str, bool]],
) -> None:
    """Joined by spaces, hyphens or elisions, capitalised or not: nothing to search for."""
    text = "".join((w.capitalize() if up else w) + sep for w, sep, up in pieces)
    assert query_terms(text) == []


async def test_a_name_recalls_its_memory_with_the_words_that_matched(store: Store) -> None:
    for i in range(30):
        await _add(store, f"Likes gardening project number {i} on Sundays", now=100.0 + i)
    biscuit = await _add(store, "Just adopted a puppy named Biscuit", now=1.0)
    hits = await _hits(store, "How is Biscuit doing?")
    assert list(hits) == [biscuit] and hits[biscuit] == ("biscuit",)


async def test_accents_and_plurals_match(store: Store) -> None:
    memory_id = await _add(store, "Travaille à l'hôpital de Nantes avec deux chats")
    assert memory_id in await _hits(store, "Et l'hopital, ça va ?")
    assert memory_id in await _hits(store, "Tes chats vont bien ?")


async def test_the_index_follows_rewrites_and_forgetting(store: Store) -> None:
    memory_id = await _add(store, "Plays the cello in an orchestra")

    async def reword(tx: Tx) -> None:
        [memory] = await memories.merge_pool(tx, USER, STORY, GUILD)
        await memories.rewrite(tx, memory, text="Plays the viola in a quartet",
                               scope=Scope.GLOBAL, confidence=1.0, now=2.0)  # fmt: skip

    await store.transact(reword)
    assert await _hits(store, "cello") == {}
    assert memory_id in await _hits(store, "viola")
    await manage.forget(store, USER, memory_id)
    assert await _hits(store, "viola") == {}


async def test_keyword_recall_is_isolated_per_user_and_keeps_dm_privacy(store: Store) -> None:
    await _add(store, "Has a parrot named Kiwi", user_id=2)
    assert await _hits(store, "Kiwi", user_id=USER) == {}
    dm = await manage.remember(store, user_id=USER, story_id=5, origin="dm",
                               text="Secret parrot named Kiwi", now=1.0)  # fmt: skip
    assert await _hits(store, "Kiwi") == {}  # a guild turn never sees a DM memory
    dm_hits = await keyword_hits(store, user_id=USER, story_id=5, origin="dm", text="Kiwi")
    assert list(dm_hits) == [dm.memory_id]


async def test_a_degraded_turn_recalls_by_keywords_not_by_recency_alone(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    for i in range(40):
        await _add(store, f"Went to the market number {i}", now=100.0 + i)
    biscuit = await _add(store, "Just adopted a puppy named Biscuit", now=1.0)
    ollama.set("/api/embed", "500")
    engine = Engine(store, embedder=OllamaEmbedder(http, ollama.url, "e"), config=MemoryConfig())
    recall = await engine.recall(user_id=USER, story_id=STORY, origin=GUILD, text="Biscuit?")
    assert recall.degraded
    [hit] = [s for s in recall.selected if s.memory.id == biscuit]
    assert hit.reason is Reason.SEMANTIC and hit.matched == ("biscuit",)


async def test_the_relative_cutoff_is_read_from_the_query_scores(store: Store) -> None:
    ids = [await _add(store, f"memory {i}") for i in range(20)]
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((20, 8)).astype(np.float32)
    query = vectors[3] + 0.1 * rng.standard_normal(8).astype(np.float32)

    async def store_vectors(tx: Tx) -> None:
        for memory_id, vector in zip(ids, vectors, strict=True):
            await tx.execute(
                "INSERT INTO embeddings (memory_id, model, content_hash, dim, vector)"
                " VALUES (?, 'm', ?, 8, ?)",
                (memory_id, "0" * 64, vector.tobytes()),
            )
        tx.touch(USER)

    await store.transact(store_vectors)
    cache = VectorCache(store)
    everything, _ = await cache.scores(USER, "m", query.tolist(), floor=-1.0)
    eligible, cutoff = await cache.scores(USER, "m", query.tolist(), floor=0.1, relative_sd=1.5)
    values = np.array(list(everything.values()))
    assert cutoff == pytest.approx(max(0.1, float(values.mean() + 1.5 * values.std())), abs=1e-6)
    assert ids[3] in eligible and all(v >= cutoff for v in eligible.values())
    assert len(eligible) < len(everything)


async def test_migration_6_indexes_memories_written_before_it(database: Path | str) -> None:
    path = database
    async with await open_store(path, migrate_to=5) as old:
        await old.transact(
            lambda tx: tx.execute(
                "INSERT INTO memories (user_id, scope, origin, kind, text, confidence, created_at,"
                " updated_at, content_hash) VALUES (1, 'global', '111', 'fact',"
                " 'Has a tortoise named Zelda', 1, 0, 0, ?)",
                ("0" * 64,),
            )
        )
    async with await open_store(path) as new:
        assert list(await _hits(new, "Zelda")) == [1]


def test_language_detection() -> None:
    from memory.lexicon import detect_language
    from memory.text import words

    assert detect_language(words("Je n'aime pas le café, et toi ?")) == "fr"
    assert detect_language(words("I don't like the coffee they serve")) == "en"
    assert detect_language(words("Félix !")) is None


async def test_an_unfit_language_recalls_by_keywords_only(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    from memory.vectors.calibrate import LanguageReport, save_calibration
    from memory.vectors.indexer import Indexer

    for text in ("A un chat roux nommé Félix", "Has a ginger cat named Felix"):
        await _add(store, text)
    embedder = OllamaEmbedder(http, ollama.url, "e")
    await Indexer(store, embedder).run_once()
    await save_calibration(store, "e", [
        LanguageReport("fr", separation=0.6, paraphrase_mean=0.5, unrelated_mean=0.4,
                       threshold=None, cutoff=0.6),
        LanguageReport("en", separation=1.0, paraphrase_mean=0.8, unrelated_mean=0.1,
                       threshold=0.3, cutoff=0.3),
    ], now=1.0)  # fmt: skip
    config = MemoryConfig(relative_sd=None, threshold=-1.0)
    engine = Engine(store, embedder=embedder, config=config)
    french = await engine.recall(user_id=USER, story_id=STORY, origin=GUILD,
                                 text="Comment va le chat roux ?")  # fmt: skip
    assert not french.degraded and all(s.score is None for s in french.selected)
    assert any(s.matched for s in french.selected)
    english = await engine.recall(user_id=USER, story_id=STORY, origin=GUILD,
                                  text="How is the ginger cat?")  # fmt: skip
    assert any(s.score is not None for s in english.selected)


async def test_why_shows_the_words_that_recalled_a_memory(store: Store) -> None:
    from memory.store.tables import turns

    for i in range(30):
        await _add(store, f"Went to the market number {i}", now=100.0 + i)
    biscuit = await _add(store, "Just adopted a puppy named Biscuit", now=1.0)
    await Engine(store, embedder=None).recall(
        user_id=USER, story_id=STORY, origin=GUILD, text="How is Biscuit?"
    )
    last = await turns.last(store, USER, STORY)
    assert last is not None
    [hit] = [s for s in last.selected if s.memory.id == biscuit]
    assert hit.reason is Reason.SEMANTIC and hit.matched == ("biscuit",)


# --- rare words only, bounded per term (issue 21) -------------------------------------------


async def test_a_word_most_memories_hold_does_not_recall_but_a_rare_one_does(store: Store) -> None:
    # At 10,000 memories "first", "need" or "travaille" filled the recall places with memories
    # the message was not about: past RARE_TERM_CAP memories a word says nothing of which one.
    for i in range(RARE_TERM_CAP + 6):
        await _add(store, f"Went to the market number {i}", now=100.0 + i)
    biscuit = await _add(store, "Biscuit chews everything at the market", now=1.0)
    assert await _hits(store, "Shall we take Biscuit to the market?") == {biscuit: ("biscuit",)}
    assert await _hits(store, "Anything from the market?") == {}


async def test_how_common_a_word_is_is_read_per_person(store: Store) -> None:
    for i in range(RARE_TERM_CAP + 1):
        await _add(store, f"Went to the market number {i}", user_id=2)
    mine = await _add(store, "Sells jam at the market on Saturdays")
    assert await _hits(store, "How was the market?") == {mine: ("market",)}
    assert await _hits(store, "How was the market?", user_id=2) == {}


async def test_each_term_reads_at_most_its_cap_of_memories(store: Store) -> None:
    for i in range(40):
        await _add(store, f"Went to the market number {i}")
    felix = await _add(store, "Has a cat named Felix")
    found = await keywords.term_matches(
        store, ['"market"*', '"felix"*', '"zebra"*'], user_id=USER, story_id=STORY,
        origin=GUILD, cap=5,
    )  # fmt: skip
    assert [len(ids) for ids in found] == [5, 1, 0] and found[1] == [felix]


async def _insert_all(tx: Tx, texts: list[list[str]]) -> list[int]:
    """Store the texts as they are (the same text twice is two memories here)."""
    ids = []
    for words in texts:
        memory = await memories.insert(
            tx, user_id=USER, text=" ".join(words), kind=Kind.FACT, scope=Scope.GLOBAL,
            story_id=STORY, origin=GUILD, confidence=1.0, now=1.0,
        )  # fmt: skip
        ids.append(memory.id)
    return ids


_vocabulary = ["cat", "felix", "market", "garden", "piano", "paris", "tea", "night"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.sampled_from(_vocabulary), min_size=1, max_size=4), max_size=30),
    st.lists(st.sampled_from(_vocabulary), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=0, max_value=3),
)
def test_keyword_hits_equal_a_brute_force_count(
    texts: list[list[str]], query: list[str], cap: int, decisive_df: int
) -> None:
    """Oracle: each word's memories counted one by one, words in more than `cap` dropped, the
    rest weighted by rarity; the bounded FTS query must find exactly that, and call decisive
    exactly the hits one of whose words is in at most `decisive_df` memories."""

    async def run() -> tuple[KeywordRecall, dict[int, tuple[str, ...]], set[int]]:
        with tempfile.TemporaryDirectory() as tmp:
            async with await open_store(Path(tmp) / "k.sqlite3") as store:
                ids = await store.transact(lambda tx: _insert_all(tx, texts))
                got = await keyword_recall(store, user_id=USER, story_id=STORY, origin=GUILD,
                                           text=" ".join(query), cap=cap,
                                           decisive_df=decisive_df)  # fmt: skip
        terms = query_terms(" ".join(query))
        holders = {t: [i for i, w in zip(ids, texts, strict=True) if t in w] for t in terms}
        weight: dict[int, float] = {}
        matched: dict[int, list[str]] = {}
        for term in terms:
            if 0 < len(holders[term]) <= cap:
                for memory_id in holders[term]:
                    weight[memory_id] = weight.get(memory_id, 0.0) + math.log(
                        (cap + 1) / len(holders[term])
                    )
                    matched.setdefault(memory_id, []).append(term)
        order = sorted(weight, key=lambda i: (-weight[i], -len(matched[i]), i))[:MAX_KEYWORD_HITS]
        # Decisive: one of the words that matched it is in at most `decisive_df` memories.
        decisive = {i for i in order if any(len(holders[t]) <= decisive_df for t in matched[i])}
        return got, {i: tuple(matched[i]) for i in order}, decisive

    got, expected, decisive = asyncio.run(run())
    assert list(got.hits.items()) == list(expected.items())
    assert got.decisive == decisive


async def test_concurrent_people_each_recall_their_own_rare_words(store: Store) -> None:
    """The twin of the tests above: many people's turns at once, with writes landing between
    them; each recalls only their own pet, by its name, whatever others hold."""
    names = ["Biscuit", "Kiwi", "Zelda", "Pixel", "Mochi", "Olive", "Pepper", "Nugget"]
    pets: dict[int, int] = {}
    for user, name in enumerate(names, start=1):
        for i in range(RARE_TERM_CAP + 2):
            await _add(store, f"Went to the market number {i}", user_id=user)
        pets[user] = await _add(store, f"Has a dog named {name} who loves the market",
                                user_id=user)  # fmt: skip
    engine = Engine(store, embedder=None)
    rng = random.Random(7)

    async def turn(user: int) -> None:
        await asyncio.sleep(rng.random() / 100)
        recall = await engine.recall(user_id=user, story_id=STORY, origin=GUILD,
                                     text=f"Is {names[user - 1]} at the market?")  # fmt: skip
        recalled = {s.memory.id: s.matched for s in recall.selected if s.matched}
        assert recalled == {pets[user]: (names[user - 1].lower(),)}

    async def write(user: int) -> None:
        await asyncio.sleep(rng.random() / 100)
        await _add(store, "Bought apples at the market", user_id=user)

    work = [turn(rng.randint(1, len(names))) for _ in range(40)]
    work += [write(rng.randint(1, len(names))) for _ in range(10)]
    await asyncio.gather(*work)
