"""Keyword recall: the message's content words against an FTS5 index of the user's memories.

It works when vectors are down (a degraded turn degrades to keywords, not to recency alone), and
it carries names and rare words that an embedding model may blur: BM25 weighs a pet's name far
above "aime". Its ranks are fused with the cosine ranks in the selection's recall pass.
"""

from __future__ import annotations

from memory import lexicon
from memory.store.db import Store
from memory.store.memories import visible_where
from memory.text import strip_accents, words

# Keyword hits considered per turn, best BM25 first.
MAX_KEYWORD_HITS = 50
MAX_TERMS = 32
# From this length a term also matches longer words ("chat" -> "chats", "garden" -> "gardening").
PREFIX_FROM = 4


def query_terms(text: str) -> list[str]:
    """Return the message's content words, accents folded, stopwords and negations removed."""
    terms: list[str] = []
    for word in words(text):
        if word in lexicon.STOPWORDS or word in lexicon.NEGATIONS:
            continue
        term = strip_accents(word).replace("'", "")
        for part in term.split("-"):
            if (len(part) >= 2 or part.isdigit()) and part not in terms:
                terms.append(part)
    return terms[:MAX_TERMS]


def _match_expression(terms: list[str]) -> str:
    return " OR ".join(f'"{t}"*' if len(t) >= PREFIX_FROM else f'"{t}"' for t in terms)


def matched_terms(terms: list[str], memory_text: str) -> tuple[str, ...]:
    """Return the query terms found in a memory's text (as FTS matched them)."""
    found = {strip_accents(w) for w in words(memory_text)}
    pieces = {p for w in found for p in w.replace("'", "").split("-")}
    return tuple(
        t
        for t in terms
        if t in pieces or (len(t) >= PREFIX_FROM and any(p.startswith(t) for p in pieces))
    )


async def keyword_hits(
    store: Store,
    *,
    user_id: int,
    story_id: int,
    origin: str,
    text: str,
    limit: int = MAX_KEYWORD_HITS,
    everywhere: bool = False,
) -> dict[int, tuple[str, ...]]:
    """Return the user's visible memories matching the message, best first, with matched words."""
    terms = query_terms(text)
    if not terms:
        return {}
    rows = await store.fetchall(
        "SELECT m.id, m.text FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid"
        f" WHERE memories_fts MATCH ? AND {visible_where(origin, everywhere=everywhere)}"
        " ORDER BY bm25(memories_fts), m.id LIMIT ?",
        (_match_expression(terms), user_id, story_id, origin, limit),
    )
    return {int(r[0]): matched_terms(terms, str(r[1])) for r in rows}
