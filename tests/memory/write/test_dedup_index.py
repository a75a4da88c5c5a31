"""DedupIndex decides exactly what brute-force `decide` decides, on every input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model import Kind, Memory, Scope
from memory.write.dedup import decide
from memory.write.dedup_index import DedupIndex
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
