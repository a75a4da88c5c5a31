"""The condensed history: what is kept of the history that left the prompt, with no model call —
the sentences people actually wrote, the most informative ones, in their order. (Not the rolling
summary, which each reflection has the model rewrite.)

Used by the `summarize` strategy: when the oldest messages no longer fit, their gist stays as a
short block before the current input. It rolls: the next time more history falls out, the kept
sentences and the new ones are condensed together under the same size limit.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence

from memory.text import content_words

# A pasted wall of text must not take the whole summary: longer sentences are cut.
MAX_SENTENCE_CHARS = 280
# A sentence sharing this much of its vocabulary (Jaccard) with one already kept says the same
# thing again ("habite à Brest depuis 2000" / "depuis 2001"): the room goes to another event.
REDUNDANT = 0.6
# Sentences with fewer content words carry no event ("ok", "haha", "merci !").
MIN_CONTENT_WORDS = 2

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_SALIENT = re.compile(r"\d|(?<=[a-zà-ÿ,;] )[A-ZÀ-Þ]")


def split_sentences(speaker: str, text: str) -> list[str]:
    """The sentences of one message, each prefixed with who said it."""
    out = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        if len(sentence) > MAX_SENTENCE_CHARS:
            sentence = sentence[: MAX_SENTENCE_CHARS - 1].rstrip() + "…"
        if sentence:
            out.append(f"{speaker}: {sentence}" if speaker else sentence)
    return out


def condense(
    sentences: Sequence[str], *, limit: int, count: Callable[[str], int]
) -> tuple[str, ...]:
    """Keep the most informative sentences whose lines fit in `limit` tokens, in their order."""
    return tuple(sentences[i] for i in choose(sentences, limit=limit, count=count))


def choose(sentences: Sequence[str], *, limit: int, count: Callable[[str], int]) -> list[int]:
    """The indexes of the sentences `condense` keeps, in order.

    A sentence scores by how much of the conversation's recurring vocabulary it carries (words
    seen in several sentences are its topics), per word so long sentences do not win by length,
    with a bonus for numbers and names (dates, places, people: what a reader needs later).
    """
    words = [content_words(s.partition(": ")[2] or s) for s in sentences]
    frequency = Counter(w for ws in words for w in ws)
    scored = []
    for index, (sentence, ws) in enumerate(zip(sentences, words, strict=True)):
        if len(ws) < MIN_CONTENT_WORDS:
            continue
        topical = sum(math.log1p(frequency[w]) for w in ws) / math.sqrt(len(ws))
        salient = len(_SALIENT.findall(sentence))
        scored.append((topical + 0.5 * min(salient, 4), index))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    chosen: list[int] = []
    used = 0
    for _, index in scored:
        cost = count(f"- {sentences[index]}") + 1
        if any(_jaccard(words[index], words[i]) >= REDUNDANT for i in chosen):
            continue
        if used + cost <= limit:
            chosen.append(index)
            used += cost
    return sorted(chosen)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0
