"""Lore activation: case- and accent-insensitive substrings in the recent conversation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.context.lore import activate, normalise, parse_keywords
from memory.errors import InvalidInput
from memory.model import LoreEntry, LoreScope


def entry(i: int, *keywords: str, **kw: object) -> LoreEntry:
    return LoreEntry(id=i, content=f"entry {i}", keywords=keywords, **kw)  # type: ignore[arg-type]


def fired(entries: list[LoreEntry], *conversation: str, depth: int = 4) -> list[int]:
    return [a.entry.id for a in activate(entries, conversation, depth=depth, character="Écho")]


def test_case_accents_and_substrings() -> None:
    entries = [entry(1, "Élodie"), entry(2, "dragon"), entry(3, "Phare")]
    assert fired(entries, "tu connais ELODIE ?") == [1]
    assert fired(entries, "les dragons du nord") == [2]
    assert fired(entries, "le phare de Brest") == [3]
    assert fired(entries, "rien à voir") == []


def test_case_sensitive_entries_keep_case_and_accents() -> None:
    entries = [entry(1, "Élodie", case_sensitive=True)]
    assert fired(entries, "Élodie est là") == [1]
    assert fired(entries, "elodie est là") == []


def test_depth_counts_messages_back_from_the_current_one() -> None:
    entries = [entry(1, "dragon"), entry(2, "phare", scan_depth=1)]
    conversation = ("et maintenant ?", "bof", "le dragon et le phare")
    assert fired(entries, *conversation, depth=3) == [1]
    assert fired(entries, *conversation, depth=2) == []


def test_ranking_constant_priority_then_recency() -> None:
    entries = [
        entry(1, "dragon"), entry(2, "phare", priority=5), entry(3, constant=True),
        entry(4, "brest"),
    ]  # fmt: skip
    assert fired(entries, "brest", "dragon et phare") == [3, 2, 4, 1]


def test_equal_entries_rank_by_closeness_to_the_message() -> None:
    entries = [
        LoreEntry(id=1, content="Les dragons dorment l'hiver.", keywords=("dragon",)),
        LoreEntry(id=2, content="Le dragon rouge garde le phare.", keywords=("dragon",)),
    ]
    fired_ = activate(entries, ["le dragon rouge du phare ?"], depth=1, character="Écho")
    assert [a.entry.id for a in fired_] == [2, 1]


def test_character_scope_and_selective_entries() -> None:
    entries = [
        entry(1, "dragon", scope=LoreScope.CHARACTER, character="echo"),
        entry(2, "dragon", scope=LoreScope.CHARACTER, character="nyx"),
        entry(3, "dragon", selective=True, secondary_keywords=("feu", "fire")),
    ]
    assert fired(entries, "un dragon") == [1]
    assert fired(entries, "un dragon de feu") == [1, 3]


def test_keywords_are_parsed_with_clear_errors() -> None:
    assert parse_keywords(" dragon, Phare ,, dragon") == ("dragon", "Phare")
    with pytest.raises(InvalidInput, match="at least one keyword"):
        parse_keywords(" , ")
    with pytest.raises(InvalidInput, match="longer than"):
        parse_keywords("x" * 101)


WORD = st.text(alphabet="abcdeéèàçïôABCDEÉÈÀÇ", min_size=1, max_size=12)


@given(WORD, st.text(max_size=40), st.text(max_size=40))
def test_a_keyword_is_found_whatever_its_case_and_accents(
    keyword: str, before: str, after: str
) -> None:
    variant = normalise(keyword).upper()
    assert fired([entry(1, keyword)], f"{before}{variant}{after}") == [1]


@given(st.text(max_size=60))
def test_normalising_is_idempotent(text: str) -> None:
    assert normalise(normalise(text)) == normalise(text)
