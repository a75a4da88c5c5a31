from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from memory.text import (
    clauses,
    clean,
    clean_message,
    content_words,
    fold,
    is_negated,
    well_formed,
    words,
)

INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\U000e0000-\U000e007f]")


def test_clean_strips_invisible_and_bidi_and_tag_characters() -> None:
    hidden = "Aime\u200b le\u202e jazz\U000e0041\U000e0042 \ufeff"
    assert clean(hidden) == "Aime le jazz"


def test_clean_applies_nfkc_and_collapses_whitespace() -> None:
    assert clean("  ｆｕｌｌ\u00a0width \n\t text ") == "full width text"
    assert clean("ﬁn") == "fin"


def test_fold_unifies_apostrophes_and_case() -> None:
    assert fold("N’AIME PAS") == fold("n'aime pas") == "n'aime pas"


def test_words_keep_times_numbers_and_compound_words() -> None:
    assert words("RDV à 14h30 ou 7:15, 3,5 € après-demain") == [
        "rdv", "à", "14h30", "ou", "7:15", "3,5", "après-demain",
    ]  # fmt: skip


def test_content_words_drop_stopwords_but_keep_numbers() -> None:
    assert content_words("Le contrat prévoit 10 séances") == {"contrat", "prévoit", "10", "séances"}


def test_negation_in_french_and_english() -> None:
    assert is_negated(words("je n'aime pas les huîtres"))
    assert is_negated(words("j'aime pas les huîtres"))
    assert is_negated(words("I don't like oysters"))
    assert not is_negated(words("I like oysters"))
    assert not is_negated(words("une personne matinale"))


def test_clauses_split_at_but_and_mais() -> None:
    assert clauses("je n'aime pas les chats mais j'adore les chiens") == [
        ["je", "n", "aime", "pas", "les", "chats"],
        ["j", "adore", "les", "chiens"],
    ]


@given(st.text())
def test_clean_is_idempotent_and_leaves_nothing_invisible(text: str) -> None:
    once = clean(text)
    assert clean(once) == once
    assert not INVISIBLE.search(once)
    assert once == once.strip()
    assert "  " not in once


@given(st.text())
def test_fold_is_idempotent(text: str) -> None:
    assert fold(fold(text)) == fold(text)


# Any code point, lone surrogates included (st.text() leaves them out by default), and text
# made mostly of surrogates, paired or not, since they are rare among all code points.
ANY_CODE_POINTS = st.text(st.characters(codec=None, exclude_categories=())) | st.text(
    st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=())
)


def test_lone_surrogates_become_replacement_characters_and_pairs_join() -> None:
    assert well_formed("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert well_formed("\ud83d\ude00") == "😀"  # a pair from "\ud83d\ude00" in JSON
    assert clean_message("Salut \ud800\n toi") == "Salut \ufffd\ntoi"


@given(ANY_CODE_POINTS)
def test_cleaned_text_always_encodes_as_utf8(text: str) -> None:
    for cleaned in (well_formed(text), clean(text), clean_message(text), fold(text)):
        cleaned.encode("utf-8")
    assert well_formed(well_formed(text)) == well_formed(text)


@given(st.text())
def test_well_formed_text_is_left_unchanged(text: str) -> None:
    assert well_formed(text) is text
