"""Per-language word lists, merged for detectors that must work on French and English alike.

Each list sits next to the case that justifies an entry (a comment with the counter-example).
Words are stored casefolded, with straight apostrophes, as `memory.text.fold` produces them.
"""

from __future__ import annotations

from memory.lexicon import en, fr

LANGUAGES = (fr, en)


def _union(name: str) -> frozenset[str]:
    merged: set[str] = set()
    for lang in LANGUAGES:
        merged |= getattr(lang, name)
    return frozenset(merged)


STOPWORDS = _union("STOPWORDS")
NEGATIONS = _union("NEGATIONS")
NOT_KEYWORDS = _union("NOT_KEYWORDS")
NUMBER_WORDS = _union("NUMBER_WORDS")
WEEKDAYS = _union("WEEKDAYS")
MONTHS = _union("MONTHS")
CASED_MONTHS = _union("CASED_MONTHS")
RELATIVE_TIME = _union("RELATIVE_TIME")
CURRENCIES = _union("CURRENCIES")


def _forms(name: str) -> dict[str, str]:
    """Each form of the members listed under `name` (both languages) to the member it names:
    members are separated by commas, a member's forms by "=", the first naming it. Members of
    the two languages that share a form are one member: "maths=math=mathematics" (en) and
    « mathématiques=maths=math » (fr) named "Teaches maths" and "Teaches mathematics" two
    studies, "soccer" and « foot » two sports."""
    named: dict[str, str] = {}
    for lang in LANGUAGES:
        # A list one language lacks (English and American spellings) is empty there.
        for member in getattr(lang, name, "").split(","):
            spelled = [s for s in (" ".join(form.split()) for form in member.split("=")) if s]
            if not spelled:
                continue
            # The first member listed with one of these forms names them all (and its others).
            names = {named[f] for f in spelled if f in named}
            first = next((named[f] for f in spelled if f in named), spelled[0])
            for form, current in list(named.items()):
                if current in names:
                    named[form] = first
            for form in spelled:
                named[form] = first
    return named


# The dedup's classes of words that are the fact itself (memory.write.dedup), by kind.
MEMBERS = {
    kind: _forms(name)
    for kind, name in (
        ("animal", "ANIMALS"),
        ("instrument", "INSTRUMENTS"),
        ("sport", "SPORTS"),
        ("job", "JOBS"),
        ("study", "STUDIES"),
        ("food", "FOODS"),
        ("language", "LANGUAGES"),
        ("place", "PLACES"),
        ("brand", "BRANDS"),
    )
}
FIRST_NAMES = _forms("FIRST_NAMES")
RELATIONS = _forms("RELATIONS")
DISLIKES = frozenset(_forms("DISLIKES"))
BADLY = frozenset(_forms("BADLY"))
NAMING = _union("NAMING")
# The dedup's spellings (memory.write.dedup_words): each form to the spelling compared.
NUMBER_VALUES = _forms("NUMBER_VALUES")
SPELLINGS = {
    **NUMBER_VALUES,
    **_forms("ABBREVIATIONS"),
    **_forms("SPELLINGS"),
    **_forms("SYNONYMS"),
}
PHRASES = _forms("PHRASES")
TIMES = _union("TIMES")
ARTICLE_ONLY = _union("ARTICLE_ONLY")
ARTICLES = _union("ARTICLES")
BEFORE_RELATIVE = _union("BEFORE_RELATIVE")
USER_WORDS = _union("USER_WORDS")
CHARACTER_WORDS = _union("CHARACTER_WORDS")
SETTING_WORDS = _union("SETTING_WORDS")
ATTITUDE_VERBS = _union("ATTITUDE_VERBS")
JUDGMENT_WORDS = _union("JUDGMENT_WORDS")
OPPOSITE_POLARITY = _union("OPPOSITE_POLARITY")
CLAUSE_BREAKS = _union("CLAUSE_BREAKS")
COPULAS = _union("COPULAS")
FIRST_PERSON = _union("FIRST_PERSON")
DETERMINERS = _union("DETERMINERS")
RELATIVES = _union("RELATIVES")
# The replacement rule's lists (memory/write/supersede.py).
PROFESSIONS = _union("PROFESSIONS")
TOPICS = {
    t: _union(f"TOPIC_{t.upper()}") | (PROFESSIONS if t == "work" else frozenset())
    for t in (
        "home",
        "work",
        "partner",
        "studies",
        "diet",
        "car",
        "phone",
        "religion",
        "hair",
        "body",
        "birth",
        "pregnancy",
    )
}
NOT_A_SUBJECT = _union("NOT_A_SUBJECT")
OCCASIONS = _union("OCCASIONS")
REPLANNED = _union("REPLANNED")
TURNED = _union("TURNED")
CORRECTED = _union("CORRECTED")
OPENING_ASIDES = _union("OPENING_ASIDES")
ADDED = _union("ADDED")
PLANS = _union("PLANS")
RELATIVE_QUALIFIERS = _union("RELATIVE_QUALIFIERS")
POSSESSIVES = _union("POSSESSIVES")
RELATIVE_ALIASES = {k: v for lang in LANGUAGES for k, v in lang.RELATIVE_ALIASES.items()}


def detect_language(tokens: list[str]) -> str | None:
    """Return "fr" or "en" from a message's words (stopwords of each), or None when unclear."""
    fr_hits = sum(1 for t in tokens if t in fr.STOPWORDS and t not in en.STOPWORDS)
    en_hits = sum(1 for t in tokens if t in en.STOPWORDS and t not in fr.STOPWORDS)
    if fr_hits == en_hits:
        return None
    return "fr" if fr_hits > en_hits else "en"
