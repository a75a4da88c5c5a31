"""A memory a person typed in their own voice, worded as a reflection words memories: in the
third person without a subject. "I'm allergic to peanuts" becomes "Is allergic to peanuts",
« Je me suis cassé le poignet » « S'est cassé le poignet », "my mom is sick" "Their mom is sick",
so that /memories reads in one voice and dedup and replacement compare like with like.

A rule over words, in English and French, not a model: it is quick, it never invents, and what
it cannot say without guessing is kept as typed. French names a person's gender in the pronoun
that would replace « je » or « moi » inside a sentence (« il », « elle »), which the rule cannot
know, so such a text stays as it was written; English uses "they". Measured on what people type
(`python -m bench.voice`, tests/corpora/voice.py): the rule was tuned on one half and the
other half is reported.
"""

from __future__ import annotations

import re

from memory import lexicon
from memory.model import Kind

# Words that may stand between "I" and its verb, kept as they are: "I really love jazz".
_EN_ADVERBS = frozenset(
    """
    really also just still never always usually often sometimes only actually already
    currently recently finally rarely literally definitely basically mostly totally kinda
    seriously honestly absolutely even sort kind of generally normally
    """.split()
)

# Past forms that do not end in -ed: the verb is the same for every person.
_EN_PAST = frozenset(
    """
    was were had did went got made took saw met left bought brought came began broke found
    lost won ate drove flew grew knew ran sold spent told thought wrote felt fell forgot gave
    heard kept paid said sent sat slept stood taught understood woke wore swam sang rode
    built caught chose dug drank fought hid hung led lent meant rang rose shook shot shut
    spoke stole stuck struck swore threw tore wept wound quit became held let put cut hit
    set hurt bet cost split spread burnt learnt dreamt spelt
    """.split()
)

# Verbs whose form after "I" is that of every person: modals and the past.
_EN_SAME = frozenset(
    """
    can could will would shall should may might must can't cannot couldn't won't wouldn't
    shouldn't mustn't didn't
    """.split()
)

# Verbs ending in -ed that are not a past: "I need", "I feed the cats".
_EN_PRESENT_ED = frozenset("need feed bleed breed speed succeed proceed exceed shed".split())

_EN_THIRD = {
    "am": "is",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "dont": "doesn't",
    "go": "goes",
    "was": "was",
}

# The contracted subject alone, as typed with or without its apostrophe.
_EN_CONTRACTED = {
    "i'm": "is",
    "im": "is",
    "i've": "has",
    "ive": "has",
    "i'll": "will",
}

# First-person words inside an English sentence and what they become.
_EN_WORDS = {
    "i": "they",
    "me": "them",
    "my": "their",
    "mine": "theirs",
    "myself": "themself",
    "i'm": "they're",
    "i've": "they've",
    "i'll": "they'll",
    "i'd": "they'd",
}
_EN_AFTER_I = {"am": "are", "was": "were"}

# « je » as people type it, alone or with « suis » glued to it.
_FR_SUBJECTS = frozenset({"je", "j"})
_FR_I_AM = frozenset({"jsuis", "j'suis", "chuis", "chui", "jsui"})

# Words between the subject and its verb: negation, then the object and adverbial pronouns.
_FR_CLITICS = frozenset({"te", "t", "le", "la", "l", "les", "lui", "leur", "y", "en", "vous"})

# The first person singular of the verbs whose third person is not the rule's.
_FR_THIRD = {
    "suis": "est",
    "ai": "a",
    "vais": "va",
    "peux": "peut",
    "veux": "veut",
    "vaux": "vaut",
    "connais": "connaît",
    "reconnais": "reconnaît",
    "parais": "paraît",
    "plais": "plaît",
    "nais": "naît",
}

_FR_WORDS = {"mon": "son", "ma": "sa", "mes": "ses"}
# First-person words the rule leaves alone in French: what replaces them names a gender.
_FR_KEEP = frozenset({"je", "j", "me", "m", "moi", "jsuis", "chuis", "nous"})

_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'"})
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|[^\W\d_]+'", re.UNICODE)
_VOWEL = re.compile(r"^[aeiouyhéèêëàâîïôûœ]", re.IGNORECASE)


def as_memory(text: str, kind: Kind, *, limit: int) -> str:
    """What a person typed for /remember or an edit, as it is stored: in the third person,
    except a rule (an instruction to the character, in the person's words) and a rewrite that
    would pass the `limit` ("my" → "their" is longer)."""
    if kind is Kind.RULE:
        return text
    worded = third_person(text)
    return worded if len(worded) <= limit else text


def third_person(text: str) -> str:
    """`text` worded as a reflection's memory when it is in the first person; as typed
    otherwise, or when the rewrite would have to guess."""
    plain = text.translate(_APOSTROPHES)
    words = [w.lower() for w in _WORD.findall(plain)]
    if not words:
        return text
    language = _language(words)
    rewritten: str | None
    if language == "en":
        rewritten = _english(plain)
    elif language == "fr":
        rewritten = _french(plain)
    else:
        return text
    return text if rewritten is None else rewritten


def _language(words: list[str]) -> str | None:
    """ "en" or "fr" when the text speaks in the first person in one of them, else None."""
    english = any(w in _EN_WORDS or w in _EN_CONTRACTED for w in words if w != "me")
    french = any(
        w in _FR_SUBJECTS or w in _FR_I_AM or w in _FR_WORDS or w == "moi" or w.startswith("j'")
        for w in words
    )
    if english != french:
        return "en" if english else "fr"
    if "me" in words and not english:
        return lexicon.detect_language(words)
    return None


def _capital(word: str) -> str:
    return word[:1].upper() + word[1:]


def _like(original: str, replacement: str) -> str:
    """`replacement` with the capital `original` had."""
    return _capital(replacement) if original[:1].isupper() else replacement


def _split(text: str) -> tuple[str, str]:
    """The first word of `text` and the rest, spaces and all."""
    found = re.match(r"\s*(\S+)(.*)", text, re.DOTALL)
    return (found.group(1), found.group(2)) if found else ("", "")


def _bare(word: str) -> str:
    return word.lower().strip(",.;:!?")


# ---- English


def _english(text: str) -> str | None:
    head, rest = _split(text)
    if _bare(head) == "me" and head.endswith(","):  # "Me, I prefer dogs"
        head, rest = _split(rest)
    lowered = _bare(head)
    if lowered in {"i", "i'd", *_EN_CONTRACTED} and not re.search(r"\w", rest):
        return None  # a subject and no verb: nothing to say in the third person
    if lowered in _EN_CONTRACTED:
        verb = _EN_CONTRACTED[lowered]
        if verb == "has":
            got, after = _split(rest)
            if _bare(got) == "got":  # "I've got a sister" → "Has a sister"
                rest = after
        return _capital(verb) + _english_rest(rest)
    if lowered == "i'd":
        following = _bare(_split(rest)[0])
        verb = "would" if following in {"rather", "like", "love", "prefer", "be", "say"} else "had"
        return _capital(verb) + _english_rest(rest)
    if lowered != "i":
        return _capital(_english_rest(" " + text).lstrip())
    kept: list[str] = []
    word, rest = _split(rest)
    while _bare(word) in _EN_ADVERBS and rest.strip():
        kept.append(word)
        word, rest = _split(rest)
    if _bare(word) in {"i", "i'd", *_EN_CONTRACTED, *_EN_WORDS}:
        return None  # "I I'm…", "I me": no verb after "I", nothing to guess from
    verb = _english_verb(word)
    if _bare(word) in {"do", "does"} and _bare(_split(rest)[0]) == "not":
        verb = "does"
    return _capital(" ".join([*kept, verb])) + _english_rest(rest)


def _english_verb(word: str) -> str:
    """The third person singular of the verb `word` as said after "I"."""
    bare = word.lower()
    if bare in _EN_THIRD:
        return _like(word, _EN_THIRD[bare])
    past = bare.endswith("ed") and bare not in _EN_PRESENT_ED
    if bare in _EN_SAME or bare in _EN_PAST or past or not bare.isalpha():
        return word
    if re.search(r"(s|x|z|ch|sh|o)$", bare):
        return word + "es"
    if re.search(r"[^aeiou]y$", bare):
        return word[:-1] + "ies"
    return word + "s"


def _english_rest(text: str) -> str:
    """The rest of a sentence with its first-person words made third ("my" → "their")."""
    after_i = False

    def swap(found: re.Match[str]) -> str:
        nonlocal after_i
        word = found.group(0)
        lower = word.lower()
        if after_i and lower in _EN_AFTER_I:  # "I was" → "they were"
            after_i = False
            return _EN_AFTER_I[lower]
        after_i = lower == "i"
        if lower == "i":
            return "they"
        return _like(word, _EN_WORDS[lower]) if lower in _EN_WORDS else word

    return re.sub(r"[A-Za-z]+(?:'[A-Za-z]+)?", swap, text)


# ---- French


def _french(text: str) -> str | None:
    head, rest = _split(text)
    if _bare(head) == "moi":  # « Moi je préfère les chiens », « Moi, je… »
        head, rest = _split(rest)
    lowered = head.lower()
    if lowered in _FR_I_AM:
        return _french_rest("Est" + rest)
    if lowered in _FR_SUBJECTS:
        word, rest = _split(rest)
        return _french_clause(word, rest)
    if lowered.startswith("j'") and len(lowered) > 2:
        return _french_clause(head[2:], rest)
    return _french_rest(text)


def _french_clause(word: str, rest: str) -> str | None:
    """« ne », the pronouns, then the verb after « je », in the third person."""
    said: list[str] = []
    while True:
        lower = word.lower()
        if lower in {"ne", "n'"} or (lower.startswith("n'") and len(lower) > 2):
            said.append("ne")
            word = word[2:] if len(lower) > 2 else _split(rest)[0]
            rest = rest if len(lower) > 2 else _split(rest)[1]
            continue
        if lower in {"me", "m'"} or (lower.startswith("m'") and len(lower) > 2):
            said.append("se")
            word = word[2:] if len(lower) > 2 else _split(rest)[0]
            rest = rest if len(lower) > 2 else _split(rest)[1]
            continue
        clitic = lower.split("'")[0] if "'" in lower else lower
        if clitic in _FR_CLITICS and rest.strip():
            if "'" in lower and len(lower) > len(clitic) + 1:
                said.append(clitic + "'")
                word = word[len(clitic) + 1 :]
            else:
                said.append(word)
                word, rest = _split(rest)
            continue
        break
    if not word:
        return None
    verb = _french_verb(word)
    phrase = ""
    for part in [*said, verb]:
        phrase = _elide(phrase, part)
    return _french_rest(_capital(phrase) + rest)


def _elide(phrase: str, word: str) -> str:
    """`phrase` then `word`, « ne » and « se » elided before a vowel: « n'est », « s'est »."""
    if not phrase:
        return word
    last = phrase.rsplit(" ", 1)[-1]
    if last in {"ne", "se", "Ne", "Se"} and _VOWEL.match(word):
        return phrase[:-1] + "'" + word
    if phrase.endswith("'"):
        return phrase + word
    return phrase + " " + word


def _french_verb(word: str) -> str:
    """The third person singular of the verb `word` as said after « je »."""
    lower = word.lower()
    if lower in _FR_THIRD:
        return _FR_THIRD[lower]
    if lower.endswith("ais"):  # imparfait, conditionnel: « étais » → « était »
        return word[:-1] + "t"
    if lower.endswith("rai"):  # futur: « serai » → « sera »
        return word[:-1]
    if lower.endswith("ds"):  # « prends » → « prend »
        return word[:-1]
    if lower.endswith(("s", "x")):  # « finis » → « finit », « pars » → « part »
        return word[:-1] + "t"
    return word


def _french_rest(text: str) -> str | None:
    """The sentence with « mon », « ma », « mes » made « son », « sa », « ses »; None when a
    first-person word is left whose replacement would name a gender."""

    def swap(found: re.Match[str]) -> str:
        word = found.group(0)
        lower = word.lower()
        return _like(word, _FR_WORDS[lower]) if lower in _FR_WORDS else word

    rewritten = re.sub(r"[^\W\d_]+", swap, text)
    for word in _WORD.findall(rewritten.translate(_APOSTROPHES)):
        lower = word.lower()
        if lower in _FR_KEEP or (lower.split("'")[0] in {"j", "m"} and "'" in lower):
            return None
    return rewritten
