"""Read, for the configured embedding model, whether it separates paraphrases from unrelated
sentences in French and in English, and the cosine threshold that separation suggests.

A threshold is read, not chosen, and must be read again for every model: 0.32 came from the
spec author's model; on all-MiniLM-L6-v2 (English-only) every French sentence scored above it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from memory.llm import Embedder
from memory.store.db import Store

Pair = tuple[str, str]

PROBES: dict[str, dict[str, list[Pair]]] = {
    "fr": {
        "paraphrases": [
            ("J'ai un chat roux qui s'appelle Félix", "Mon chat Félix a le poil roux"),
            ("Je travaille de nuit à l'hôpital", "Je suis infirmière de nuit dans un hôpital"),
            ("Ma sœur se marie en juin", "Le mariage de ma sœur est prévu en juin"),
            ("J'ai peur de prendre l'avion", "Les voyages en avion m'angoissent"),
            ("Je joue du violoncelle le soir", "Le soir, je fais du violoncelle"),
            ("Je n'aime pas le café", "Le café, ce n'est pas pour moi"),
        ],
        "unrelated": [
            ("J'ai un chat roux qui s'appelle Félix", "Je travaille de nuit à l'hôpital"),
            ("Ma sœur se marie en juin", "Je joue du violoncelle le soir"),
            ("J'ai peur de prendre l'avion", "Je n'aime pas le café"),
            ("Le mariage de ma sœur est prévu en juin", "Mon chat Félix a le poil roux"),
            ("Les voyages en avion m'angoissent", "Le soir, je fais du violoncelle"),
            ("Je suis infirmière de nuit dans un hôpital", "Le café, ce n'est pas pour moi"),
        ],
    },
    "en": {
        "paraphrases": [
            ("I have a ginger cat called Felix", "My cat Felix has ginger fur"),
            ("I work night shifts at the hospital", "I am a night nurse in a hospital"),
            ("My sister is getting married in June", "My sister's wedding is planned for June"),
            ("I am afraid of flying", "Air travel makes me anxious"),
            ("I play the cello in the evening", "In the evenings I practise the cello"),
            ("I don't like coffee", "Coffee is not for me"),
        ],
        "unrelated": [
            ("I have a ginger cat called Felix", "I work night shifts at the hospital"),
            ("My sister is getting married in June", "I play the cello in the evening"),
            ("I am afraid of flying", "I don't like coffee"),
            ("My sister's wedding is planned for June", "My cat Felix has ginger fur"),
            ("Air travel makes me anxious", "In the evenings I practise the cello"),
            ("I am a night nurse in a hospital", "Coffee is not for me"),
        ],
    },
}

# Below this gap between the weakest paraphrase and the strongest unrelated pair, the model is
# reported unfit for the language: relevant and irrelevant memories would interleave.
MIN_MARGIN = 0.05


@dataclass(frozen=True, slots=True)
class LanguageReport:
    """How one model separates one language's probes."""

    language: str
    paraphrase_mean: float
    unrelated_mean: float
    margin: float  # weakest paraphrase minus strongest unrelated pair
    threshold: float  # midway between the two, the absolute threshold this model suggests

    @property
    def fit(self) -> bool:
        return self.margin >= MIN_MARGIN

    def line(self, model: str) -> str:
        verdict = "separates" if self.fit else "does NOT separate"
        return (
            f"{self.language}: {model} {verdict} paraphrases ({self.paraphrase_mean:.2f}) from "
            f"unrelated sentences ({self.unrelated_mean:.2f}); margin {self.margin:+.2f}, "
            f"threshold read {self.threshold:.2f}"
        )


def _cosines(vectors: dict[str, np.ndarray], pairs: list[Pair]) -> list[float]:
    out = []
    for a, b in pairs:
        va, vb = vectors[a], vectors[b]
        out.append(float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb) or 1.0)))
    return out


async def calibrate(embedder: Embedder, *, deadline: float = 60.0) -> list[LanguageReport]:
    """Embed the probes with the configured model and report each language."""
    texts = sorted(
        {t for lang in PROBES.values() for pairs in lang.values() for p in pairs for t in p}
    )
    embedded = await embedder.embed(texts, deadline=deadline)
    vectors = {t: np.asarray(v, dtype=np.float64) for t, v in zip(texts, embedded, strict=True)}
    reports = []
    for language, probes in PROBES.items():
        close = _cosines(vectors, probes["paraphrases"])
        far = _cosines(vectors, probes["unrelated"])
        reports.append(
            LanguageReport(
                language,
                statistics.fmean(close),
                statistics.fmean(far),
                min(close) - max(far),
                (min(close) + max(far)) / 2,
            )
        )
    return reports


async def save(store: Store, model: str, reports: list[LanguageReport], *, now: float) -> None:
    """Remember what was read for this model, so turns can use it."""
    await store.transact(
        lambda tx: tx.executemany(
            "INSERT INTO model_calibration (model, language, fit, margin, threshold, measured_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model, language) DO UPDATE SET"
            " fit = excluded.fit, margin = excluded.margin, threshold = excluded.threshold,"
            " measured_at = excluded.measured_at",
            [(model, r.language, int(r.fit), r.margin, r.threshold, now) for r in reports],
        )
    )


async def unfit_languages(store: Store, model: str) -> frozenset[str]:
    """Return the languages the model was measured unfit for (none when never calibrated)."""
    rows = await store.fetchall(
        "SELECT language FROM model_calibration WHERE model = ? AND fit = 0", (model,)
    )
    return frozenset(str(r[0]) for r in rows)
