"""Token estimates for the context budget: a fast heuristic counter, calibrated per chat model
from the prompt token counts the backend reports (Ollama `prompt_eval_count`, OpenAI `usage`).

The budget is enforced on these estimates, so the estimate must err high: the planning factor is
the highest ratio (reported / heuristic) of the last reports, plus a little headroom, and an
uncalibrated model starts above 1. Measured against Llama 3, cl100k and o200k tokenizers on
French and English prompts (`make bench-tokens`): the mean plus two deviations let 5-9% of
prompts overflow, mostly where the conversation switched language; the recent maximum + 2%
lets about 1% through, for 5-7% of the budget left unused.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

NAME = "echo-heuristic-v1"

# Tokens a chat template adds around each message (role header, separators), and once to prime
# the reply. Llama 3's template costs 4-5 per message; an undercount here is caught by calibration.
PER_MESSAGE = 5
REPLY_PRIMING = 3

# Before any report from the backend, the heuristic is assumed to undercount by this much.
UNCALIBRATED_FACTOR = 1.25
# Reports kept: the planning factor is their highest ratio (a language switch in a conversation
# moves the ratio by ~10% with Llama 3's tokenizer; 20 reports cover a switch back and forth).
WINDOW = 20
# Above the highest recent ratio (bench-tokens: overflow 5% -> 1% for +2% unused budget).
HEADROOM = 0.02
# A report this far from the current factor is not a tokenizer's count: Ollama omits or shrinks
# prompt_eval_count for cached prompts and reports the truncated count when the prompt overflowed
# num_ctx (ollama/ollama#2068, #3427, #16414). Such reports are counted as rejected, not learned.
PLAUSIBLE_RATIO = (0.4, 2.5)
# Bounds of the planning factor, whatever a backend reports: the smallest prompt budget the
# config allows (256) must always hold the template of a persona and a message.
MAX_PLANNING_FACTOR = 4.0
# The prompt filled the model's context: its count is the truncated one (ollama/ollama#3427).
TRUNCATION_MARGIN = 8

_PIECE = re.compile(r"[^\W\d_]+|\d+|\n+|[^\w\s]|_")
_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@functools.lru_cache(maxsize=16384)
def raw_count(text: str) -> int:
    """Count tokens as a BPE tokenizer roughly would: short words one token, long words one per
    four letters past the first four, accented letters extra, digits by threes, CJK per character.
    """
    total = 0
    for piece in _PIECE.findall(text):
        first = piece[0]
        if first == "\n":
            total += 1
        elif first.isdigit():
            total += math.ceil(len(piece) / 3)
        elif first.isalpha():
            wide = len(_WIDE.findall(piece))
            if wide:
                total += wide + math.ceil((len(piece) - wide) / 4)
                continue
            non_ascii = sum(1 for c in piece if ord(c) > 127)
            total += 1 + max(0, len(piece) - 4) // 4 + (non_ascii + 1) // 2
        else:
            total += 1
    return total


def raw_messages(messages: Iterable[Mapping[str, str]]) -> int:
    """The uncalibrated count of a chat prompt, template overhead included."""
    return REPLY_PRIMING + sum(raw_count(m["content"]) + PER_MESSAGE for m in messages)


def counted_messages(messages: Sequence[Mapping[str, str]], counted: int) -> int:
    """A prompt's count from the server's count of its texts joined by newlines (`counted`):
    the newlines taken out and the template's tokens added as `raw_messages` assumes them, so
    that the two compare the texts alone."""
    joints = max(0, len(messages) - 1)
    return REPLY_PRIMING + max(0, counted - joints) + PER_MESSAGE * len(messages)


@dataclass(frozen=True, slots=True)
class Observation:
    """What one backend report did to a calibration."""

    accepted: bool
    ratio: float | None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Estimator:
    """The token estimator of one chat model; `factor` scales the heuristic to its tokenizer."""

    model: str
    factor: float = UNCALIBRATED_FACTOR
    recent: tuple[float, ...] = ()
    samples: int = 0
    rejected: int = 0

    @property
    def name(self) -> str:
        return NAME

    @property
    def planning_factor(self) -> float:
        """The factor the budget uses: high enough that most prompts measure below it."""
        if not self.recent:
            return self.factor
        return min(MAX_PLANNING_FACTOR, max(self.recent) * (1 + HEADROOM))

    def count(self, text: str) -> int:
        """Estimate the tokens of a text."""
        return math.ceil(raw_count(text) * self.planning_factor)

    def count_messages(self, messages: Iterable[Mapping[str, str]]) -> int:
        """Estimate the tokens of a chat prompt as the model will see it."""
        return math.ceil(raw_messages(messages) * self.planning_factor)

    def observe(
        self, raw: int, reported: int | None, *, context_length: int
    ) -> tuple[Estimator, Observation]:
        """Learn from the backend's count of a prompt whose raw estimate was `raw`."""
        if reported is None or reported <= 0:
            return self._reject(None, "the backend reported no prompt token count")
        if raw <= 0:
            return self._reject(None, "empty prompt")
        ratio = reported / raw
        if reported >= context_length - TRUNCATION_MARGIN:
            return self._reject(ratio, "the prompt filled the context: a truncated count")
        low, high = PLAUSIBLE_RATIO
        reference = self.factor if self.samples else 1.0
        if not low <= ratio / reference <= high:
            return self._reject(ratio, "implausible count (cached or truncated prompt?)")
        recent = (*self.recent, ratio)[-WINDOW:]
        factor = sum(recent) / len(recent)  # the typical ratio, shown by /context
        updated = replace(self, factor=factor, recent=recent, samples=self.samples + 1)
        return updated, Observation(True, ratio)

    def _reject(self, ratio: float | None, reason: str) -> tuple[Estimator, Observation]:
        return replace(self, rejected=self.rejected + 1), Observation(False, ratio, reason)
