"""A memory that replaces another: the model proposes, the code decides.

The reflection is shown the memories its reply used and may say that a new memory replaces one
of them (a move, a new job, a changed taste, a correction). The replacement is made only when the
target is this person's, active, learned in this place, was shown to this reflection, and the
new memory may replace it (`may_replace`); otherwise it is refused with a counted reason and the
new memory is written as any other (it is still something the person said).

`may_replace` reads both texts, in French or English: whose fact each is (the person or a
relative), whether the new one corrects, adds to, plans or moves what the old says, the single
topics both speak of (one home, one job, one partner, one diet at a time), an age, and the subject
words they share, compared stemmed. Its figures on pairs it was not tuned on, its known false
positives and misses: docs/measurements.md, `make bench-truth`.
"""

from __future__ import annotations

import asyncio
import enum
import re
from collections.abc import Collection
from dataclasses import dataclass

from memory import lexicon
from memory.model import Candidate, Kind, Memory
from memory.store import Tx
from memory.store.tables import memory_versions
from memory.text import content_words, fold, strip_accents, words
from memory.write.dedup import Action
from memory.write.dedup_index import DedupIndex


class Refusal(enum.StrEnum):
    """Why a proposed replacement was not made (counted as supersession_refused:<reason>)."""

    GONE = "gone"  # not this person's memory (now): erased since, another's, never one
    NOT_SHOWN = "not_shown"  # theirs, but not among the memories this reflection was shown
    ELSEWHERE = "elsewhere"  # learned in another place or story: not this conversation's to change
    RULE = "rule"  # the person's wish about how to be talked to: only they change it
    OTHER_SUBJECT = "other_subject"  # about something else (may_replace says no)
    DUPLICATE = "duplicate"  # the new wording says what another memory already does
    STALE = "stale"  # its wording changed since the reflection was shown it (an edit wins)


# How close two memories' vectors must be (cosine, multilingual-e5-small-like: unrelated pairs
# ~0.75-0.8, one topic ~0.85+) for one shared subject word to decide a replacement the words
# alone leave open. Not measured on vectors yet (bench/truth/replace.py runs without): set above
# the same-topic band so a vector can only confirm what the words already lean to.
CLOSE = 0.9

_DATE = re.compile(r"\s*\(\d{4}[^)]*\)")
_NUMBER = (
    r"(?:\d+|" + "|".join(map(re.escape, sorted(lexicon.NUMBER_WORDS, key=len, reverse=True))) + ")"
)
# An age, not a duration: "a 16 ans", "vient d'avoir 17 ans", "is 15", "turned 16", "is 29
# years old", "his 30th birthday"; not "10 ans de mariage", "is 5'10", "depuis 10 ans".
_AGE = re.compile(
    rf"\b(?:a|as|ai|avoir|eu|ses)\s+{_NUMBER}\s+ans\b(?!\s+d)"
    rf"|\b(?:is|turned|turns|turning)\s+{_NUMBER}(?!['\"\w]|\s*(?:k\b|km|kg|%|of\b|times))"
    rf"|\b{_NUMBER}\s+years?\s+old\b|\b\d+(?:st|nd|rd|th)\s+birthday\b"
)
_NEGATED = re.compile(r"\b(?:pas|not|non|t|never|jamais)\s+((?:\S+\s+){0,2}\S+)")
_SUFFIXES = (
    "ements",
    "ement",
    "ations",
    "ation",
    "ing",
    "ees",
    "ee",
    "es",
    "ed",
    "er",
    "ez",
    "ent",
    "s",
    "e",
    "x",
)


def _stem(word: str) -> str:
    """The word without accents and its commonest French and English endings ("déménagé",
    "déménager" -> "demenag"; "lives", "living" -> "liv"; "végétarienne" -> "vegetarien")."""
    word = strip_accents(word)
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 4 and word[-1] == word[-2] and word[-1] in "lnst":
        word = word[:-1]
    elif len(word) >= 4 and word[-1] == word[-2] and word[-1] in "bdgmnprt" and _cvc(word[-4:-1]):
        word = word[:-1]  # "running", "stopped", "swimming" as "runs", "stops", "swims"
    return word


def _cvc(letters: str) -> bool:
    """Whether three letters are a consonant, a vowel, a consonant ("run" of "runn")."""
    vowels = "aeiouy"
    return letters[0] not in vowels and letters[1] in vowels and letters[2] not in vowels


def _plain(text: str) -> str:
    """`text` folded, without accents, its words single-spaced between two spaces."""
    return " " + " ".join(strip_accents(w) for w in words(text)) + " "


def _stems(vocabulary: Collection[str]) -> frozenset[str]:
    return frozenset(_stem(w) for w in vocabulary)


def _phrases(vocabulary: Collection[str]) -> tuple[str, ...]:
    return tuple(_plain(p) for p in vocabulary)


_NOT_A_SUBJECT = _stems(
    lexicon.NOT_A_SUBJECT
    | lexicon.NUMBER_WORDS
    | lexicon.WEEKDAYS
    | lexicon.MONTHS
    | lexicon.RELATIVE_TIME
    | lexicon.NEGATIONS
    | lexicon.POSSESSIVES
)
_NUMBER_WORDS = _stems(lexicon.NUMBER_WORDS)
_TOPICS = {
    name: _stems([w for w in vocab if " " not in w]) for name, vocab in lexicon.TOPICS.items()
}
# A topic said in two words ("high school", « première année »), found in the plain text.
_TOPIC_PHRASES = {
    name: _phrases([w for w in vocab if " " in w]) for name, vocab in lexicon.TOPICS.items()
}
_ASIDES = tuple(sorted(_phrases(lexicon.OPENING_ASIDES), key=len, reverse=True))
_OCCASIONS = _stems(lexicon.OCCASIONS)
_RELATIVES = {strip_accents(w) for w in lexicon.RELATIVES}
_PARTNERS = frozenset(_RELATIVES & {strip_accents(w) for w in lexicon.TOPICS["partner"]})
_QUALIFIERS = {strip_accents(w) for w in lexicon.RELATIVE_QUALIFIERS}
_POSSESSIVES = {strip_accents(w) for w in lexicon.POSSESSIVES}
_ALIASES = {strip_accents(k): strip_accents(v) for k, v in lexicon.RELATIVE_ALIASES.items()}
_SELF = frozenset({"je", "j", "elle", "il", "i", "she", "he", "they", "on"})
_MARKERS = {
    name: _phrases(vocabulary)
    for name, vocabulary in (
        ("replanned", lexicon.REPLANNED),
        ("turned", lexicon.TURNED),
        ("corrected", lexicon.CORRECTED),
        ("added", lexicon.ADDED),
        ("plan", lexicon.PLANS),
    )
}


@dataclass(frozen=True)
class _Reading:
    """What the replacement rule reads in one memory."""

    plain: str  # folded, no accents, no dates, " a b c "
    holder: str  # whose fact: "" for the person, else the relative it is about
    head: str  # the thing a possessive opens it with ("son chien …"), stemmed, or ""
    subjects: frozenset[str]  # stems of the words that say what it is about
    stems: frozenset[str]  # stems of all its words
    topics: frozenset[str]  # the single-valued topics it speaks of
    occasion: bool  # about an occasion (an appointment, a class, a trip)
    age: bool

    def says(self, marker: str) -> bool:
        return any(p in self.plain for p in _MARKERS[marker])


def _read(text: str) -> _Reading:
    undated = _DATE.sub("", text)
    plain = _plain(undated)
    tokens = _without_aside(plain).split()
    holder, head = _whose(tokens)
    stems = frozenset(_stem(w) for w in tokens)
    subjects = frozenset(
        _stem(w)
        for w in content_words(undated)
        if not w[0].isdigit() and _stem(w) not in _NOT_A_SUBJECT
    )
    topics = frozenset(
        name
        for name, vocabulary in _TOPICS.items()
        if stems & vocabulary or any(p in plain for p in _TOPIC_PHRASES[name])
    )
    if holder in _PARTNERS:
        topics |= {"partner"}
    age = _AGE.search(strip_accents(fold(undated))) is not None
    return _Reading(plain, holder, head, subjects, stems, topics, bool(stems & _OCCASIONS), age)


def _without_aside(plain: str) -> str:
    """`plain` without the aside that opens it ("Correction: her cat …" -> " her cat …")."""
    for aside in _ASIDES:
        if plain.startswith(aside):
            return plain[len(aside) - 1 :]
    return plain


def _whose(tokens: list[str]) -> tuple[str, str]:
    """Whose fact a memory states, from its first words ("Sa sœur …", "Le frère de Marie …",
    "Emma's brother …"), and the thing it opens with when that is no relative ("Son chien …")."""
    if len(tokens) > 2 and tokens[1] == "s" and tokens[2] in _RELATIVES:  # "emma's brother"
        return _ALIASES.get(tokens[2], tokens[2]), ""
    if not tokens or tokens[0] not in _POSSESSIVES:
        return "", ""
    rest = [t for t in tokens[1:4] if t not in _QUALIFIERS]
    if not rest:
        return "", ""
    if rest[0] in _RELATIVES:
        return _ALIASES.get(rest[0], rest[0]), ""
    return "", _stem(rest[0])


def _same_holder(a: _Reading, b: _Reading) -> bool:
    """Whether two memories are about the same person: a partner's fact may change the person's
    own couple ("est célibataire" -> "sa copine a emménagé avec elle")."""
    if a.holder == b.holder:
        return True
    partner, own = (a, b) if a.holder in _PARTNERS else (b, a)
    return partner.holder in _PARTNERS and not own.holder and "partner" in own.topics


def _negates(old: _Reading, new: _Reading) -> bool:
    """Whether `new` says one of `old`'s words is wrong: "a trois enfants, pas deux"."""
    said = old.subjects | {_stem(w) for w in old.plain.split() if w[0].isdigit()}
    said |= old.stems & _NUMBER_WORDS
    return any(_stem(w) in said for m in _NEGATED.finditer(new.plain) for w in m.group(1).split())


def may_replace(old: str, new: str, *, closeness: float | None = None) -> bool:
    """Tell whether `new` may replace `old`, both the same person's current memories."""
    a, b = _read(old), _read(new)
    if not _same_holder(a, b):
        return False
    if _negates(a, b) and not b.says("added"):
        return True
    if b.says("plan") and not a.says("plan"):
        return False
    if b.says("added"):
        return False
    if a.head and b.head:
        return a.head == b.head and not (a.occasion and b.occasion and not b.says("replanned"))
    if a.age and b.age:
        return True
    shared = a.subjects & b.subjects
    if a.occasion and b.occasion:
        return b.says("replanned") and bool(shared or b.head in a.stems)
    # A topic decides between two standing facts of one kind: not beside an occasion ("a un
    # entretien d'embauche"), nor when one speaks of a thing the other only names ("a une
    # voiture" / "sa voiture est au garage").
    if not (a.occasion or b.occasion) and bool(a.head) == bool(b.head) and a.topics & b.topics:
        return True
    if shared and (b.says("turned") or b.says("corrected") or b.says("replanned")):
        return True
    if len(shared) >= 2 and 2 * len(shared) >= min(len(a.subjects), len(b.subjects)):
        return True
    return closeness is not None and closeness >= CLOSE and bool(shared)


async def check(
    tx: Tx,
    index: DedupIndex,
    candidate: Candidate,
    *,
    user_id: int,
    story_id: int,
    origin: str,
    shown: Collection[int],
) -> tuple[Memory | None, Refusal | None]:
    """The memory `candidate` may replace (its `replaces`), or why it may not."""
    target = await memory_versions.get_in(tx, user_id, candidate.replaces or 0)
    if target is None:
        return None, Refusal.GONE
    if target.id not in shown:
        return None, Refusal.NOT_SHOWN
    if target.kind is Kind.RULE:
        return None, Refusal.RULE
    if target.origin != origin or (target.story_id not in (None, story_id)):
        return None, Refusal.ELSEWHERE
    if not may_replace(target.text, candidate.text):
        return None, Refusal.OTHER_SUBJECT
    decision = await asyncio.to_thread(index.decide, candidate.text)
    other = decision.target
    if decision.action is not Action.CREATE and other is not None and other.id != target.id:
        return None, Refusal.DUPLICATE
    return target, None


async def replace(
    tx: Tx,
    index: DedupIndex,
    target: Memory,
    candidate: Candidate,
    *,
    exchange_id: str,
    ended_by: str,
    now: float,
) -> Memory:
    """Make the candidate the current wording of `target`, the old one kept as history."""
    current = await memory_versions.supersede(
        tx,
        target,
        text=candidate.text,
        scope=target.scope,
        confidence=candidate.confidence,
        ended_by=ended_by,
        exchange_id=exchange_id,
        now=now,
    )
    if target.kind is not Kind.RULE:  # rules stay out of dedup (memories.merge_pool)
        index.replace(target, current)
    return current
