"""The local extractive summary: the informative sentences people wrote, in order, in budget."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory.context.extractive import condense, split_sentences
from memory.context.tokens import Estimator

COUNT = Estimator("m").count


def test_keeps_events_drops_chit_chat_in_order() -> None:
    sentences = [
        *split_sentences("Marie", "Salut ! Ma sœur Léa se marie le 14 juin à Brest."),
        *split_sentences("Écho", "Oh, quelle belle nouvelle."),
        *split_sentences("Marie", "Ok. Le mariage de Léa sera au phare de Brest."),
    ]
    kept = condense(sentences, limit=40, count=COUNT)
    assert kept[0].startswith("Marie: Ma sœur Léa")
    assert "Marie: Salut !" not in kept and "Marie: Ok." not in kept
    assert list(kept) == [s for s in sentences if s in kept]


def test_a_sentence_that_repeats_a_kept_one_leaves_room_for_another_event() -> None:
    sentences = [
        "Marie: Ma sœur Léa habite à Brest depuis 2000.",
        "Marie: Ma sœur Léa habite à Brest depuis 2001.",
        "Marie: Mon chat Félix a peur de l'orage.",
    ]
    kept = condense(sentences, limit=200, count=COUNT)
    assert len(kept) == 2 and kept[1] == sentences[2]


@given(st.lists(st.text(min_size=1, max_size=300), max_size=30), st.integers(0, 400))
def test_never_over_its_limit_and_never_invents(texts: list[str], limit: int) -> None:
    sentences = [s for t in texts for s in split_sentences("A", t)]
    kept = condense(sentences, limit=limit, count=COUNT)
    assert sum(COUNT(f"- {s}") + 1 for s in kept) <= limit
    assert all(s in sentences for s in kept)
