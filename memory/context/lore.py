"""Lore entries: durable knowledge fragments activated by keywords found in the conversation.

Matching is a substring test on normalised text: case and accents ignored by default ("élodie"
finds "Elodie's"), both kept for an entry marked case-sensitive (a card may ask for it). An entry
is not memory about a person: it is the world the character lives in, written by the bot's owner
or a server's managers.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memory.errors import InvalidInput
from memory.model import LoreEntry, LoreScope
from memory.text import clean, fold, lexical_similarity, strip_accents

# Limits of what a person may store (also CHECK constraints in the database).
MAX_KEYWORDS = 25
MAX_KEYWORD_CHARS = 100
MAX_CONTENT_CHARS = 8000


@dataclass(frozen=True, slots=True)
class Activation:
    """An entry that fired: which keyword, how far back (0 = the current message), and how
    close its content is to the current message (shared content words, 0 to 1)."""

    entry: LoreEntry
    keyword: str
    distance: int
    closeness: float = 0.0


def normalise(text: str, *, case_sensitive: bool = False) -> str:
    """The form keywords and conversation are compared in."""
    if case_sensitive:
        return unicodedata.normalize("NFKC", text)
    # Folded again after the accents go: a spacing mark ("¸") leaves a space behind.
    return fold(strip_accents(fold(text)))


# Where a card's lorebook says {{char}}: the name of the character that plays, filled in when
# the entry is matched and shown (an entry outlives the name it was imported under).
CHAR_PLACEHOLDER = "{{char}}"


def fill_char(text: str, character: str) -> str:
    """Put the playing character's name where a lore entry says {{char}}."""
    return text.replace(CHAR_PLACEHOLDER, character) if CHAR_PLACEHOLDER in text else text


def character_key(name: str) -> str:
    """The key a character-scoped entry is stored under (its name, compared loosely)."""
    return normalise(name)


def parse_keywords(text: str) -> tuple[str, ...]:
    """Split "a, b, c" into keywords; raise InvalidInput naming what is wrong."""
    parts = (k.strip() for k in clean(text).split(","))
    keywords = tuple(dict.fromkeys(k for k in parts if k))
    if not keywords:
        raise InvalidInput("give at least one keyword (several: separate them with commas)")
    if len(keywords) > MAX_KEYWORDS:
        raise InvalidInput(f"at most {MAX_KEYWORDS} keywords per entry")
    too_long = next((k for k in keywords if len(k) > MAX_KEYWORD_CHARS), None)
    if too_long is not None:
        raise InvalidInput(f"a keyword is longer than {MAX_KEYWORD_CHARS} characters")
    return keywords


def _hit(
    keywords: Sequence[str], window: Sequence[str], window_cs: Sequence[str], case: bool
) -> tuple[str, int] | None:
    texts = window_cs if case else window
    for distance, text in enumerate(texts):
        for keyword in keywords:
            needle = normalise(keyword, case_sensitive=case)
            if needle and needle in text:
                return keyword, distance
    return None


def activate(
    entries: Sequence[LoreEntry],
    conversation: Sequence[str],
    *,
    depth: int,
    character: str,
) -> list[Activation]:
    """Return the entries the conversation activates, best first.

    `conversation` is newest first, the current message at index 0; an entry looks `depth`
    messages deep unless it sets its own scan depth. Ranking: constant entries, then priority,
    then the most recent hit, then the content closest to the current message, then the oldest.
    """
    folded = [normalise(t) for t in conversation]
    exact = [normalise(t, case_sensitive=True) for t in conversation]
    me = character_key(character)
    fired: list[Activation] = []
    for entry in entries:
        if entry.scope is LoreScope.CHARACTER and entry.character != me:
            continue
        if entry.constant:
            fired.append(Activation(entry, "", 0))
            continue
        reach = max(1, entry.scan_depth if entry.scan_depth is not None else depth)
        case = entry.case_sensitive
        keywords = tuple(fill_char(k, character) for k in entry.keywords)
        hit = _hit(keywords, folded[:reach], exact[:reach], case)
        if hit is None:
            continue
        secondary = entry.secondary_keywords if entry.selective else ()
        secondary = tuple(fill_char(k, character) for k in secondary)
        if secondary and _hit(secondary, folded[:reach], exact[:reach], case) is None:
            continue
        fired.append(Activation(entry, hit[0], hit[1]))
    current = conversation[0] if conversation else ""
    fired = [replace(a, closeness=lexical_similarity(current, a.entry.content)) for a in fired]
    fired.sort(
        key=lambda a: (
            not a.entry.constant,
            -a.entry.priority,
            a.distance,
            -a.closeness,
            a.entry.id,
        )
    )
    return fired
