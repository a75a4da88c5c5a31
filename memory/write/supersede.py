"""A memory that replaces another: the model proposes, the code decides.

The reflection is shown the memories its reply used and may say that a new memory replaces one
of them (a move, a new job, a changed taste, a correction). The replacement is made only when the
target is this person's, active, learned in this place, was shown to this reflection, and is about
the same thing as the new memory (`same_thing`); otherwise it is refused with a counted reason
and the new memory is written as any other (it is still something the person said).

Known false positives of `same_thing` (tests/corpora/supersession.py, LOOKALIKES' last three):
two memories on one of the single topics about different people ("works as a nurse" / "her
husband works in a bank") pass on the topic alone. The model has to have proposed it first.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Collection

from memory import lexicon
from memory.model import Candidate, Kind, Memory
from memory.store import versions
from memory.store.db import Tx
from memory.text import content_words
from memory.write.dedup import Action
from memory.write.dedup_index import DedupIndex

# Least share of the smaller memory's subject words the other must hold, when no single topic
# is shared (make bench-supersession, tests/corpora/supersession.py: the 24 true updates score
# 1.0, 18 of the 21 look-alikes 0 and 3 score 1.0 on the topic rule; nothing falls between, the
# threshold sits in the gap. Words alone: 14 updates >= 0.5, every look-alike 0).
SAME_THING = 0.5


class Refusal(enum.StrEnum):
    """Why a proposed replacement was not made (counted as supersession_refused:<reason>)."""

    GONE = "gone"  # not this person's memory (now): erased since, another's, never one
    NOT_SHOWN = "not_shown"  # theirs, but not among the memories this reflection was shown
    ELSEWHERE = "elsewhere"  # learned in another place or story: not this conversation's to change
    RULE = "rule"  # the person's wish about how to be talked to: only they change it
    OTHER_SUBJECT = "other_subject"  # about something else (same_thing below SAME_THING)
    DUPLICATE = "duplicate"  # the new wording says what another memory already does


def subject_words(text: str) -> frozenset[str]:
    """The words of a memory that say what it is about: its content words but numbers, dates
    and the words that never name a subject alone (lexicon.NOT_A_SUBJECT)."""
    return frozenset(
        w
        for w in content_words(text)
        if not w[0].isdigit()
        and w not in lexicon.NOT_A_SUBJECT
        and w not in lexicon.NUMBER_WORDS
        and w not in lexicon.WEEKDAYS
        and w not in lexicon.MONTHS
        and w not in lexicon.RELATIVE_TIME
        and w not in lexicon.NEGATIONS
    )


def topics(text: str) -> frozenset[str]:
    """The single topics (a home, a job, a partner, studies) a memory speaks of."""
    found = content_words(text)
    return frozenset(name for name, vocabulary in lexicon.TOPICS.items() if found & vocabulary)


def same_thing(old: str, new: str) -> float:
    """How surely two memories are about the same thing, from 0 to 1: 1 when they speak of one
    single topic, else the share of the smaller one's subject words the other holds."""
    if topics(old) & topics(new):
        return 1.0
    a = subject_words(old) - _topic_words()
    b = subject_words(new) - _topic_words()
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def may_replace(old: str, new: str, *, closeness: float | None = None) -> bool:
    """Tell whether `new` may replace `old`, both the same person's current memories."""
    return same_thing(old, new) >= SAME_THING


def _topic_words() -> frozenset[str]:
    return frozenset().union(*lexicon.TOPICS.values())


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
    target = await versions.get_in(tx, user_id, candidate.replaces or 0)
    if target is None:
        return None, Refusal.GONE
    if target.id not in shown:
        return None, Refusal.NOT_SHOWN
    if target.kind is Kind.RULE:
        return None, Refusal.RULE
    if target.origin != origin or (target.story_id not in (None, story_id)):
        return None, Refusal.ELSEWHERE
    if same_thing(target.text, candidate.text) < SAME_THING:
        return None, Refusal.OTHER_SUBJECT
    decision = await asyncio.to_thread(index.decide, candidate.text)
    other = decision.target
    if decision.action is not Action.CREATE and other is not None and other.id != target.id:
        return None, Refusal.DUPLICATE
    return target, None


async def replace(
    tx: Tx, index: DedupIndex, target: Memory, candidate: Candidate, *, exchange_id: str,
    ended_by: str, now: float,
) -> Memory:  # fmt: skip
    """Make the candidate the current wording of `target`, the old one kept as history."""
    current = await versions.supersede(
        tx, target, text=candidate.text, scope=target.scope,
        confidence=candidate.confidence, ended_by=ended_by, exchange_id=exchange_id, now=now,
    )  # fmt: skip
    if target.kind is not Kind.RULE:  # rules stay out of dedup (memories.merge_pool)
        index.replace(target, current)
    return current
