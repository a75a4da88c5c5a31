"""What a dedup index knows of each memory text, as a few numpy arrays: the pure-Python part of
a build (folding, carriers, compared words: ~100 µs a text, seconds at 100,000 memories).

`features` takes plain texts and returns plain arrays and strings, so it runs as well in another
process (`memory.write.dedup_pool`) as in a thread: nothing of it shares the event loop's
interpreter lock there, and what comes back is a handful of objects, not one per memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.bulk import yielding
from memory.text import fold
from memory.write.dedup import carrier_key
from memory.write.dedup_words import compared_words, content

BUCKETS = 64
# Joins a carrier set's tokens into one string key: no token holds it (they are words,
# numbers, signs and names, all printable).
KEY_SEPARATOR = "\x00"


def group_key(tokens: frozenset[str]) -> str:
    """The string that names a carrier set (the same set, the same string)."""
    return KEY_SEPARATOR.join(sorted(tokens))


def key_tokens(key: str) -> frozenset[str]:
    """The carrier set a `group_key` names."""
    return frozenset(key.split(KEY_SEPARATOR)) if key else frozenset()


def histogram(folded: str) -> npt.NDArray[np.int32]:
    """The text's characters counted in BUCKETS hashed buckets."""
    codes = np.frombuffer(folded.encode("utf-32-le"), dtype=np.uint32)
    return np.bincount(codes % BUCKETS, minlength=BUCKETS).astype(np.int32)


@dataclass(frozen=True)
class Features:
    """Per text, in the order given: its folded length, the length and character histogram of
    its compared text (`dedup_words.compared_text`), its carrier group (an index into
    `groups`), and its compared content words (CSR: those of text i are
    `words[word_ids[word_ptr[i]:word_ptr[i + 1]]]`)."""

    lengths: npt.NDArray[np.int32]
    compared_lengths: npt.NDArray[np.int32]
    hist: npt.NDArray[np.uint16] | npt.NDArray[np.int32]
    group: npt.NDArray[np.int32]
    groups: list[str]
    word_ptr: npt.NDArray[np.int64]
    word_ids: npt.NDArray[np.int32]
    words: list[str]


def features(texts: Sequence[str]) -> Features:
    """The features of every text (in a worker process or thread: pure CPU, no I/O)."""
    groups: dict[str, int] = {}
    vocabulary: dict[str, int] = {}
    group = np.empty(len(texts), dtype=np.int32)
    lengths = np.empty(len(texts), dtype=np.int32)
    compared_lengths = np.empty(len(texts), dtype=np.int32)
    word_ptr = np.zeros(len(texts) + 1, dtype=np.int64)
    word_ids: list[int] = []
    compared_all: list[str] = []
    # In a thread (a small pool, or the process failed) it lets go of the interpreter lock
    # every few hundred texts; in a process that costs one system call each time.
    for i, text in enumerate(yielding(texts)):
        lengths[i] = len(fold(text))
        spelled = compared_words(text)
        compared = " ".join(spelled)
        compared_all.append(compared)
        compared_lengths[i] = len(compared)
        group[i] = groups.setdefault(group_key(carrier_key(text)), len(groups))
        word_ids.extend(vocabulary.setdefault(w, len(vocabulary)) for w in content(spelled))
        word_ptr[i + 1] = len(word_ids)
    return Features(
        lengths=lengths,
        compared_lengths=compared_lengths,
        hist=_histograms(compared_all, compared_lengths),
        group=group,
        groups=list(groups),
        word_ptr=word_ptr,
        word_ids=np.asarray(word_ids, dtype=np.int32),
        words=list(vocabulary),
    )


def _histograms(
    folded: list[str], lengths: npt.NDArray[np.int32]
) -> npt.NDArray[np.uint16] | npt.NDArray[np.int32]:
    """Every text's `histogram` (of its compared text) in one pass over their joined characters."""
    codes = np.frombuffer("".join(folded).encode("utf-32-le"), dtype=np.uint32) % BUCKETS
    rows = np.repeat(np.arange(len(folded), dtype=np.int64), lengths)
    counts = np.bincount(rows * BUCKETS + codes, minlength=len(folded) * BUCKETS)
    hist = counts.reshape(len(folded), BUCKETS)
    # A bucket counts at most a text's length: two bytes hold it (memories are short) and
    # halve what a cached index weighs; a longer text keeps four.
    if hist.size and hist.max() > np.iinfo(np.uint16).max:
        return hist.astype(np.int32)
    return hist.astype(np.uint16)
