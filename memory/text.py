"""Text hygiene, normalisation and tokenising, shared by the write and read paths.

`clean` is applied to every text before it is stored or compared; it starts with `well_formed`,
which is all that text coming from outside needs before it can be encoded at all. `fold` is the
comparison form. `words` and `content_words` tokenise the folded form. `break_control_tokens` is
applied to what is sent to a chat model, never to what is stored.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Sequence

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


# The control tokens of common chat templates. Ollama and llama.cpp render the template as text
# and tokenize the result with special tokens allowed, so one of these in a message or a name
# would become a real role marker. `<|...|>` covers ChatML, Llama 3, Phi, Granite, gpt-oss and
# DeepSeek (whose full-width bars NFKC folds to "|"); the others are listed by the family whose
# template (its tokenizer_config.json, or its GGUF's) uses them, case ignored, and a family's
# numbered tokens by the rule `_NUMBERED` below. A family added here is tested with one of its
# tokens in tests/memory/test_text.py (CONTROL_TOKENS).
_ANGLE_FAMILIES = {
    "Llama 2, Mistral": ("s", "/s", "<sys>", "</sys>"),
    "Gemma": (
        "bos",
        "eos",
        "pad",
        "unk",
        "start_of_turn",
        "end_of_turn",
        "start_of_image",
        "end_of_image",
    ),
    "Qwen 3, DeepSeek R1, Hermes (reasoning and tools)": (
        "think",
        "/think",
        "tool_call",
        "/tool_call",
        "tool_response",
        "/tool_response",
    ),
    "ChatGLM, GLM-4 (start and end of a part)": ("sop", "eop"),
    "MiniCPM (its roles)": ("用户", "ai"),
    "Idefics, SmolVLM, LLaVA": ("end_of_utterance", "fake_token_around_image", "image"),
    "StarCoder, Qwen Coder (fill in the middle)": (
        "fim_prefix",
        "fim_middle",
        "fim_suffix",
        "fim_pad",
        "file_sep",
        "repo_name",
    ),
}
_BRACKET_FAMILIES = {
    "Llama 2, Mistral": ("inst", "/inst"),
    "Mistral v3 to v7, Magistral": (
        "system_prompt",
        "/system_prompt",
        "available_tools",
        "/available_tools",
        "tool_calls",
        "tool_results",
        "/tool_results",
        "tool_content",
        "think",
        "/think",
        "args",
        "call_id",
    ),
    "Pixtral (images)": ("img", "img_break", "img_end"),
    "Codestral (fill in the middle)": ("prefix", "suffix", "middle"),
    "ChatGLM, GLM-4 (masks opening a prompt)": ("gmask", "smask", "mask"),
}
_ANGLE_TOKENS = tuple(t for tokens in _ANGLE_FAMILIES.values() for t in tokens)
_BRACKET_TOKENS = tuple(t for tokens in _BRACKET_FAMILIES.values() for t in tokens)
# Numbered tokens, `<reserved_106>`: Baichuan 2's roles are its reserved tokens 102 to 107.
_NUMBERED = ("reserved_",)
# What a token's delimiters become: visible look-alikes that NFKC and `clean` leave alone, so
# the token cannot form again (and `<|...|>` refuses them inside: a broken token nests in none).
_BROKEN = {"<": "‹", ">": "›", "|": "¦", "[": "⟦", "]": "⟧"}
# Every character NFKC folds to "<" or "[" (a test checks planes 0 and 1; the others hold no
# compatibility form of an ASCII character).
_OPENER = re.compile("[<\\[\ufe47\ufe64\uff1c\uff3b]")
# Invisible characters may sit anywhere inside a token: `clean` removes them before storing.
_GAP = f"{_INVISIBLE.pattern}*"


def _spelled(token: str) -> str:
    return _GAP.join(re.escape(c) for c in token)


@functools.cache
def _control_token() -> re.Pattern[str]:
    """The pattern of every token above, built at its first use: compiling it takes a tenth of
    a second, which a process that never renders a prompt (export, doctor) need not pay."""
    return re.compile(
        f"<{_GAP}(?:"
        + rf"\|[^|<>\s{''.join(_BROKEN.values())}]{{0,80}}\|{_GAP}>"
        + "".join(f"|{_spelled(t)}{_GAP}>" for t in _ANGLE_TOKENS)
        + "".join(f"|{_spelled(t)}{_GAP}(?:\\d{_GAP}){{1,6}}>" for t in _NUMBERED)
        + rf")|\[{_GAP}(?:"
        + "|".join(f"{_spelled(t)}{_GAP}\\]" for t in _BRACKET_TOKENS)
        + ")",
        re.IGNORECASE,
    )


def break_control_tokens(text: str) -> str:
    """Return `text` with every chat-template control token broken (its delimiters replaced by
    look-alikes), whatever its case or width; nothing else changes, and it is idempotent."""
    if unicodedata.is_normalized("NFKC", text):  # all stored text (`clean`)
        return _broken(text, text, range(len(text)))
    # Found in the NFKC form, as a tokenizer may fold "＜｜im_start｜＞" to "<|im_start|>", but
    # replaced in the text itself: NFKC would also turn a "＂" into a quote inside JSON. Folded
    # one character at a time, line by line (no token spans a line), only where it changes.
    out = []
    for line in text.splitlines(keepends=True):
        if not _OPENER.search(line):
            out.append(line)
        elif unicodedata.is_normalized("NFKC", line):
            out.append(_broken(line, line, range(len(line))))
        else:
            folded = [c if c.isascii() else unicodedata.normalize("NFKC", c) for c in line]
            where = [i for i, f in enumerate(folded) for _ in f]
            out.append(_broken(line, "".join(folded), where))
    return "".join(out)


def _broken(text: str, view: str, where: Sequence[int]) -> str:
    """`text` with the delimiters of the tokens found in `view` (its folding; `where` maps each
    character of `view` to the one of `text` it came from) replaced."""
    while spans := [m.span() for m in _control_token().finditer(view)]:
        chars, seen = list(text), list(view)
        for start, end in spans:
            for j in range(start, end):
                if view[j] in _BROKEN:
                    chars[where[j]] = seen[j] = _BROKEN[view[j]]
        text, view = "".join(chars), "".join(seen)
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
