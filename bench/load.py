"""One person floods, ten talk: what the others feel, through the Discord cog.

Ten people talk normally (a message, the reply, 3 to 6 s of thought, again) for DURATION seconds
in one channel and their DMs, against a loopback LLM that models one local Ollama: every call
takes 0.5 s and at most 4 run at once (more wait in its queue). Three runs, side by side:
  calm    the ten alone;
  flood   the same, while one person sends 500 messages as fast as Discord delivers them;
  unbounded  the flood again without the per-person bounds (every message of the flood goes to
          the LLM at once, no reflection backlog): what Écho did before them.
Reported: the others' reply latency (p50, p95) per run, the flooder's LLM calls, the outbox
depth over time (plotted), the messages turned away and the notices sent.
Run: make bench-load
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.config import Settings
from bot.discord.app import EchoBot, Sync
from bot.runtime import open_runtime
from memory.store.tables import outbox
from memory.turn.admission import AdmissionStatus
from tests.bot import discord_fakes as fakes
from tests.fakes.loopback import serve as loopback

RESULTS = Path(__file__).parent / "results"
LLM_SECONDS = 0.5
LLM_PARALLEL = 4  # Ollama's default OLLAMA_NUM_PARALLEL
DURATION = 40.0
PEOPLE = 10
FLOOD = 500
FLOODER = 1
CHANNEL = 10


@dataclass
class Server:
    """A loopback Ollama: 0.5 s a call, 4 at once; counts the calls made for each author."""

    url: str = ""
    slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(LLM_PARALLEL))
    calls_by_author: dict[int, int] = field(default_factory=dict)

    async def chat(self, request: web.Request) -> web.Response:
        payload = await request.json()
        last = payload["messages"][-1]["content"]
        author = FLOODER if "flood" in last else 0
        self.calls_by_author[author] = self.calls_by_author.get(author, 0) + 1
        async with self.slots:
            await asyncio.sleep(LLM_SECONDS)
        content = '{"memories": [], "summary": ""}' if "format" in payload else "Je vois."
        return web.json_response(
            {"message": {"role": "assistant", "content": content}, "done": True}
        )

    async def embed(self, request: web.Request) -> web.Response:
        payload = await request.json()
        return web.json_response({"embeddings": [[1.0, 0.0] for _ in payload["input"]]})


@asynccontextmanager
async def serve() -> AsyncIterator[Server]:
    server = Server()
    app = web.Application()
    app.router.add_post("/api/chat", server.chat)
    app.router.add_post("/api/embed", server.embed)
    async with loopback(app) as server.url:
        yield server


class Unbounded:
    """No per-person bound: every turn goes straight on (Écho before the admission)."""

    def status(self) -> AdmissionStatus:
        return AdmissionStatus(0, 0, 0)

    @asynccontextmanager
    async def turn(self, user_id: int, story_id: int) -> AsyncIterator[None]:
        yield


@dataclass
class Run:
    name: str
    latencies: list[float] = field(default_factory=list)
    depth: list[tuple[float, int]] = field(default_factory=list)
    flooder_calls: int = 0
    others_calls: int = 0
    refused: int = 0
    notices: int = 0


async def person(echo: EchoBot, user: int, rng: random.Random, until: float, run: Run) -> None:
    cog: Any = echo.get_cog("Conversation")
    places = [fakes.text_channel(echo, CHANNEL), fakes.dm_channel(echo, 50_000 + user, user)]
    n = 0
    while time.monotonic() < until:
        n += 1
        message = fakes.message(echo, rng.choice(places), author_id=user,
                                content=f"message {n} about my garden")  # fmt: skip
        started = time.monotonic()
        await cog.on_message(message)
        run.latencies.append(time.monotonic() - started)
        await asyncio.sleep(rng.uniform(3.0, 6.0))


async def flood(echo: EchoBot, rec: fakes.Recorder, run: Run) -> None:
    cog: Any = echo.get_cog("Conversation")
    channel = fakes.text_channel(echo, CHANNEL)
    turns = []
    for n in range(FLOOD):
        message = fakes.message(echo, channel, author_id=FLOODER, content=f"flood {n}")
        turns.append(asyncio.create_task(cog.on_message(message)))
        await asyncio.sleep(0.01)  # a gateway delivering a burst
    await asyncio.gather(*turns)


async def one_run(name: str, *, flooding: bool, bounded: bool) -> Run:
    run = Run(name)
    with tempfile.TemporaryDirectory() as tmp:
        async with serve() as server:
            limits = {} if bounded else {"reflection_backlog": 10_000}
            settings = Settings(
                llm={"base_url": server.url, "chat_timeout": 600.0},  # type: ignore[arg-type]
                storage={"path": Path(tmp) / "load.sqlite3"},  # type: ignore[arg-type]
                discord={"channels": [CHANNEL]},  # type: ignore[arg-type]
                limits=limits,  # type: ignore[arg-type]
            )
            async with open_runtime(settings) as runtime:
                echo = EchoBot(runtime, sync=Sync.NEVER, background=False)
                rec = fakes.Recorder()
                await fakes.install(echo, rec)
                await echo.setup_hook()
                if not bounded:
                    runtime.engine.admission = Unbounded()  # type: ignore[assignment]
                start = time.monotonic()
                until = start + DURATION
                rng = random.Random(7)

                async def sample() -> None:
                    while True:
                        depth = await outbox.pending_count(runtime.store)
                        run.depth.append((time.monotonic() - start, depth))
                        await asyncio.sleep(1.0)

                sampler = asyncio.create_task(sample())
                work = [person(echo, 100 + p, random.Random(rng.random()), until, run)
                        for p in range(PEOPLE)]  # fmt: skip
                if flooding:
                    work.append(flood(echo, rec, run))
                await asyncio.gather(*work)
                sampler.cancel()
                cog: Any = echo.get_cog("Conversation")
                await asyncio.gather(*cog._background, return_exceptions=True)
                status = runtime.engine.status()
                run.refused, run.notices = status.admission.refused, status.admission.notices
                run.flooder_calls = server.calls_by_author.get(FLOODER, 0)
                run.others_calls = server.calls_by_author.get(0, 0)
    return run


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(runs: list[Run]) -> str:
    calm = runs[0]
    lines = [
        "# Load: one person floods 500 messages while ten talk",
        "",
        f"LLM: {LLM_SECONDS} s a call, {LLM_PARALLEL} at once (one local Ollama). "
        f"{PEOPLE} people, 3-6 s between a reply and their next message, {DURATION:.0f} s. "
        "Same machine, same run. `make bench-load`.",
        "",
        "| run | others' replies | p50 (s) | p95 (s) | p95 vs calm | flooder's LLM calls |"
        " messages turned away | slow-down notices | outbox max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    base = pct(calm.latencies, 0.95)
    for r in runs:
        p95 = pct(r.latencies, 0.95)
        depth = max((d for _, d in r.depth), default=0)
        lines.append(
            f"| {r.name} | {len(r.latencies)} | {statistics.median(r.latencies):.2f} | {p95:.2f}"
            f" | {p95 / base:.2f}x | {r.flooder_calls} | {r.refused} | {r.notices} | {depth} |"
        )
    lines += ["", "![outbox depth](load.png)", ""]
    return "\n".join(lines)


def plot(runs: list[Run]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for r in runs:
        left.plot([t for t, _ in r.depth], [d for _, d in r.depth], label=r.name)
    left.set_xlabel("seconds")
    left.set_ylabel("reflections waiting")
    left.set_title("Outbox depth")
    left.legend()
    right.boxplot([r.latencies for r in runs], tick_labels=[r.name for r in runs])
    right.set_yscale("log")
    right.set_ylabel("seconds (log)")
    right.set_title("The ten others' reply latency")
    fig.tight_layout()
    fig.savefig(RESULTS / "load.png", dpi=110)


async def main() -> None:
    runs = [
        await one_run("calm", flooding=False, bounded=True),
        await one_run("flood", flooding=True, bounded=True),
        await one_run("unbounded", flooding=True, bounded=False),
    ]
    text = report(runs)
    (RESULTS / "load.md").write_text(text, encoding="utf-8")
    plot(runs)
    sys.stdout.write(text)


if __name__ == "__main__":
    asyncio.run(main())
