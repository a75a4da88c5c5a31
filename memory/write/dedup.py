"""Lexical similarity between two memory texts, and the merge decision built on it.

Synchronous and model-free on purpose: the write path must not depend on an embedding server.
The score is the highest of three measures on the folded text (sequence ratio both ways, Jaccard
of content words, whole-word verbatim containment), capped just under the threshold when the two
texts do not carry the same "carrier tokens" (numbers, dates, times, amounts, polarity, names),
because a different number is a different fact. A capitalised word that opens a sentence is a name
only when the other text has it capitalised inside a sentence: the same name may open one wording
and sit inside the other ("Lina's café is on Rue Cler" / "On Rue Cler is Lina's café").
"""

from __future__ import annotations

import difflib
import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from memory import lexicon
from memory.lexicon.dates import dated_phrases
from memory.model import Memory
from memory.text import clauses, clean, content_words, fold, is_negated, words

# Read, not chosen (original deployment): over 1,326 pairs of 52 real memories, every pair at >=
# 0.80 was a true variant; the closest pair of distinct facts scored 0.72. Missing a merge costs a
# repeat, a wrong merge silently erases a nuance, so the threshold hugs the true variants.
SIMILARITY_THRESHOLD = 0.80

# Different carriers cap the score just under the threshold, whatever the other measures say.
CARRIER_CAP = SIMILARITY_THRESHOLD - 0.01

# Below this many characters (the shorter folded text), difflib's ratio is not used: measured by
# bench/dedup_minlen.py on tests/corpora/dedup_pairs.py, where distinct facts shorter than this
# reach the threshold by chance ("aime le thé" / "aime le thym").
MIN_RATIO_CHARS = 24

# Verbatim containment counts only when the shorter text says something on its own: "chat" is
# inside "Marie a un chat nommé Félix" but is not a variant of it.
MIN_CONTAINED_WORDS = 2

_RELATIVE = re.compile(
    r"(?<![\w'-])(?:"
    + "|".join(re.escape(p) for p in sorted(lexicon.RELATIVE_TIME, key=len, reverse=True))
    + r")(?![\w'-])"
)
# "May"/"March" are months when capitalised inside a sentence or written beside a day number.
# Known miss: a sentence that starts with the month ("May is my favourite month").
_CAPITAL_MONTH = re.compile(r"(?<![.!?]\s)(?<!^)\b(?:May|March)\b")
_DATED_MONTH = re.compile(r"(?<=\d\s)(?:may|march)\b|\b(?:may|march)(?=\s\d)", re.I)
_CURRENCY_SIGNS = re.compile(r"[€$£¥]")
# A capitalised word inside a sentence is usually a name, and a different name is a different
# fact: "His daughter Emma started school" / "His daughter Ella started school" scored 0.85.
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)(?<![\w'-])[A-ZÀ-ÖØ-Þ][\w'-]*")
# A capitalised word that opens a sentence may be a name or any word ("On", "Lives", "Emma").
# Known miss: two wordings that each open with a different name and have it nowhere else
# ("Emma just started school" / "Ella just started school") compare as if they had no name.
_OPENER = re.compile(r"(?:^|(?<=[.!?:]\s))[A-ZÀ-ÖØ-Þ][\w'-]*")
NAME_PREFIX = "name:"
DATE_PREFIX = "date:"
_POLARITY = "¬"


def carriers(text: str) -> frozenset[str]:
    """Return the tokens that are often the fact itself: numbers, days, months, times, amounts.

    A relative date the write path resolved ("demain (2026-12-08)", "Tuesday (2026-12-08)")
    carries its date, not its words: "demain" said on a Monday and "mardi" said that Monday are
    the same day, "demain" said on two days are two."""
    text, dated = _undated(text)
    folded = fold(text)
    found: set[str] = set(_RELATIVE.findall(folded)) | dated
    for token in words(text):
        if token[0].isdigit() or token in _WORD_CARRIERS:
            found.add(token)
    found.update(_CURRENCY_SIGNS.findall(folded))
    cleaned = clean(text)
    found.update(_names(_NAME.findall(cleaned)))
    found.update(m.casefold() for m in _CAPITAL_MONTH.findall(cleaned))
    found.update(m.casefold() for m in _DATED_MONTH.findall(cleaned))
    if any(is_negated(clause) for clause in clauses(text)):
        found.add(_POLARITY)
    return frozenset(found)


_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'll", "I'd"})
_WORD_CARRIERS = lexicon.NUMBER_WORDS | lexicon.WEEKDAYS | lexicon.MONTHS | lexicon.CURRENCIES


def _names(found: Iterable[str]) -> set[str]:
    return {
        NAME_PREFIX + m.casefold()
        for m in found
        if m not in _NOT_NAMES and m.casefold() not in _WORD_CARRIERS | lexicon.CASED_MONTHS
    }


def _undated(text: str) -> tuple[str, set[str]]:
    """`text` without its resolved date phrases (each with its date), and those dates."""
    phrases = dated_phrases(text)
    if not phrases:
        return text, set()
    kept, at = [], 0
    for start, end, _ in phrases:
        kept.append(text[at:start])
        at = end
    kept.append(text[at:])
    return " ".join(kept), {DATE_PREFIX + label for _, _, label in phrases}


def openers(text: str) -> frozenset[str]:
    """Return the capitalised words that open a sentence, as `carriers` writes names: each is a
    name only if the other text of a pair has it inside a sentence (see `same_carriers`)."""
    return frozenset(_names(_OPENER.findall(clean(_undated(text)[0]))))


def same_carriers(
    a: frozenset[str], a_openers: frozenset[str], b: frozenset[str], b_openers: frozenset[str]
) -> bool:
    """Tell whether two texts carry the same facts' tokens, a name counted wherever it stands:
    what one text carries and the other not must be a word that opens one of its sentences."""
    if a == b:
        return True
    if not (b - a <= a_openers and a - b <= b_openers):
        return False
    # Both texts open with a name the other has inside, and not the same one: the same names in
    # other roles ("Emma gave Paul her piano" / "Paul gave Emma his piano"), another fact.
    led_a, led_b = a_openers & b, b_openers & a
    return not (led_a and led_b and led_a != led_b)


def similarity(a: str, b: str) -> float:
    """Return how close two memory texts are, in [0, 1]; >= SIMILARITY_THRESHOLD means a variant."""
    na, nb = fold(a), fold(b)
    if na == nb:
        return 1.0 if (a or b) else 0.0
    if not na or not nb:
        return 0.0
    same = same_carriers(carriers(a), openers(a), carriers(b), openers(b))
    cap = 1.0 if same else CARRIER_CAP
    ratio = 0.0
    if min(len(na), len(nb)) >= MIN_RATIO_CHARS:
        # SequenceMatcher is not symmetric (0.817 one way, 0.783 the other on a real pair).
        ratio = max(
            difflib.SequenceMatcher(None, na, nb, autojunk=False).ratio(),
            difflib.SequenceMatcher(None, nb, na, autojunk=False).ratio(),
        )
    wa, wb = content_words(a), content_words(b)
    jaccard = len(wa & wb) / len(wa | wb) if wa | wb else 0.0
    contained = 1.0 if _verbatim_contained(na, nb, wa, wb) else 0.0
    return min(max(ratio, jaccard, contained), cap)


def _verbatim_contained(na: str, nb: str, wa: frozenset[str], wb: frozenset[str]) -> bool:
    # Whole words, in order: word-subset inclusion would let "A aime B" be absorbed into
    # "A aime discuter de ses problèmes avec B". Compared as word sequences, so a text is never
    # "contained" in half of a compound ("chat noir" in "super-chat noir").
    short, long_, short_words = (na, nb, wa) if len(na) <= len(nb) else (nb, na, wb)
    if len(short_words) < MIN_CONTAINED_WORDS:
        return False
    needle, haystack = words(short), words(long_)
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


class Action(enum.StrEnum):
    CREATE = "created"
    REPLACE = "merged"
    ABSORB = "absorbed"


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a new text: create it, or merge it into `target` (replace or absorb)."""

    action: Action
    target: Memory | None = None
    score: float = 0.0


def is_poorer(new: str, old: str) -> bool:
    """Tell whether `new` says less than `old`: fewer content words (numbers count as words)."""
    return len(content_words(new)) < len(content_words(old))


def decide(text: str, existing: Iterable[Memory]) -> Decision:
    """Decide how `text` joins `existing` by scoring every pair (the reference for DedupIndex)."""
    best: Memory | None = None
    best_score = 0.0
    for memory in existing:
        score = similarity(text, memory.text)
        if _better(score, memory, best_score, best):
            best, best_score = memory, score
    return _decision(text, best, best_score)


def _better(score: float, memory: Memory, best_score: float, best: Memory | None) -> bool:
    # Ties go to the oldest id: deterministic whatever the order of the memories.
    return score > best_score or (score == best_score and best is not None and memory.id < best.id)


def _decision(text: str, best: Memory | None, best_score: float) -> Decision:
    if best is None or best_score < SIMILARITY_THRESHOLD:
        return Decision(Action.CREATE)
    # A repeat with the same words is absorbed too: rewriting it would only move its date.
    if is_poorer(text, best.text) or content_words(text) == content_words(best.text):
        return Decision(Action.ABSORB, best, best_score)
    return Decision(Action.REPLACE, best, best_score)
