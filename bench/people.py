"""Memory per person: the process's resident memory while many distinct people each send one
message, through the Discord cog and the real runtime (SQLite), against an instant loopback LLM.

Each person sends one message (half in the server's channel, half in their own DM), is answered,
and their reflection writes at most one memory, which the indexer embeds; the `thaw` job
(memory.bulk.Thaw) runs between batches at its period, as in a running bot. Every BATCH people
the resident set (VmRSS) is sampled, with what the per-person caches hold by their estimate and
how many people the store's generations remember. At the end the process idles and collects;
the last sample is taken then. With `[limits] cache_mb` at CACHE_MB every per-person structure
is bounded together, so the resident set levels off whatever the number of people seen.

Run: make bench-people (PEOPLE="10000 100000": each count in its own process, then the table)
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.config import Settings
from bot.discord.app import EchoBot, Sync
from bot.runtime import listed_jobs, open_runtime
from tests.bot import discord_fakes as fakes
from tests.fakes.loopback import serve as loopback

RESULTS = Path(__file__).parent / "results"
# The database in memory-backed files where the machine has them: the run measures the
# process, not the disk's flushes.
SCRATCH = "/dev/shm" if Path("/dev/shm").is_dir() else None
# The bound on every per-person cache together in this run (the smallest the configuration
# accepts is 16): small enough that 10,000 people fill it.
CACHE_MB = 32
BATCH = 1_000
# Turns in flight at once.
CONCURRENT = 50
CHANNEL = 10
IDLE_SECONDS = 10.0
FIRST_USER = 1_000_000
REFLECTION = json.dumps({
    "memories": [{"text": "Cultive des tomates dans son jardin", "kind": "fact",
                  "scope": "global", "confidence": 0.95}],
    "summary": "",
})  # fmt: skip


async def chat(request: web.Request) -> web.Response:
    payload = await request.json()
    content = REFLECTION if "format" in payload else "Je vois."
    return web.json_response({"message": {"role": "assistant", "content": content}, "done": True})


async def embed(request: web.Request) -> web.Response:
    payload = await request.json()
    return web.json_response({"embeddings": [[1.0, 0.0, 0.5] for _ in payload["input"]]})


def rss_mb(field: str = "VmRSS") -> float:
    """The process's resident set (VmRSS), or one of its parts (RssAnon: not file-backed)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]  # fmt: skip


def c_heap_mb() -> tuple[float, float]:
    """What the C allocator (glibc's malloc, every arena) holds in use and free, in MB: the
    memory outside Python's own allocator (numpy's buffers, SQLite's caches, large objects);
    (0, 0) where there is no mallinfo2."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError):
        return 0.0, 0.0
    mallinfo2.restype = _Mallinfo2
    info = mallinfo2()
    return round(info.uordblks / 2**20, 1), round(info.fordblks / 2**20, 1)


@dataclass
class Sample:
    people: int
    seconds: float
    rss_mb: float
    caches_mb: float
    entries: int
    generations: int
    evictions: int
    # Where the resident set is: anonymous memory (RssAnon, the rest being mapped files), the
    # C allocator's bytes in use and free (c_heap_mb), and the objects the collector no longer
    # walks (gc.freeze, memory.bulk). 0 in runs saved before they were sampled.
    anon_mb: float = 0.0
    c_heap_mb: float = 0.0
    c_free_mb: float = 0.0
    frozen: int = 0
    # The longest run of the `thaw` job since the previous sample, in ms (0: none collected).
    thaw_ms: float = 0.0


@dataclass
class Run:
    people: int
    cache_mb: int
    start_mb: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    idle: Sample | None = None
    answered: int = 0
    # Which code ran: a run of an older commit, saved beside, is reported as the "before".
    code: str = "this branch"


async def run(people: int) -> Run:
    result = Run(people, CACHE_MB)
    app = web.Application()
    app.router.add_post("/api/chat", chat)
    app.router.add_post("/api/embed", embed)
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        async with loopback(app) as url:
            settings = Settings(
                llm={"base_url": url},  # type: ignore[arg-type]
                storage={"path": Path(tmp) / "people.sqlite3"},  # type: ignore[arg-type]
                discord={"channels": [CHANNEL]},  # type: ignore[arg-type]
                limits={"cache_mb": CACHE_MB},  # type: ignore[arg-type]
            )
            async with open_runtime(settings) as runtime:
                echo = EchoBot(runtime, sync=Sync.NEVER, background=False)
                rec = fakes.Recorder()
                await fakes.install(echo, rec)
                await echo.setup_hook()
                cog: Any = echo.get_cog("Conversation")
                channel = fakes.text_channel(echo, CHANNEL)
                engine = runtime.engine
                thaw = next(job for job in listed_jobs(runtime) if job.name == "thaw")
                assert thaw.every is not None
                gc.collect()
                result.start_mb = rss_mb()
                started = thawed_at = time.monotonic()
                thaw_ms = 0.0

                def sample(done: int) -> Sample:
                    return Sample(
                        done, round(time.monotonic() - started, 1), round(rss_mb(), 1),
                        round(engine.caches.total / 2**20, 1), engine.caches.entries,
                        runtime.store.generations.known(), engine.caches.evictions,
                        round(rss_mb("RssAnon"), 1), *c_heap_mb(), gc.get_freeze_count(),
                        thaw_ms,
                    )  # fmt: skip

                async def one(user: int) -> None:
                    place = channel if user % 2 else fakes.dm_channel(echo, 10 * user + 1, user)
                    message = fakes.message(
                        echo, place, author_id=user, content="J'ai planté des tomates ce matin."
                    )
                    await cog.on_message(message)

                for first in range(0, people, BATCH):
                    users = range(FIRST_USER + first, FIRST_USER + min(people, first + BATCH))
                    for start in range(0, len(users), CONCURRENT):
                        await asyncio.gather(*(one(u) for u in users[start : start + CONCURRENT]))
                    await asyncio.gather(*cog._background, return_exceptions=True)
                    result.answered += len(rec.messages())
                    rec.sent.clear()
                    while await runtime.worker.run_due(limit=100):
                        pass
                    await runtime.indexer.run_once()
                    if time.monotonic() - thawed_at >= thaw.every:
                        thawed_at = time.monotonic()
                        await thaw.run()
                        thaw_ms = round(1000 * (time.monotonic() - thawed_at), 1)
                    result.samples.append(sample(first + len(users)))
                    thaw_ms = 0.0
                    print(asdict(result.samples[-1]), file=sys.stderr, flush=True)
                    save(result)  # a run stopped before its end still reports how far it got
                await asyncio.sleep(IDLE_SECONDS)
                gc.collect()
                result.idle = sample(people)
                save(result)
    return result


def save(result: Run) -> None:
    path = RESULTS / f"people-{result.people}.json"
    path.write_text(json.dumps(asdict(result)), encoding="utf-8")


def report(runs: list[Run]) -> str:
    lines = [
        "# Memory per person: distinct people, one message each",
        "",
        "Through the Discord cog and the real runtime (SQLite), instant loopback LLM; each",
        "person's reflection writes at most one memory, embedded by the indexer.",
        f"`[limits] cache_mb` = {CACHE_MB}. RSS sampled every {BATCH:,} people, then after",
        f"{IDLE_SECONDS:.0f} s idle and a full collection. `make bench-people`.",
        "",
        "| code | people | start RSS (MB) | RSS after all (MB) | RSS after idle (MB) | caches by"
        " estimate (MB) | cache entries | people in generations | evictions | answered |"
        " second half: first → last RSS (MB) | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        last, idle = r.samples[-1], r.idle
        name = f"{r.people:,}" if idle else f"{r.people:,} (stopped at {last.people:,})"
        end = idle or last
        # The resident set over the second half of the people seen (of those reached, for a
        # run stopped before its end): its first sample at or past half, and the last (idle).
        half = [s for s in [*r.samples, *([idle] if idle else [])] if 2 * s.people >= last.people]
        first, final = half[0].rss_mb, half[-1].rss_mb
        lines.append(
            f"| {r.code} | {name} | {r.start_mb:.0f} | {last.rss_mb:.0f} |"
            f" {f'{idle.rss_mb:.0f}' if idle else 'not reached'} | {end.caches_mb:.1f} |"
            f" {end.entries:,} | {end.generations:,} | {end.evictions:,} | {r.answered:,} |"
            f" {first:.0f} → {final:.0f} | {final / first:.3f} |"
        )
    sampled = [r for r in runs if (r.idle or r.samples[-1]).anon_mb]
    lines += [] if not sampled else ["", "Where the memory is at the end: RssAnon is the"
              " resident set less mapped files; the C heap is glibc's malloc (numpy, SQLite,"
              " large objects) in use and free; frozen objects are those gc.freeze moved out of"
              " the collector's sight (memory.bulk); the longest thaw is the longest run of the"
              " `thaw` job over the run, the event loop waiting for it (— where it did not run).",
              "", "| code | people | RssAnon (MB) | C heap in use (MB) | C heap free (MB) |"
              " frozen objects | longest thaw (ms) |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in sampled:
        end = r.idle or r.samples[-1]
        slowest = max(s.thaw_ms for s in r.samples)
        lines.append(
            f"| {r.code} | {r.people:,} | {end.anon_mb:.0f} | {end.c_heap_mb:.1f} |"
            f" {end.c_free_mb:.1f} | {end.frozen:,} | {f'{slowest:.0f}' if slowest else '—'} |"
        )
    lines += ["", "RSS (MB) by people seen:", "", "| people | " + " | ".join(
        f"{r.people:,} ({r.code})" for r in runs) + " |", "|---|" + "---|" * len(runs)]  # fmt: skip
    longest = max(runs, key=lambda r: r.people)
    for i, s in enumerate(longest.samples):
        if i % max(1, len(longest.samples) // 20) and i != len(longest.samples) - 1:
            continue
        cells = [f"{r.samples[i].rss_mb:.0f}" if i < len(r.samples) else "" for r in runs]
        lines.append(f"| {s.people:,} | " + " | ".join(cells) + " |")
    lines += ["", "![RSS by people seen](people.png)", ""]
    return "\n".join(lines)


def plot(runs: list[Run]) -> None:
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for r in runs:
        ax.plot([s.people for s in r.samples], [s.rss_mb for s in r.samples],
                label=f"{r.code}, {r.people:,} people: RSS")  # fmt: skip
        ax.plot([s.people for s in r.samples], [s.caches_mb for s in r.samples], "--",
                label=f"{r.code}, {r.people:,} people: caches by estimate")  # fmt: skip
    ax.axhline(CACHE_MB, color="grey", linewidth=0.8, label=f"cache_mb = {CACHE_MB}")
    ax.set_xlabel("distinct people seen")
    ax.set_ylabel("MB")
    ax.set_title("Resident memory by people seen, one message each")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "people.png", dpi=110)


def load(path: Path) -> Run:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Run(
        data["people"], data["cache_mb"], data["start_mb"],
        [Sample(**s) for s in data["samples"]], data["idle"] and Sample(**data["idle"]),
        data["answered"], data.get("code", "this branch"),
    )  # fmt: skip


def main() -> None:
    """Run the counts given (each in this process, so one count per call keeps the runs
    apart), then report every run saved so far."""
    for count in [int(a) for a in sys.argv[1:]]:
        asyncio.run(run(count))
    runs = sorted(
        (load(p) for p in RESULTS.glob("people-*.json")), key=lambda r: (r.people, r.code)
    )
    text = report(runs)
    (RESULTS / "people.md").write_text(text, encoding="utf-8")
    plot(runs)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
