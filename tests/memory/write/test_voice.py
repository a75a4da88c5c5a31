"""/remember's first person stored in the third (memory/write/voice.py): on what people type,
on any text (what has no first person is never touched), and through the commands."""

from __future__ import annotations

import asyncio

from hypothesis import example, given
from hypothesis import strategies as st

from memory import manage
from memory.model import Kind
from memory.store import Store
from memory.write.voice import as_memory, third_person
from tests.corpora.voice import HELD_OUT, TUNE


def test_every_case_the_rule_was_written_on_reads_in_the_third_person() -> None:
    assert [(t, third_person(t)) for t, ok in TUNE if third_person(t) not in ok] == []


def test_the_held_out_half_stays_above_what_was_measured() -> None:
    # Measured 62/64 when the rule was written (bench/voice.py lists the two misses): a change
    # that loses held-out cases is a regression, whatever it wins on the tuned half.
    right = sum(third_person(t) in ok for t, ok in HELD_OUT)
    assert right >= 62, f"{right}/{len(HELD_OUT)}"


_WORDS = st.sampled_from(
    "Has a cat named Pepper Léa is the best friend of Claire A un chien qui s'appelle Rex "
    "Habite à Lyon Works at the bank Aime le thé vert depuis 2019 , . !".split()
)


@given(st.lists(_WORDS, min_size=1, max_size=12))
def test_a_text_without_a_first_person_word_is_kept_as_typed(words: list[str]) -> None:
    text = " ".join(words)
    assert third_person(text) == text


_ANY = st.sampled_from(
    "I i I'm im I've my me Me, je j'ai Je suis ma mes mon moi ne me suis pas have go "
    "study love was don't really always habite aime vais prends étais Claire Lyon , .".split()
)


@given(st.lists(_ANY, min_size=1, max_size=10))
@example(words=["I", "I'm", "I"])  # found by CI: "I'm they", then "Is they"
def test_the_rewrite_is_done_once(words: list[str]) -> None:
    """Stored, a memory is edited or /remembered again: the second pass changes nothing, and
    no rewrite is empty."""
    once = third_person(" ".join(words))
    assert once.strip() and third_person(once) == once


def test_a_rule_keeps_the_persons_words_and_a_long_rewrite_is_not_cut() -> None:
    assert as_memory("Call me Sam, I hate my full name", Kind.RULE, limit=500) == (
        "Call me Sam, I hate my full name"
    )
    long = "my " * 100  # "their" is longer than "my": 500 characters would pass the limit
    assert as_memory(long.strip(), Kind.FACT, limit=300) == long.strip()
    assert as_memory("I love my cat", Kind.PREFERENCE, limit=500) == "Loves their cat"


async def test_many_people_remember_at_once_each_in_the_third_person(store: Store) -> None:
    typed = {
        uid: text
        for uid, text in zip(
            range(1, 41),
            [typed for typed, accepted in TUNE if typed not in accepted][:40],
            strict=True,
        )
    }
    accepted = {uid: dict(TUNE)[text] for uid, text in typed.items()}

    async def one(uid: int) -> str:
        await asyncio.sleep(uid % 3 * 0.001)
        outcome = await manage.remember(
            store, user_id=uid, story_id=0, origin="dm", text=typed[uid], now=1.8e9
        )
        return outcome.text

    said = await asyncio.gather(*(one(uid) for uid in typed))
    # A relative date is dated as a reflection's is: "next week (2027-01-18/2027-01-24)".
    assert all(s.split(" (20")[0] in accepted[uid] for uid, s in zip(typed, said, strict=True))
    for uid in typed:
        [memory] = await manage.list_memories(store, uid)
        assert memory.text == said[uid - 1]
