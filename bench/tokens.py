"""How safe is the token budget? The heuristic estimator, calibrated as the engine calibrates it,
against real tokenizers: Llama 3 (llama3-tokenizer-js) and OpenAI's cl100k / o200k
(gpt-tokenizer), run by node from bench/tokenizers (vocabularies inside the npm packages).

Prompts are built by the product's own code (persona, memories, history, input) from the recall
bench's French and English sentences plus Discord-like lines (links, emoji, code). A simulated
conversation of 300 prompts, growing and shrinking, switches language every 50 prompts. Each
prompt is planned with the estimator as it stands (overflow = the real count is above the
planned one), then the real count is reported to it, as a backend would.

Baseline in the same run: characters / 4, the usual rule of thumb, never calibrated. Then what
the dates cost: the same prompts built without them, counted by the same tokenizers.
Run: make bench-tokens
"""

from __future__ import annotations

import json
import math
import random
import statistics
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bench.corpora.recall import CORPORA, distractors
from memory.context.builder import ContextConfig
from memory.context.prompt import (
    Character,
    history_blocks,
    input_block,
    memory_blocks,
    persona_blocks,
    render,
)
from memory.context.tokens import Estimator, raw_messages
from memory.context.when import gap_line
from memory.model import Kind, Memory, Reason, Scope, Selected
from memory.store.tables.history import HistoryMessage

HERE = Path(__file__).parent
RESULTS = HERE / "results" / "tokens.md"
PROMPTS = 300
# The prompts are built on this day, in this zone; memories were said on average MEMORY_DAYS
# before (exponentially), and one message in SILENCES comes a day or more after the one before.
NOW = datetime(2026, 12, 2, 15, 0, tzinfo=UTC).timestamp()
ZONE = ZoneInfo("Europe/Paris")
DAY = 86_400.0
MEMORY_DAYS = 30.0
SILENCES = 0.03
SWITCH_EVERY = 50
# Chat-template tokens the real count adds around the texts: Llama 3 wraps each message in
# <|start_header_id|>role<|end_header_id|>\n\n … <|eot_id|> (5) plus <|begin_of_text|> and the
# assistant header (5); OpenAI's chat format costs about 4 per message plus 3.
TEMPLATE = {"llama3": (5, 5), "cl100k": (4, 3), "o200k": (4, 3)}
DISCORD_LINES = [
    "lol 😂😂 t'as vu ça ? https://www.youtube.com/watch?v=dQw4w9WgXcQ",
    "ok ok 👍",
    "```python\nfor i in range(10):\n    print(i ** 2)\n```",
    "<@123456789012345678> tu viens ce soir ?? 🎉",
    "Version 2.7.3 → 2.8.0, changelog: https://github.com/Rapptz/discord.py/releases",
    "hahaha non mais sérieux… 🙃",
]


def sentences(language: str) -> list[str]:
    corpus = CORPORA[language]
    return [*corpus.references, *(q for q, _ in corpus.queries), *distractors(corpus, 400, 1)]


def prompt(
    rng: random.Random, language: str, size: int
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """One prompt as the product builds it (the day, each memory's date, the silences in the
    history marked), and the same prompt without any of the dates."""
    pool = sentences(language)
    persona = (
        "Tu es Écho, une confidente attentive."
        if language == "fr"
        else ("You are Écho, an attentive, warm confidante.")
    )
    selected = [
        Selected(Memory(id=i, user_id=1, text=rng.choice(pool), kind=Kind.FACT,
                        scope=Scope.GLOBAL,
                        created_at=NOW - rng.expovariate(1 / MEMORY_DAYS) * DAY), Reason.GLOBAL)
        for i in range(rng.randint(0, 24))
    ]  # fmt: skip
    history = []
    at = NOW - rng.uniform(0, 2 * DAY)
    for i in range(size):
        text = rng.choice(DISCORD_LINES) if rng.random() < 0.15 else rng.choice(pool)
        role = "user" if i % 2 == 0 else "assistant"
        name = "Marie" if role == "user" else "Écho"
        history.append(HistoryMessage(i + 1, role, name, text, created_at=at))
        at -= rng.uniform(1, 10) * DAY if rng.random() < SILENCES else rng.uniform(10, 300)
    history.reverse()
    history = [replace(m, id=i + 1) for i, m in enumerate(history)]
    said = rng.choice(pool)
    character = Character("Écho", persona, zone=ZONE)
    dated = [
        *persona_blocks(character, selected, now=NOW),
        *memory_blocks(selected, {}, now=NOW, zone=ZONE),
        *history_blocks(history, zone=ZONE),
        input_block("Marie", said, gap=gap_line(history[-1].created_at, NOW, ZONE)
                    if history else ""),
    ]  # fmt: skip
    undated = [
        *persona_blocks(character, selected),
        *memory_blocks(selected, {}),
        *history_blocks([replace(m, created_at=0.0) for m in history]),
        input_block("Marie", said),
    ]
    return render(dated, user_name="Marie"), render(undated, user_name="Marie")


def real_counts(prompts: list[list[dict[str, str]]]) -> dict[str, list[int]]:
    texts = [m["content"] for p in prompts for m in p]
    out = subprocess.run(
        ["node", str(HERE / "tokenizers" / "count.mjs")], input=json.dumps(texts).encode(),
        capture_output=True, check=True,
    )  # fmt: skip
    counts = json.loads(out.stdout)
    totals: dict[str, list[int]] = {}
    for name, per_text in counts.items():
        per_message, fixed = TEMPLATE[name]
        it = iter(per_text)
        totals[name] = [fixed + sum(next(it) + per_message for _ in p) for p in prompts]
    return totals


def simulate(prompts: list[list[dict[str, str]]], real: list[int]) -> dict[str, float]:
    estimator = Estimator("bench")
    overflows = overflows_warm = 0
    waste = []
    for index, (messages, count) in enumerate(zip(prompts, real, strict=True)):
        planned = estimator.count_messages(messages)
        if count > planned:
            overflows += 1
            overflows_warm += index >= 5
        waste.append(planned / count - 1)
        estimator, _ = estimator.observe(raw_messages(messages), count, context_length=10**9)
    ratios = [c / raw_messages(p) for p, c in zip(prompts, real, strict=True)]
    return {
        "overflow": overflows / len(real),
        "overflow_warm": overflows_warm / (len(real) - 5),
        "waste": statistics.mean(waste[5:]),
        "ratio_mean": statistics.mean(ratios),
        "ratio_sd": statistics.pstdev(ratios),
        "factor": estimator.planning_factor,
    }


def chars_over_four(prompts: list[list[dict[str, str]]], real: list[int]) -> dict[str, float]:
    planned = [math.ceil(sum(len(m["content"]) for m in p) / 4) for p in prompts]
    return {
        "overflow": sum(r > p for p, r in zip(planned, real, strict=True)) / len(real),
        "waste": statistics.mean(p / r - 1 for p, r in zip(planned, real, strict=True)),
    }


def dates_cost(
    prompts: list[list[dict[str, str]]], undated: list[list[dict[str, str]]]
) -> list[str]:
    """What the dates add to the prompts, in real tokens: per prompt, per memory line, and the
    day's line and the silences' lines together."""
    with_dates, without = real_counts(prompts), real_counts(undated)
    memories = [sum(m["content"].count("\n- (") for m in p) for p in prompts]
    gaps = [sum(m["content"].count(" later, ") for m in p) for p in prompts]
    lines = [
        "",
        "## What the dates cost",
        "",
        f"The same {PROMPTS} prompts with and without the dates (the day's line after the "
        "persona, each memory's date, the silences of a day or more in the history marked: "
        f"{sum(gaps)} marks in all, {statistics.mean(gaps):.2f} per prompt; "
        f"{statistics.mean(memories):.1f} memories per prompt, said up to months before).",
        "",
        "| tokenizer | tokens per prompt without → with (mean) | added per prompt (mean, max) "
        "| share of the prompt | per memory line |",
        "|---|---|---|---|---|",
    ]
    for name in with_dates:
        a, b = with_dates[name], without[name]
        added = [x - y for x, y in zip(a, b, strict=True)]
        # The day's line (and the gap marks) without memories: what a memory adds is the rest.
        bare = [d for d, n in zip(added, memories, strict=True) if n == 0]
        fixed = statistics.mean(bare) if bare else 0.0
        per_memory = statistics.mean(
            (d - fixed) / n for d, n in zip(added, memories, strict=True) if n
        )
        lines.append(
            f"| {name} | {statistics.mean(b):,.0f} → {statistics.mean(a):,.0f} | "
            f"+{statistics.mean(added):.1f} (max +{max(added)}) | "
            f"{statistics.mean(x / y - 1 for x, y in zip(a, b, strict=True)):+.1%} | "
            f"≈{per_memory:.1f} |"
        )
    budget = ContextConfig().budget.prompt
    added = statistics.mean(
        x - y for x, y in zip(with_dates["llama3"], without["llama3"], strict=True)
    )
    lines.append(
        f"\nWith Llama 3, the dates take {added / budget:.1%} of the default prompt budget "
        f"({budget:,} tokens of an 8,192 context)."
    )
    return lines


def main() -> None:
    rng = random.Random(7)
    prompts, undated, languages = [], [], []
    for index in range(PROMPTS):
        language = ("fr", "en")[(index // SWITCH_EVERY) % 2]
        size = int(40 + 35 * math.sin(index / 9))  # the history grows and shrinks
        dated, bare = prompt(rng, language, size)
        prompts.append(dated)
        undated.append(bare)
        languages.append(language)
    real = real_counts(prompts)
    lines = [
        "# Token estimates against real tokenizers",
        "",
        f"{PROMPTS} prompts built by the product's prompt code (persona, up to 24 memories, "
        f"5-75 history messages, 15% Discord-like lines), French and English alternating every "
        f"{SWITCH_EVERY} prompts. Overflow: the real count above the planned one (the prompt "
        "would not fit where the budget said it fits). Waste: how much higher the plan is than "
        "the real count, on average (budget left unused). Run: `make bench-tokens`.",
        "",
        "| tokenizer | real / heuristic (mean ± sd) | ours: overflow (after 5 reports) | ours: "
        "waste | ours: final planning factor | chars/4: overflow | chars/4: waste |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, counts in real.items():
        ours = simulate(prompts, counts)
        base = chars_over_four(prompts, counts)
        lines.append(
            f"| {name} | {ours['ratio_mean']:.3f} ± {ours['ratio_sd']:.3f} | "
            f"{ours['overflow']:.1%} ({ours['overflow_warm']:.1%}) | {ours['waste']:+.1%} | "
            f"×{ours['factor']:.3f} | {base['overflow']:.1%} | {base['waste']:+.1%} |"
        )
    for language in ("fr", "en"):
        chosen = [i for i, lang in enumerate(languages) if lang == language]
        parts = []
        for name, counts in real.items():
            ratios = [counts[i] / raw_messages(prompts[i]) for i in chosen]
            parts.append(f"{name} {statistics.mean(ratios):.3f}")
        lines.append(f"\nreal / heuristic, {language} prompts only: " + ", ".join(parts))
    lines += dates_cost(prompts, undated)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
