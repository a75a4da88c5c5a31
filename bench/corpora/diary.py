"""The recall bench's second corpus family: a person's months as a diary of facts would hold them.

Same 18 references, same 6 messages and same labels as bench/corpora/recall.py; only the distractors
differ. The first family (harsh) draws them from 15 templates shaped like the references, so at
10,000 memories about 6,000 are "Her friend X from Y did Z when" and each reference has dozens to
hundreds of siblings of its own shape. Here most distractors are everyday entries on many topics
(meals, films, bills, repairs, appointments, colleagues, errands), and the reference-shaped
templates of the first family weigh about 4% of the draw: a few hundred near-miss siblings at 10,000
memories, a handful at 234. A second measurement, not a replacement: nothing in the product is tuned
to it.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from bench.corpora.recall import EN, FR, Corpus

# Share of the draw that goes to the reference-shaped templates of the harsh family.
NEAR_MISS_SHARE = 0.04

_DAYS = {
    "en": "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday",
    "fr": "lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche",
}
_MONTHS = {
    "en": "January|February|March|April|May|June|July|August|September|October|November|December",
    "fr": "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre",
}

Template = tuple[str, dict[str, list[str]]]


def _templates(language: str) -> list[Template]:
    """Read bench/corpora/diary_<language>.txt: blocks of a template line and its slot lines."""
    text = (Path(__file__).parent / f"diary_{language}.txt").read_text(encoding="utf-8")
    shared = {"@days": _DAYS[language], "@months": _MONTHS[language]}
    out: list[Template] = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith("#")]
        if not lines:
            continue
        slots = {}
        for line in lines[1:]:
            name, values = line.split(": ", 1)
            slots[name] = shared.get(values, values).split("|")
        out.append((lines[0], slots))
    return out


def _with(corpus: Corpus, diary: list[Template]) -> Corpus:
    return Corpus(
        language=corpus.language, references=corpus.references, queries=corpus.queries,
        templates=diary, scene=corpus.scene, query_prefix=corpus.query_prefix,
        document_prefix=corpus.document_prefix,
    )  # fmt: skip


DIARY = {"en": _with(EN, _templates("en")), "fr": _with(FR, _templates("fr"))}
_HARSH = {"en": EN, "fr": FR}


def _expand(templates: list[Template]) -> list[list[str]]:
    out = []
    for template, slots in templates:
        names = list(slots)
        rows = itertools.product(*(slots[n] for n in names))
        out.append([template.format(**dict(zip(names, r, strict=True))) for r in rows])
    return out


def _draw(pools: list[list[str]], count: int, rng: random.Random, seen: set[str]) -> list[str]:
    """Draw `count` new texts, each from a template picked at random among those with entries
    left: no template dominates while others still have entries."""
    pools = [pool[:] for pool in pools]
    for pool in pools:
        rng.shuffle(pool)
    out: list[str] = []
    while len(out) < count:
        open_pools = [pool for pool in pools if pool]
        if not open_pools:
            raise ValueError(f"only {len(out)} distinct distractors of this family")
        text = rng.choice(open_pools).pop()
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def diary_distractors(corpus: Corpus, count: int, seed: int) -> list[str]:
    """Return `count` distinct distractors, shuffled by `seed`: about NEAR_MISS_SHARE from the
    harsh family's reference-shaped templates (each shape a few dozen siblings at 10,000), the
    rest from the diary's templates."""
    rng = random.Random(seed)
    seen = set(corpus.references)
    near = _draw(_expand(_HARSH[corpus.language].templates), round(count * NEAR_MISS_SHARE),
                 rng, seen)  # fmt: skip
    out = near + _draw(_expand(corpus.templates), count - len(near), rng, seen)
    rng.shuffle(out)
    return out
