"""Keyword recall: the message's content words against an FTS5 index of the user's memories.

It works when vectors are down (a degraded turn degrades to keywords, not to recency alone), and
it carries names and rare words that an embedding model may blur. Only rare words recall: a term
that more than RARE_TERM_CAP of the memories visible here contain is dropped, since it cannot say
which of them the message is about ("first", "travaille", "wedding" at 10,000 memories filled the
recall places with memories the message was not about, bench/results/recall.md), and it would
make the query's cost grow with the person's memories. Hits are ranked by how rare their words
are (inverse document frequency); the fusion with the cosine ranks is in selection.py. A hit is
decisive when one of its words is in at most DECISIVE_DF of the memories: only a decisive hit may
take the place of a memory the model ranks among the turn's places.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from memory import lexicon
from memory.store import Store
from memory.store.tables import keywords
from memory.text import strip_accents, words

log = logging.getLogger(__name__)

# Keyword hits considered per turn, rarest words first.
MAX_KEYWORD_HITS = 50
MAX_TERMS = 32
# From this length a term also matches longer words ("chat" -> "chats", "garden" -> "gardening").
PREFIX_FROM = 4
# A term in more visible memories than this is too common to recall by (and is not ranked): as
# many as the 24 places of a turn. 16 served the same share, 50 lost 9 points with MiniLM at
# 10,000 memories (bench/results/recall-changes.md).
RARE_TERM_CAP = 24
# A hit one of whose words is in at most this many memories is decisive: it may displace a memory
# the model ranks among the turn's places. Every relevant memory that only keywords served in the
# bench was matched by a word of its own (df 1: "sea", "mer", "avion"); hits on "travaille" (in
# 10 to 20 of 234 memories) and "train" (4 to 7) pushed out relevant memories the model ranked
# 21st to 24th (bench/results/recall-changes.md).
DECISIVE_DF = 1


@dataclass(frozen=True, slots=True)
class KeywordRecall:
    """The memories the message's rare words match, best first, each with the words that
    matched it, and those of them that are decisive (a word in at most DECISIVE_DF memories)."""

    hits: dict[int, tuple[str, ...]]
    decisive: frozenset[int]


# Never a keyword, in either language: function words, negations, chat's fillers.
_NOT_TERMS = lexicon.STOPWORDS | lexicon.NEGATIONS | lexicon.NOT_KEYWORDS


def query_terms(text: str) -> list[str]:
    """Return the message's content words, accents folded, stopwords and negations removed:
    each part of a hyphenated word too (« est-ce », « là-bas »), checked with its accents
    (« thé » is not "the")."""
    terms: list[str] = []
    for word in words(text):
        if word in _NOT_TERMS:
            continue
        for part in word.split("-"):
            if part in _NOT_TERMS:
                continue
            term = strip_accents(part).replace("'", "")
            if (len(term) >= 2 or term.isdigit()) and term not in terms:
                terms.append(term)
    return terms[:MAX_TERMS]


def _expression(term: str) -> str:
    return f'"{term}"*' if len(term) >= PREFIX_FROM else f'"{term}"'


async def keyword_hits(
    store: Store,
    *,
    user_id: int,
    story_id: int,
    origin: str,
    text: str,
    limit: int = MAX_KEYWORD_HITS,
    everywhere: bool = False,
    cap: int = RARE_TERM_CAP,
) -> dict[int, tuple[str, ...]]:
    """Return the user's visible memories that the message's rare words match, best first, each
    with the words that matched it (the words that recalled it, as /why shows them)."""
    found = await keyword_recall(
        store,
        user_id=user_id,
        story_id=story_id,
        origin=origin,
        text=text,
        limit=limit,
        everywhere=everywhere,
        cap=cap,
    )
    return found.hits


async def keyword_recall(
    store: Store,
    *,
    user_id: int,
    story_id: int,
    origin: str,
    text: str,
    limit: int = MAX_KEYWORD_HITS,
    everywhere: bool = False,
    cap: int = RARE_TERM_CAP,
    decisive_df: int = DECISIVE_DF,
) -> KeywordRecall:
    """Return the keyword hits (see keyword_hits) and which of them are decisive."""
    terms = query_terms(text)
    matches = await keywords.term_matches(
        store,
        [_expression(t) for t in terms],
        user_id=user_id,
        story_id=story_id,
        origin=origin,
        cap=cap + 1,
        everywhere=everywhere,
    )
    weight: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    rarest: dict[int, int] = {}
    common = 0
    for term, ids in zip(terms, matches, strict=True):
        if len(ids) > cap:
            common += 1
            continue
        # A word in one memory weighs log(cap + 1), one in `cap` memories log(1 + 1/cap).
        idf = math.log((cap + 1) / len(ids)) if ids else 0.0
        for memory_id in ids:
            weight[memory_id] = weight.get(memory_id, 0.0) + idf
            matched.setdefault(memory_id, []).append(term)
            rarest[memory_id] = min(rarest.get(memory_id, len(ids)), len(ids))
    if common:
        log.debug("keyword recall: %d of %d terms too common to recall by", common, len(terms))
    best = sorted(weight, key=lambda i: (-weight[i], -len(matched[i]), i))[:limit]
    return KeywordRecall(
        {i: tuple(matched[i]) for i in best},
        frozenset(i for i in best if rarest[i] <= decisive_df),
    )
