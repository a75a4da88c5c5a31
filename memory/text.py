"""Text hygiene, normalisation and tokenising, shared by the write and read paths.

`clean` is applied to every text before it is stored or compared; it starts with `well_formed`,
which is all that text coming from outside needs before it can be encoded at all. `fold` is the
comparison form. `words` and `content_words` tokenise the folded form.
"""

from __future__ import annotations

import math
import re
import unicodedata

from memory import lexicon

# Zero-width characters, bidi controls and the invisible "tag" block (U+E0000–U+E007F), which can
# hide instructions or make two identical-looking memories compare different.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACE = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "‘": "'", "`": "'", "´": "'", "‛": "'"})
_DASHES = str.maketrans({"‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-"})

# "aujourd'hui" is one word; every other apostrophe separates an elided article or "n'".
# Hyphenated words stay whole ("après-demain", "week-end").
# Times stay one token ("14h30", "7:15", "7pm"), as do decimals ("3,5").
_WORD = re.compile(
    r"aujourd'hui|\d+(?:[.,:h]\d+)*(?:am|pm|h)?(?!\w)|[^\W\d_]+(?:-[^\W\d_]+)*|\d+\w*"
)


def well_formed(text: str) -> str:
    """Return `text` encodable as UTF-8: surrogate pairs joined, lone surrogates replaced by
    U+FFFD. Text that already encodes is returned unchanged."""
    # JSON may carry "\ud800" (Discord, a card, a backend's answer) and surrogateescape makes
    # them from undecodable bytes; SQLite, json with ensure_ascii=False and httpx all refuse them.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean(text: str) -> str:
    """Return `text` as it may be stored: NFKC, no invisible characters, single spaces, trimmed."""
    text = unicodedata.normalize("NFKC", well_formed(text))
    text = _INVISIBLE.sub("", text)
    text = _CONTROL.sub(" ", text)
    return _SPACE.sub(" ", text).strip()


def clean_message(text: str) -> str:
    """Return a chat message as it may be stored: like `clean`, but keeping its line breaks."""
    lines = (clean(line) for line in text.replace("\r\n", "\n").split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def fold(text: str) -> str:
    """Return the comparison form: cleaned, casefolded, straight apostrophes and hyphens."""
    folded = clean(text).casefold().translate(_APOSTROPHES).translate(_DASHES)
    # NFKC again: casefold can produce sequences that compose ("İ").
    return unicodedata.normalize("NFKC", folded)


def strip_accents(text: str) -> str:
    """Return `text` without combining marks ("café" -> "cafe")."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """Return the words of the folded text, in order (numbers are words)."""
    return _WORD.findall(fold(text))


def content_words(text: str) -> frozenset[str]:
    """Return the words that carry meaning: every word but French and English stopwords."""
    return frozenset(w for w in words(text) if w not in lexicon.STOPWORDS)


def is_negated(tokens: list[str]) -> bool:
    """Tell whether a clause's words carry a negation ("ne … pas", "jamais", "not", "never")."""
    return any(t in lexicon.NEGATIONS for t in tokens)


def clauses(text: str) -> list[list[str]]:
    """Split folded text into clauses of words, at punctuation and at clause-joining words."""
    out: list[list[str]] = []
    for chunk in re.split(r"[.;:!?,()\n]+", fold(text)):
        current: list[str] = []
        for token in _WORD.findall(chunk):
            if token in lexicon.CLAUSE_BREAKS and current:
                out.append(current)
                current = []
                continue
            current.append(token)
        if current:
            out.append(current)
    return out


def lexical_similarity(a: str, b: str) -> float:
    """Cosine of the two texts' content-word sets (accents kept, case folded), from 0 to 1."""
    x, y = content_words(a), content_words(b)
    if not x or not y:
        return 0.0
    return len(x & y) / math.sqrt(len(x) * len(y))
