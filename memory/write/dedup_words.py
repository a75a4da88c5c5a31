"""The words the dedup compares: a text's words as one spelling of each, so that two wordings of
one fact written apart compare alike.

A word is compared without its accents (« deteste » is « déteste »), without a final s (« J'apprends
le japonais » / « Apprend le japonais », "lives" / "live"), and under the one spelling the lexicon
gives its other forms: a chat abbreviation (« bcp », "rly"), a British spelling ("favourite"), a
synonym for the same fact (« vit » / « habite », "kids" / "children"), a number word (« deux »,
"two" and "2"), a member of a class written another way (« psycho » / « psychologie »); then a
phrase said another way (« aime beaucoup » / « adore », "doesn't" / "does not").

Only the dedup reads these (`memory.write.dedup`): the filters and recall keep `memory.text`'s
`fold` and `content_words`. One dictionary lookup per word (two or three for a word not listed):
the dedup index computes this for every memory when it is built.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory import lexicon
from memory.text import strip_accents, words

_STOPWORDS = lexicon.STOPWORDS | frozenset(strip_accents(w) for w in lexicon.STOPWORDS)
# "3x a week", « 3x par semaine »: the number and "times".
_TIMES_SIGN = re.compile(r"(\d+)x")


def _plain(word: str) -> str:
    """`word` without its accents (unless that makes it a stopword: « thé » is not "the"), and
    without a final s unless it is a stopword or ends in ss or us ("chess", "bus")."""
    bare = word if word.isascii() else strip_accents(word)
    if bare != word and bare in _STOPWORDS and word not in _STOPWORDS:
        bare = word
    if len(bare) >= 4 and bare[-1] == "s" and bare[-2] not in "su" and bare not in _STOPWORDS:
        return bare[:-1]
    return bare


def _spelled(text: str) -> tuple[str, ...]:
    return tuple(_plain(w) for w in words(text))


def _table() -> dict[str, tuple[str, ...]]:
    """Each listed form (as `_plain` leaves it, and without accents alone) to its spelling."""
    table: dict[str, tuple[str, ...]] = {}

    def put(forms: dict[str, str]) -> None:
        for form, first in forms.items():
            key = words(form)
            if len(key) == 1 and key[0] not in lexicon.STOPWORDS:
                spelling = _spelled(first)
                for k in {key[0], strip_accents(key[0]), _plain(key[0])}:
                    # « thé » without its accent is "the", which stays a stopword.
                    if k == key[0] or k not in _STOPWORDS:
                        table.setdefault(k, spelling)

    put(lexicon.SPELLINGS)
    put({t: "x" for t in lexicon.TIMES})
    put({r: r for r in lexicon.RELATIVES} | lexicon.RELATIONS)
    put(lexicon.FIRST_NAMES)
    # A form two classes name differently (« cheval » the animal and the riding) keeps its own.
    named: dict[str, set[str]] = {}
    for forms in lexicon.MEMBERS.values():
        for form, member in forms.items():
            named.setdefault(form, set()).add(strip_accents(member))
    members = lexicon.MEMBERS.values()
    put({f: m for forms in members for f, m in forms.items() if len(named[f]) == 1})
    return table


def _phrases() -> dict[tuple[str, ...], tuple[str, ...]]:
    out = {}
    for phrase, first in lexicon.PHRASES.items():
        key = tuple(w for k in _spelled(phrase) for w in _TABLE.get(k, (k,)))
        out[key] = tuple(w for k in _spelled(first) for w in _TABLE.get(k, (k,)))
    return out


_TABLE = _table()
_PHRASES = _phrases()
_PHRASE_LONGEST = max(len(k) for k in _PHRASES)
_OPENS_PHRASE = frozenset(k[0] for k in _PHRASES)


def _respelled(tokens: Iterable[str]) -> list[str]:
    out: list[str] = []
    for token in tokens:
        if token[0].isdigit() and (times := _TIMES_SIGN.fullmatch(token)):
            out += (times.group(1), "x")
            continue
        spelling = _TABLE.get(token)
        if spelling is None:
            plain = _plain(token)
            spelling = _TABLE.get(plain, (plain,))
        out.extend(spelling)
    return out


def compared_words(text: str) -> list[str]:
    """Return the text's words as the dedup compares them, in order."""
    tokens = _respelled(words(text))
    if _OPENS_PHRASE.isdisjoint(tokens):
        return tokens
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        if tokens[i] in _OPENS_PHRASE:
            for size in range(min(_PHRASE_LONGEST, n - i), 0, -1):
                spelling = _PHRASES.get(tuple(tokens[i : i + size]))
                if spelling is not None:
                    out.extend(spelling)
                    i += size
                    break
            else:
                out.append(tokens[i])
                i += 1
        else:
            out.append(tokens[i])
            i += 1
    return out


def compared_text(text: str) -> str:
    """Return the text as the dedup's sequence ratio compares it: its compared words, spaced."""
    return " ".join(compared_words(text))


def content(compared: Iterable[str]) -> frozenset[str]:
    """Return the compared words that carry meaning (not stopwords of either language)."""
    return frozenset(w for w in compared if w not in _STOPWORDS)
