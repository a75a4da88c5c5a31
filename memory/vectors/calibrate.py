"""Read, for the configured embedding model, whether it ranks paraphrases above unrelated
sentences in French and in English, and the absolute cosine threshold that would serve them.

Fitness is read from ranks, never from cosines: models spread their cosines on scales of their
own. all-MiniLM-L6-v2 puts unrelated English pairs at 0.13 and paraphrases at 0.71;
multilingual-e5-small puts them at 0.83 and 0.94, and a fixed margin in cosine (0.05) declared
e5 unfit for French, which switched off the recall by meaning that served 95% of the relevant
French memories at 1,000 (issue 15). The share of (paraphrase, unrelated pair) comparisons that
the paraphrase wins does not move when a model compresses or stretches its scale.

The absolute threshold is read, not chosen: the relative cutoff (mean + 1.5 sd) of the unrelated
probe pairs, reported only when the weakest paraphrase stands well above it, since a memory
relevant to a message is rarely as close to it as a paraphrase. Otherwise none is reported
(relative eligibility, the default, needs none).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.backends.chat import Embedder
from memory.recall.semantic import RELATIVE_SD
from memory.store import Store
from memory.store.tables import model_calibration
from memory.vectors.prefixes import prefixes_of

Pair = tuple[str, str]

# Paraphrase pairs per language. Every pair of sentences with different meanings is an unrelated
# pair. The last six share no content word: with only the first six, all-MiniLM-L6-v2 ranked
# French paraphrases right by their shared words (98% of comparisons) while it served 22% of the
# relevant French memories at 234 (bench/results/recall.md).
PARAPHRASES: dict[str, list[Pair]] = {
    "fr": [
        ("J'ai un chat roux qui s'appelle Félix", "Mon chat Félix a le poil roux"),
        ("Je travaille de nuit à l'hôpital", "Je suis infirmière de nuit dans un hôpital"),
        ("Ma sœur se marie en juin", "Le mariage de ma sœur est prévu en juin"),
        ("J'ai peur de prendre l'avion", "Les voyages en avion m'angoissent"),
        ("Je joue du violoncelle le soir", "Le soir, je fais du violoncelle"),
        ("Je n'aime pas le café", "Le café, ce n'est pas pour moi"),
        ("Je vis seule avec mes deux chiens", "À la maison, il n'y a que moi et mes toutous"),
        ("Je ne supporte pas le froid", "L'hiver me rend malheureuse"),
        ("Je ne mange plus de viande depuis l'an dernier", "Je suis végétarienne depuis un an"),
        ("Mon père est hospitalisé", "Papa a été admis en clinique"),
        ("J'ai perdu mon travail le mois dernier", "On m'a licenciée il y a quelques semaines"),
        (
            "Je cultive des légumes sur mon balcon",
            "Ma terrasse est pleine de plants de tomates et de courgettes",
        ),
    ],
    "en": [
        ("I have a ginger cat called Felix", "My cat Felix has ginger fur"),
        ("I work night shifts at the hospital", "I am a night nurse in a hospital"),
        ("My sister is getting married in June", "My sister's wedding is planned for June"),
        ("I am afraid of flying", "Air travel makes me anxious"),
        ("I play the cello in the evening", "In the evenings I practise the cello"),
        ("I don't like coffee", "Coffee is not for me"),
        ("I live alone with my two dogs", "At home it's just me and my pups"),
        ("I can't stand the cold", "Winter makes me miserable"),
        ("I stopped eating meat last year", "I have been vegetarian for twelve months"),
        ("My father is in hospital", "Dad was admitted to a clinic"),
        ("I lost my job last month", "I was laid off a few weeks ago"),
        ("I grow vegetables on my balcony", "My terrace is full of tomato and courgette plants"),
    ],
}

# The share of comparisons a paraphrase must win against an unrelated pair for the model to be
# fit for the language. Measured on these probes (tests/fixtures/calibration): all-MiniLM-L6-v2
# 1.00 in English, 0.84 in French; multilingual-e5-small 1.00 in English, 0.99 in French.
MIN_SEPARATION = 0.95

# An absolute threshold is reported when the weakest paraphrase stands at least this many
# standard deviations (of the unrelated pairs) above it. all-MiniLM-L6-v2, English: 3.1, threshold
# 0.27, which served 75% / 73% / 58% of the relevant memories at 234 / 1k / 10k (relative: 87% /
# 78% / 57%). multilingual-e5-small: 1.2 (English, 0.86) and 0.0 (French, 0.90), which served
# 50% / 50% / 50% and 35% / 33% / 33%, the French no more than keywords alone (relative: 77% /
# 60% / 50% and 67% / 50% / 33%; bench/results/recall.md).
MIN_ROOM = 2.0

# Stored in the NOT NULL threshold column when no threshold was read (nothing reads it back).
NO_THRESHOLD = -1.0


@dataclass(frozen=True, slots=True)
class LanguageReport:
    """How one model separates one language's probes."""

    language: str
    separation: float  # share of (paraphrase, unrelated) comparisons the paraphrase wins
    paraphrase_mean: float
    unrelated_mean: float
    # The absolute cosine threshold this model suggests (it serves every probe paraphrase with
    # room to spare), or None when no absolute threshold would serve relevant memories.
    threshold: float | None
    # The relative cutoff on the unrelated pairs (mean + 1.5 sd): the threshold when one is read.
    cutoff: float

    @property
    def fit(self) -> bool:
        return self.separation >= MIN_SEPARATION

    def line(self, model: str) -> str:
        verdict = "separates" if self.fit else "does NOT separate"
        threshold = (
            'no absolute threshold would serve relevant memories (keep eligibility = "relative")'
            if self.threshold is None
            else f"threshold read {self.threshold:.2f}"
        )
        return (
            f"{self.language}: {model} {verdict} paraphrases from unrelated sentences: "
            f"{self.separation:.0%} of comparisons won ({MIN_SEPARATION:.0%} needed), cosines "
            f"{self.paraphrase_mean:.2f} vs {self.unrelated_mean:.2f}; {threshold}"
        )


def _unit(vectors: list[list[float]]) -> npt.NDArray[np.float64]:
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: npt.NDArray[np.float64] = matrix / norms
    return unit


def separation(close: npt.NDArray[np.float64], far: npt.NDArray[np.float64]) -> float:
    """Return the share of (close, far) comparisons that `close` wins, a tie counting half."""
    if not close.size or not far.size:
        return 0.0
    wins = (close[:, None] > far[None, :]).sum() + 0.5 * (close[:, None] == far[None, :]).sum()
    return float(wins / (close.size * far.size))


def cutoff(far: npt.NDArray[np.float64]) -> float:
    """Return the relative cutoff of the unrelated pairs, rounded down to 0.01."""
    return math.floor((float(far.mean()) + RELATIVE_SD * float(far.std())) * 100) / 100


def read_threshold(close: npt.NDArray[np.float64], far: npt.NDArray[np.float64]) -> float | None:
    """Return the cutoff of the unrelated pairs when the weakest paraphrase stands MIN_ROOM
    standard deviations above it; None otherwise."""
    if float(close.min()) - cutoff(far) < MIN_ROOM * float(far.std()):
        return None
    return cutoff(far)


def report(
    language: str,
    pairs: list[Pair],
    queries: dict[str, npt.NDArray[np.float64]],
    documents: dict[str, npt.NDArray[np.float64]],
) -> LanguageReport:
    """Compare every probe as a query with every other as a document."""
    meaning = {text: i for i, pair in enumerate(pairs) for text in pair}
    texts = list(meaning)
    sims = np.stack([queries[t] for t in texts]) @ np.stack([documents[t] for t in texts]).T
    same = np.array([[meaning[a] == meaning[b] for b in texts] for a in texts])
    other = ~np.eye(len(texts), dtype=bool)
    close, far = sims[same & other], sims[~same]
    fit = separation(close, far) >= MIN_SEPARATION
    return LanguageReport(
        language,
        separation(close, far),
        statistics.fmean(close.tolist()),
        statistics.fmean(far.tolist()),
        read_threshold(close, far) if fit else None,
        cutoff(far),
    )


async def calibrate(embedder: Embedder, *, deadline: float = 60.0) -> list[LanguageReport]:
    """Embed the probes with the configured model and prefixes; report each language."""
    prefixes = prefixes_of(embedder)
    texts = sorted({t for pairs in PARAPHRASES.values() for pair in pairs for t in pair})
    as_queries = _unit(await embedder.embed([prefixes.query + t for t in texts], deadline=deadline))
    as_documents = as_queries
    if prefixes.document != prefixes.query:
        as_documents = _unit(
            await embedder.embed([prefixes.document + t for t in texts], deadline=deadline)
        )
    queries = dict(zip(texts, as_queries, strict=True))
    documents = dict(zip(texts, as_documents, strict=True))
    return [report(lang, pairs, queries, documents) for lang, pairs in PARAPHRASES.items()]


async def save_calibration(
    store: Store, model: str, reports: list[LanguageReport], *, now: float
) -> None:
    """Remember what was read for this model, so turns can use it."""
    readings = [
        (r.language, r.fit, r.separation, NO_THRESHOLD if r.threshold is None else r.threshold)
        for r in reports
    ]
    await model_calibration.save(store, model, readings, now=now)


unfit_languages = model_calibration.unfit_languages
