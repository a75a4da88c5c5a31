"""The token estimator: additive over pieces, calibrated per model from backend reports, and
deaf to the reports that are not a tokenizer's count."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from memory.context.tokens import UNCALIBRATED_FACTOR, Estimator, raw_count

PIECE = st.text(min_size=1, max_size=200).map(lambda t: t.strip("\n")).filter(bool)


@given(PIECE, PIECE)
def test_joining_two_pieces_with_a_newline_costs_one_token(a: str, b: str) -> None:
    assert raw_count(f"{a}\n{b}") == raw_count(a) + raw_count(b) + 1


def test_counts_grow_with_text_and_rarer_scripts() -> None:
    assert raw_count("") == 0
    assert raw_count("the cat sat") == 3
    assert raw_count("internationalisation") > raw_count("nation")
    assert raw_count("été à l'hôpital") > raw_count("ete a l'hopital")
    assert raw_count("漢字漢字") >= 4


def test_calibration_converges_and_plans_above_most_real_counts() -> None:
    rng = random.Random(7)
    estimator = Estimator("llama3")
    assert estimator.planning_factor == UNCALIBRATED_FACTOR
    ratios = [1.4 + rng.uniform(-0.08, 0.08) for _ in range(60)]
    for ratio in ratios:
        estimator, seen = estimator.observe(1000, round(1000 * ratio), context_length=8192)
        assert seen.accepted
    assert abs(estimator.factor - 1.4) < 0.05 and estimator.samples == 60
    covered = sum(r <= estimator.planning_factor for r in ratios[-20:])
    assert covered >= 19


def test_reports_that_are_not_a_tokenizers_count_are_rejected_and_counted() -> None:
    estimator = Estimator("llama3")
    for _ in range(5):
        estimator, _ = estimator.observe(1000, 1300, context_length=8192)
    cases = [
        (None, "no prompt token count"),
        (0, "no prompt token count"),
        (40, "implausible"),  # a cached prompt: only the new tokens were counted
        (8190, "filled the context"),  # truncated to num_ctx
    ]
    for reported, reason in cases:
        before = estimator.factor
        estimator, seen = estimator.observe(1000, reported, context_length=8192)
        assert not seen.accepted and reason in seen.reason and estimator.factor == before
    assert estimator.rejected == 4 and estimator.samples == 5
