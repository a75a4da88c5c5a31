"""Lexical similarity between two memory texts, and the merge decision built on it.

Synchronous and model-free on purpose: the write path must not depend on an embedding server.
The score is the highest of three measures on the folded text (sequence ratio both ways, Jaccard
of content words, whole-word verbatim containment), capped just under the threshold when the two
texts do not carry the same "carrier tokens", because a different carrier is a different fact:
numbers, dates, times, amounts, polarity, names, and the words of the lexicon's classes that are
the fact itself (an animal, an instrument, a sport, a job, a study, a food, a language, a place,
a brand: `animal:hamster`), a relative (`rel:sœur`: a fact about someone's sister is not one
about them, so it is not absorbed by containment) and dislike (« déteste » against « adore »).
A capitalised word that opens a sentence is a name only when the other text has it capitalised
inside a sentence ("Lina's café is on Rue Cler" / "On Rue Cler is Lina's café"), or when it is
a listed first name.
"""

from __future__ import annotations

import difflib
import enum
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from memory import lexicon
from memory.lexicon.dates import dated_phrases
from memory.model import Memory
from memory.text import clauses, clean, content_words, fold, is_negated, strip_accents, words
from memory.write.dedup_words import compared_words, content

# Read, not chosen (original deployment): over 1,326 pairs of 52 real memories, every pair at >=
# 0.80 was a true variant; the closest pair of distinct facts scored 0.72. Missing a merge costs a
# repeat, a wrong merge silently erases a nuance, so the threshold hugs the true variants.
SIMILARITY_THRESHOLD = 0.80

# Different carriers cap the score just under the threshold, whatever the other measures say.
CARRIER_CAP = SIMILARITY_THRESHOLD - 0.01

# Below this many characters (the shorter folded text), difflib's ratio is not used: measured by
# bench/dedup/minlen.py on tests/corpora/dedup_pairs.py, where distinct facts shorter than this
# reach the threshold by chance ("aime le thé" / "aime le thym").
MIN_RATIO_CHARS = 24

# Verbatim containment counts only when the shorter text says something on its own: "chat" is
# inside "Marie a un chat nommé Félix" but is not a variant of it.
MIN_CONTAINED_WORDS = 2

# Each relative time phrase, also without its accents (« apres-demain ») and a word of it in the
# plural ("Works nights" / "Works night shifts", « le soir » / « les soirs »), to its listed form.
_RELATIVE_FORMS = (
    {strip_accents(p) + "s": p for p in lexicon.RELATIVE_TIME if p.isalpha()}
    | {strip_accents(p): p for p in lexicon.RELATIVE_TIME}
    | {p + "s": p for p in lexicon.RELATIVE_TIME if p.replace("-", "").isalpha()}
    | {p: p for p in lexicon.RELATIVE_TIME}
)
_RELATIVE = re.compile(
    r"(?<![\w'-])(?:"
    + "|".join(re.escape(p) for p in sorted(_RELATIVE_FORMS, key=len, reverse=True))
    + r")(?![\w'-])"
)
# « le we », « ce we »: the week-end after a French article (« we » alone is English).
_WEEKEND = re.compile(r"\b(le|ce|du|au|chaque|les|des) we\b")
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
    times = _WEEKEND.sub(r"\1 week-end", folded)
    found: set[str] = {_RELATIVE_FORMS[p] for p in _RELATIVE.findall(times)} | dated
    tokens = words(text)
    for token in tokens:
        if token[0].isdigit():
            found.add(token)
        elif (listed := _WORD_CARRIERS.get(token)) is not None:
            found.add(listed)
    found.update(_CURRENCY_SIGNS.findall(folded))
    covered = _members(tokens, found, frozenset(_POSSESSIVE.findall(folded)))
    cleaned = clean(text)
    found.update(_names(_NAME.findall(cleaned), covered))
    found.update(_named(tokens, covered))
    found.update(m.casefold() for m in _CAPITAL_MONTH.findall(cleaned))
    found.update(m.casefold() for m in _DATED_MONTH.findall(cleaned))
    if any(is_negated(clause) for clause in clauses(text)):
        found.add(_POLARITY)
    return frozenset(found)


_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'll", "I'd"})


def _word_carriers() -> dict[str, str]:
    """Each number, weekday, month and currency word, also without its accents (« decembre »)
    and a weekday in the plural (« tous les mardis », "on Tuesdays"), to its listed form."""
    listed = lexicon.NUMBER_WORDS | lexicon.WEEKDAYS | lexicon.MONTHS | lexicon.CURRENCIES
    forms = {strip_accents(w): w for w in listed} | {d + "s": d for d in lexicon.WEEKDAYS}
    return forms | {w: w for w in listed}


_WORD_CARRIERS = _word_carriers()


def _names(found: Iterable[str], covered: frozenset[str] = frozenset()) -> set[str]:
    """Names as carriers write them, without the words a lexicon class already carries."""
    out = set()
    for m in found:
        key = m.casefold()
        if m in _NOT_NAMES or key in _WORD_CARRIERS or key in lexicon.CASED_MONTHS:
            continue
        if key.translate(_APOSTROPHE) not in covered:
            out.update(_hyphenated(key))
    return out


def _hyphenated(key: str) -> set[str]:
    # « l'hôpital Édouard-Herriot » is « l'hôpital Édouard Herriot »: each part is a name.
    if "-" not in key:
        return {_name(key)}
    return {_name(part) for part in key.split("-") if part}


def _name(word: str) -> str:
    # Without accents, and a listed first name by its first form: "Zoë" is "Zoe". A possessive
    # stays apart: "Lina's café" is not about Lina herself.
    bare = strip_accents(word)
    base, possessive = (bare[:-2], "'s") if bare.endswith("'s") else (bare, "")
    return NAME_PREFIX + _FIRST_NAMES.get(base, base) + possessive


_APOSTROPHE = str.maketrans({"’": "'"})
_FIRST_NAMES = {strip_accents(k): strip_accents(v) for k, v in lexicon.FIRST_NAMES.items()}
DISLIKE = "polarity:dislike"
BADLY = "polarity:badly"
RELATIVE_PREFIX = "rel:"


def _lookup() -> dict[tuple[str, ...], frozenset[str]]:
    """Every form of the lexicon's fact words, as `words` splits it, to the carriers it adds;
    each form also without its accents, unless that is a stopword ("thé" is not "the")."""
    table: dict[tuple[str, ...], set[str]] = {}

    def put(form: str, token: str) -> None:
        key = tuple(words(form))
        bare = tuple(strip_accents(w) for w in key)
        for k in {key, bare}:
            if k and not (len(k) == 1 and k[0] in lexicon.STOPWORDS and k != key):
                table.setdefault(k, set()).add(token)

    for kind, forms in lexicon.MEMBERS.items():
        for form, member in forms.items():
            put(form, f"{kind}:{strip_accents(member)}")
    for form, first in lexicon.FIRST_NAMES.items():
        put(form, NAME_PREFIX + strip_accents(first))
    relatives = {r: r for r in lexicon.RELATIVES} | lexicon.RELATIONS
    for form, relative in relatives.items():
        put(form, RELATIVE_PREFIX + strip_accents(relative))
    for form in lexicon.DISLIKES:
        put(form, DISLIKE)
    for form in lexicon.BADLY:
        put(form, BADLY)
    return {k: frozenset(v) for k, v in table.items()}


_LOOKUP = _lookup()
_LONGEST = max(len(k) for k in _LOOKUP)
# The first words of the phrases: only there is a longer match tried.
_OPENS_PHRASE = frozenset(k[0] for k in _LOOKUP if len(k) > 1)
# A relative that is also a stopword of the other language ("son") needs its context.
_CONTEXTUAL = frozenset(
    k[0] for k, v in _LOOKUP.items() if len(k) == 1 and k[0] in lexicon.STOPWORDS
)


def _singulars(word: str) -> list[str]:
    # "strawberries", "tomatoes", "chats", "chevaux" (listed): one set lookup each.
    if len(word) < 4:
        return []
    if word.endswith("ies"):
        return [word[:-3] + "y"]
    if word.endswith("es"):
        return [word[:-1], word[:-2]]
    if word[-1] in "sx":
        return [word[:-1]]
    return []


_POSSESSIVE = re.compile(r"([^\W\d_]+)'s\b")


def _members(tokens: list[str], found: set[str], possessives: frozenset[str]) -> frozenset[str]:
    """Add the carriers of the lexicon's fact words in `tokens` to `found`, longest phrase first;
    return the words they cover (those are not names as well). A first name written with a
    possessive ("Lina's") is carried as `carriers` writes that name."""
    covered: set[str] = set()
    i, n = 0, len(tokens)
    while i < n:
        longest = min(_LONGEST, n - i) if tokens[i] in _OPENS_PHRASE else 1
        for size in range(longest, 0, -1):
            hit = _match(tokens, i, size)
            if hit:
                if size == 1 and tokens[i] in possessives and tokens[i + 1 : i + 2] == ["s"]:
                    hit = frozenset(t + "'s" if t.startswith(NAME_PREFIX) else t for t in hit)
                found.update(hit)
                covered.update(tokens[i : i + size])
                i += size
                break
        else:
            i += 1
    return frozenset(covered)


def _match(tokens: list[str], i: int, size: int) -> frozenset[str]:
    key = tuple(tokens[i : i + size])
    hit = _LOOKUP.get(key)
    if hit is None:
        for singular in _singulars(key[-1]):
            hit = _LOOKUP.get((*key[:-1], singular))
            if hit is not None:
                # A name has no plural: "three times a week" is not "Tim".
                hit = frozenset(t for t in hit if not t.startswith(NAME_PREFIX)) or None
            if hit is not None:
                break
    if hit is None:
        return frozenset()
    before = tokens[i - 1] if i else ""
    if size == 1 and key[0] in lexicon.ARTICLE_ONLY and before not in lexicon.ARTICLES:
        return frozenset()
    if size == 1 and key[0] in _CONTEXTUAL and before not in lexicon.BEFORE_RELATIVE:
        return frozenset()
    return hit


def _named(tokens: list[str], covered: frozenset[str]) -> set[str]:
    """The word after a naming word is a name, listed or not: "a dog named biscuit"."""
    return {
        name
        for word, after in itertools.pairwise(tokens)
        if word in lexicon.NAMING
        and after[0].isalpha()
        and after not in lexicon.STOPWORDS
        and after not in covered
        for name in _hyphenated(after)
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
    if not (b - a <= a_openers and a - b <= b_openers):
        return False
    # Both texts open with a name the other has inside, and not the same one: the same names in
    # other roles ("Emma gave Paul her piano" / "Paul gave Emma his piano"), another fact.
    led_a, led_b = a_openers & b, b_openers & a
    return not (led_a and led_b and led_a != led_b)


def carrier_key(text: str) -> frozenset[str]:
    """Return the carriers as two texts compare them: a number word as its digits (« deux »,
    "two" and "2" are one number: « A deux enfants » / « A 2 enfants » scored 0.33), "3x" as 3."""
    return frozenset(_NUMBER_VALUES.get(t) or _digits(t) for t in carriers(text))


_NUMBER_VALUES = lexicon.NUMBER_VALUES
_TIMES_SIGN = re.compile(r"(\d+)x")


def _digits(token: str) -> str:
    times = _TIMES_SIGN.fullmatch(token) if token[0].isdigit() else None
    return times.group(1) if times else token


def similarity(a: str, b: str) -> float:
    """Return how close two memory texts are, in [0, 1]; >= SIMILARITY_THRESHOLD means a variant."""
    fa, fb = fold(a), fold(b)
    if fa == fb:
        return 1.0 if (a or b) else 0.0
    if not fa or not fb:
        return 0.0
    same = same_carriers(carrier_key(a), openers(a), carrier_key(b), openers(b))
    cap = 1.0 if same else CARRIER_CAP
    # The measures compare the texts' compared words (dedup_words: without accents, one spelling
    # of each word): « Déteste les araignées » / « deteste les araignees » scored 0.0.
    wa, wb = compared_words(a), compared_words(b)
    na, nb = " ".join(wa), " ".join(wb)
    ratio = 0.0
    if min(len(fa), len(fb)) >= MIN_RATIO_CHARS and na and nb:
        # SequenceMatcher is not symmetric (0.817 one way, 0.783 the other on a real pair).
        ratio = max(
            difflib.SequenceMatcher(None, na, nb, autojunk=False).ratio(),
            difflib.SequenceMatcher(None, nb, na, autojunk=False).ratio(),
        )
    ca, cb = content(wa), content(wb)
    jaccard = len(ca & cb) / len(ca | cb) if ca | cb else 0.0
    short, long_ = (wa, wb) if len(na) <= len(nb) else (wb, wa)
    contained = 1.0 if _verbatim_contained(short, long_) else 0.0
    return min(max(ratio, jaccard, contained), cap)


def _verbatim_contained(needle: list[str], haystack: list[str]) -> bool:
    # Whole words, in order: word-subset inclusion would let "A aime B" be absorbed into
    # "A aime discuter de ses problèmes avec B". Compared as word sequences, so a text is never
    # "contained" in half of a compound ("chat noir" in "super-chat noir").
    # Nor right after "to": "Wants to learn Japanese", "Used to play chess" are not "Learns
    # Japanese", "Plays chess" (the same words once "learns" is compared as "learn").
    if len(content(needle)) < MIN_CONTAINED_WORDS:
        return False
    n = len(needle)
    return any(
        haystack[i : i + n] == needle and (i == 0 or haystack[i - 1] not in _INFINITIVE)
        for i in range(len(haystack) - n + 1)
    )


_INFINITIVE = frozenset({"to"})


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
