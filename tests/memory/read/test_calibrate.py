from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.read.calibrate import MIN_MARGIN, PROBES, calibrate


class MeaningEmbedder:
    """Gives each meaning (a paraphrase pair) its own direction; `blur` mixes in a shared one."""

    model = "meaning"

    def __init__(self, blur: float) -> None:
        self.blur = blur
        self.meaning: dict[str, int] = {}
        for lang in PROBES.values():
            for i, (a, b) in enumerate(lang["paraphrases"]):
                self.meaning[a] = self.meaning[b] = i

    async def embed(self, texts: Sequence[str], *, deadline: float) -> list[list[float]]:
        out = []
        for text in texts:
            vector = np.full(16, self.blur)
            vector[self.meaning[text]] += 1.0
            vector[8 + len(text) % 8] += 0.2  # wording: paraphrases are not identical
            out.append(vector.tolist())
        return out


async def test_a_model_that_separates_meanings_is_fit_and_gets_a_threshold() -> None:
    reports = await calibrate(MeaningEmbedder(blur=0.0))
    assert [r.language for r in reports] == ["fr", "en"]
    for report in reports:
        assert report.fit and report.margin >= MIN_MARGIN
        assert report.unrelated_mean < report.threshold < report.paraphrase_mean


async def test_a_model_that_blurs_everything_is_reported_unfit() -> None:
    reports = await calibrate(MeaningEmbedder(blur=3.0))
    assert not any(r.fit for r in reports)
    assert "does NOT separate" in reports[0].line("meaning")
