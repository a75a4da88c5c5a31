"""DedupIndex decides exactly what brute-force `decide` decides, on every input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model import Kind, Memory, Scope
from memory.write.dedup import decide
from memory.write.dedup_features import features
from memory.write.dedup_index import DedupIndex, Listed
from tests.corpora.dedup_pairs import GROUPS

_vocabulary = st.sampled_from(
    "Marie aime le jazz manouche depuis toujours chat noir Félix a un 10 200 € demain "
    "après-demain mardi soir ce super-chat the cat likes tea and not n'aime pas Emma "
    # Names that may open a sentence in one text and sit inside another ("fin." ends one).
    "Paul Lina's Rue Cler On fin. Emma".split()
)
_text = st.lists(_vocabulary, min_size=1, max_size=9).map(" ".join)


def _memories(texts: list[str]) -> list[Memory]:
    return [
        Memory(id=i + 1, user_id=1, text=t, kind=Kind.FACT, scope=Scope.GLOBAL)
        for i, t in enumerate(texts)
    ]


@settings(max_examples=300)
@given(st.lists(_text, max_size=25), _text)
def test_the_index_decides_like_brute_force(texts: list[str], candidate: str) -> None:
    existing = _memories(texts)
    assert DedupIndex(existing).decide(candidate) == decide(candidate, existing)


@pytest.mark.slow
def test_the_index_decides_like_brute_force_on_the_corpus() -> None:
    texts = [t for group in GROUPS for t in group]
    for i, candidate in enumerate(texts):
        existing = _memories(texts[:i] + texts[i + 1 :])
        assert DedupIndex(existing).decide(candidate) == decide(candidate, existing), candidate


def test_replaced_and_removed_memories_are_not_merge_targets() -> None:
    old = Memory(id=1, user_id=1, text="Adore le jazz manouche", kind=Kind.FACT,
                 scope=Scope.GLOBAL)  # fmt: skip
    new = Memory(id=1, user_id=1, text="Adore le jazz manouche et le swing", kind=Kind.FACT,
                 scope=Scope.GLOBAL)  # fmt: skip
    index = DedupIndex([old])
    index.replace(old, new)
    decision = index.decide("Adore le jazz manouche et le swing !")
    assert decision.target == new
    index.remove(1)
    assert index.decide("Adore le jazz manouche et le swing").target is None


_change = st.tuples(st.sampled_from(["add", "remove", "replace"]), _text, st.integers(0, 40))


@settings(max_examples=200)
@given(
    st.lists(_text, max_size=20),
    st.lists(_change, max_size=12),
    _text,
    st.integers(1, 8),
)
def test_an_index_assembled_in_parts_and_changed_in_place_decides_like_brute_force(
    texts: list[str], changes: list[tuple[str, str, int]], candidate: str, chunk: int
) -> None:
    # Built as the process pool builds it (features of chunks of texts), then patched as a
    # write transaction patches it: the decisions stay those of brute force.
    now = {m.id: m for m in _memories(texts)}
    source = Listed(now.values())
    parts = [features(texts[i : i + chunk]) for i in range(0, len(texts), chunk)]
    index = DedupIndex.assembled(source, parts)
    next_id = len(texts) + 1
    for action, text, pick in changes:
        if action == "add" or not now:
            memory = Memory(id=next_id, user_id=1, text=text, kind=Kind.FACT, scope=Scope.GLOBAL)
            next_id += 1
            index.add(memory)
            now[memory.id] = memory
            continue
        memory_id = sorted(now)[pick % len(now)]
        if action == "remove":
            index.remove(memory_id)
            del now[memory_id]
        else:
            new = Memory(id=memory_id, user_id=1, text=text, kind=Kind.FACT, scope=Scope.GLOBAL)
            index.replace(now[memory_id], new)
            now[memory_id] = new
    assert len(index) == len(now)
    assert index.decide(candidate) == decide(candidate, list(now.values()))


# Accents, abbreviations, number words, plurals and phrases the dedup respells
# (memory.write.dedup_words): the index computes the same compared words and carriers.
_respelled = st.sampled_from(
    "Déteste deteste les araignées araignees bcp beaucoup aime Aime adore rly really into is "
    "deux 2 two enfants kids children 3x three times a week mardi mardis le we week-end "
    "Vit vit habite à a Lyon lyon J'apprends apprend doesn't does not eat meat to learn "
    "Jean-Jaurès Jean Jaurès called named favourite colour favorite color".split()
)
_respelled_text = st.lists(_respelled, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=300)
@given(st.lists(_respelled_text, max_size=20), _respelled_text)
def test_the_index_decides_like_brute_force_on_respelled_words(
    texts: list[str], candidate: str
) -> None:
    existing = _memories(texts)
    assert DedupIndex(existing).decide(candidate) == decide(candidate, existing)


def test_the_index_finds_a_variant_written_another_way() -> None:
    texts = ["Déteste les araignées", "A deux enfants", "Is really into photography"]
    existing = _memories(texts)
    for candidate in ("deteste les araignees", "A 2 enfants", "is rly into photography"):
        decision = DedupIndex(existing).decide(candidate)
        assert decision == decide(candidate, existing)
        assert decision.target is not None, candidate
