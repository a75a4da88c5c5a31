"""Keyword search over one person's memories (FTS5 `memories_fts`, or PostgreSQL's full-text
search on `memories.words`), bounded per term.

Each term is matched on its own and stops at `cap` memories: ranking every memory that holds a
word by BM25 cost time in proportion to how many hold it (0.4 s for a word in most of 100,000
memories), and a word in more memories than recall has places cannot say which one a message
is about. The FTS table drives the join (CROSS JOIN), so a term stops after `cap` of the
person's visible memories instead of the planner walking all of them.

Both indexes hold each word behind its owner's tag ("42xtea", schema 19), and a term is asked
with the asker's tag: its entries, a prefix's too, are that person's only, so a term costs what
the person's own memories hold, never what everyone's do (a newcomer's 32 commonest words read
every other person's matches when the owner was checked after the match; bench/newcomer.py).

On PostgreSQL an expression (`"term"` or `"term"*`, FTS5's syntax) becomes a tsquery of the
`echo_folded` configuration (accents and case folded, no stemming, as unicode61 does), a prefix
query for `*`; the GIN index on `words` finds the candidates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory.store.db import Store
from memory.store.sqlite.connect import owned_words
from memory.store.tables.memories import visible_where


async def term_matches(
    store: Store,
    expressions: Sequence[str],
    *,
    user_id: int,
    story_id: int,
    origin: str,
    cap: int,
    everywhere: bool = False,
) -> list[list[int]]:
    """Return, for each FTS5 expression, the ids of up to `cap` memories visible here that it
    matches (a list of `cap` ids means: at least that many)."""
    if not expressions:
        return []
    where = visible_where(origin, everywhere=everywhere)
    parts: list[str] = []
    args: list[object] = []
    for k, expression in enumerate(expressions):
        term, prefix = _term(expression)
        owned = owned_words(user_id, term)
        if not owned:
            continue  # no word in it: it matches nothing
        if store.dialect == "postgres":
            query = "quote_literal(?) || ':*'" if prefix else "quote_literal(?)"
            parts.append(
                f"SELECT {k}, id FROM (SELECT m.id AS id FROM memories m WHERE m.words"
                f" @@ to_tsquery('echo_folded', {query}) AND {where} LIMIT ?) AS term{k}"
            )
            args.append(owned)
        else:
            parts.append(
                f"SELECT {k}, id FROM (SELECT m.id AS id FROM memories_fts CROSS JOIN memories m"
                f" ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? AND {where} LIMIT ?)"
            )
            args.append(f'"{owned}"*' if prefix else f'"{owned}"')
        args += [user_id, story_id, origin, cap]
    out: list[list[int]] = [[] for _ in expressions]
    if not parts:
        return out
    for k, memory_id in await store.fetchall(" UNION ALL ".join(parts), tuple(args)):
        out[int(k)].append(int(memory_id))
    return out


def _term(expression: str) -> tuple[str, bool]:
    """The word of an FTS5 expression (`"word"` or `"word"*`) and whether it is a prefix."""
    match = re.fullmatch(r'"((?:[^"]|"")*)"(\*?)', expression)
    if match is None:
        raise ValueError("a keyword expression is one quoted term, with or without *")
    return match.group(1).replace('""', '"'), bool(match.group(2))
