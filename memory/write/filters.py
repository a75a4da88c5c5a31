"""Filters decided in code: what the reflection proposed that must not become a memory.

Measured on the original deployment (the self-hosted bot this design comes from): asking the
model to abstain makes it worse (the off-topic rate doubled),
so each defect is caught here by a small lexical detector, in French and English, and every
rejection carries its reason. Corpora: tests/corpora/filters_fr.py and filters_en.py.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memory import lexicon
from memory.model import Candidate, Kind
from memory.text import clauses, clean, fold, is_negated, words

# Set before measuring; the measurement on the original deployment found no candidate in the
# 0.60-0.85 band (the model encodes doubt in words, not in the number), so this floor mostly
# guards against malformed confidences. Kept because it is cheap and documented.
CONFIDENCE_FLOOR = 0.85

_ALNUM = re.compile(r"[^\W_]+")


class Rejection(enum.StrEnum):
    EMPTY = "empty"
    NOT_ALLOWED_KIND = "kind_not_allowed"
    LOW_CONFIDENCE = "low_confidence"
    CHARACTER_ATTITUDE = "character_attitude"
    NOT_ABOUT_USER = "not_about_user"
    NEGATION_INVERTED = "negation_inverted"


@dataclass(frozen=True, slots=True)
class Screening:
    """The candidates kept, and the ones rejected with the reason."""

    kept: list[Candidate] = field(default_factory=list)
    rejected: list[tuple[Candidate, str]] = field(default_factory=list)


def screen(
    candidates: Iterable[Candidate],
    *,
    user_message: str,
    character_name: str,
    user_name: str,
) -> Screening:
    """Split reflection candidates into kept and rejected (with reasons), deciding in code."""
    result = Screening()
    for candidate in candidates:
        reason = _rejection(candidate, user_message, character_name, user_name)
        if reason is None:
            result.kept.append(candidate)
        else:
            result.rejected.append((candidate, reason.value))
    return result


def _rejection(
    candidate: Candidate, user_message: str, character_name: str, user_name: str
) -> Rejection | None:
    text = clean(candidate.text)
    if not words(text):
        return Rejection.EMPTY
    if candidate.kind is Kind.RULE:
        return Rejection.NOT_ALLOWED_KIND
    if not candidate.confidence >= CONFIDENCE_FLOOR:  # also rejects NaN
        return Rejection.LOW_CONFIDENCE
    if character_attitude(text, character_name=character_name, user_message=user_message):
        return Rejection.CHARACTER_ATTITUDE
    if not_about_user(text, character_name=character_name, user_name=user_name):
        return Rejection.NOT_ABOUT_USER
    if inverts_negation(text, user_message=user_message):
        return Rejection.NEGATION_INVERTED
    return None


def _contains(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """Return the index where `phrase` starts in `tokens`, or -1."""
    if not phrase:
        return -1
    n = len(phrase)
    for i in range(len(tokens) - n + 1):
        if list(tokens[i : i + n]) == list(phrase):
            return i
    return -1


def _character_positions(tokens: Sequence[str], character_name: str) -> list[int]:
    """Return the indexes just after each mention of the character (by name or by role)."""
    name = words(character_name)
    ends = [i + 1 for i, t in enumerate(tokens) if t in lexicon.CHARACTER_WORDS]
    start = _contains(tokens, name)
    if start >= 0:
        ends.append(start + len(name))
    return sorted(ends)


def character_attitude(text: str, *, character_name: str, user_message: str) -> bool:
    """Tell whether `text` records the character's own feeling or judgment as a fact.

    Fires on the character (by name or role) followed closely by a feeling verb ("Écho trouve
    Marie attachante", "The character enjoys Sam's visits"), and on an evaluative word that the
    user did not say ("Marie est adorable" after "lol thanks").
    Known false positives: a user who named their pet after the character ("Écho adore les
    croquettes" about the pet); an evaluative word used literally ("is a sweet tooth" after a
    message that never said "sweet").
    """
    tokens = words(text)
    for end in _character_positions(tokens, character_name):
        window = tokens[end : end + 3]
        if any(t in lexicon.ATTITUDE_VERBS for t in window):
            return True
    said = set(words(user_message))
    for i, token in enumerate(tokens):
        if token in lexicon.JUDGMENT_WORDS and token not in said:
            before = tokens[max(0, i - 3) : i]
            if any(t in lexicon.COPULAS or t in lexicon.USER_WORDS for t in before):
                return True
    return False


def not_about_user(text: str, *, character_name: str, user_name: str) -> bool:
    """Tell whether `text` is about the character or the setting instead of the person talking.

    The subject is the first word after leading determiners. Fires when it is the character
    (name or role) or a setting noun, and the user is not mentioned ("Écho vit dans une tour",
    "La taverne est enfumée"). A memory without a subject ("Aime le jazz") is about the user.
    Known false positives: a user whose own name or pet's name equals the character's; a setting
    noun used as the user's own thing ("La pièce de Marie…" is kept, "La pièce de théâtre qu'elle
    écrit…" is rejected).
    """
    tokens = words(text)
    if _mentions_user(tokens, user_name):
        return False
    i = 0
    while i < len(tokens) - 1 and tokens[i] in lexicon.DETERMINERS:
        i += 1
    subject = tokens[i:]
    name = words(character_name)
    if name and subject[: len(name)] == name:
        return True
    return bool(subject) and (
        subject[0] in lexicon.CHARACTER_WORDS or subject[0] in lexicon.SETTING_WORDS
    )


def _mentions_user(tokens: Sequence[str], user_name: str) -> bool:
    if _contains(tokens, words(user_name)) >= 0:
        return True
    return any(t in lexicon.USER_WORDS or t in lexicon.FIRST_PERSON for t in tokens)


def _stem(word: str) -> str:
    # Plural and third-person "s": "chats"/"chat", "likes"/"like", "jeux"/"jeu".
    return word[:-1] if len(word) > 3 and word[-1] in "sx" else word


def _stems(tokens: Iterable[str]) -> set[str]:
    return {
        _stem(t)
        for t in tokens
        if t not in lexicon.STOPWORDS and t not in lexicon.NEGATIONS and not t.isdigit()
    }


def inverts_negation(text: str, *, user_message: str) -> bool:
    """Tell whether `text` drops a negation the user said ("je n'aime pas X" -> "aime X").

    The words found only in the user's negated clauses (not in their positive ones) are what the
    negation bears on; a candidate without negation that reuses one of them has lost it. A
    candidate that states the opposite with its own verb ("déteste X", "hates X") keeps it.
    Known false positives: a positive candidate about another thing that shares a word with the
    negated clause ("Je ne bois pas de café" then "Travaille dans un café"); a comparison that
    keeps the negation in its own way ("I don't drink coffee" then "Prefers tea to coffee").
    Known misses: negations the lexicon lacks ("I dont" without apostrophe, spoken "j'aime plus").
    """
    tokens = words(text)
    if is_negated(tokens) or any(t in lexicon.OPPOSITE_POLARITY for t in tokens):
        return False
    negative: set[str] = set()
    positive: set[str] = set()
    for clause in clauses(user_message):
        (negative if is_negated(clause) else positive).update(_stems(clause))
    specific = negative - positive
    return bool(specific & _stems(tokens))


def content_words(text: str) -> frozenset[str]:
    """The words `carries` compares: folded, letters and digits run together (a
    code is one word), stopwords out, a plural or third-person "s" aside."""
    return frozenset(_stem(w) for w in _whole_words(text))


def carries(text: str, message: str, taint: frozenset[str]) -> bool:
    """Tell whether `text`, written by a reflection shown erased words, holds a word of `taint`
    (the `content_words` of what the erasure takes out) that is not in its person's own
    `message`: then it goes with the erasure, and otherwise it stays. Known misses: a
    paraphrase that keeps none of the erased words stays ("his code is XK7" told again as "the
    number he gave"; a code spelled out or split differently); and a word of the taint the text
    has from elsewhere goes with it ("code" said by another, later)."""
    return not (content_words(text) - content_words(message)).isdisjoint(taint)


def _whole_words(text: str) -> list[str]:
    # Letters and digits together ("xk7canary4921" one word, not "xk" and "7canary4921"): a
    # code must not pass for its person's own on pieces of other words of the message.
    return [w for w in _ALNUM.findall(fold(text)) if w not in lexicon.STOPWORDS]
