"""Scale: turns, throughput, the idle indexer pass and resident memory at 1M memories over 2,000
people, for each target and number of processes, side by side in one run.

The database (2,000 people x 500 memories, 768-d vectors from a deterministic fake embedder)
is loaded once in bulk (bench/scale/loader.py: the rows the product's own write path writes,
tests/bench/test_scale_loader.py holds the two equal) and kept under ~/.cache/echo-bench; a
SQLite run works on a copy of it, so every run starts from the same file.
For each configuration, N worker processes each drive an Engine on
the database over their share of the people, with an instant fake chat: each person has a
conversation of two turns (the first builds their caches: cold; the second finds them: warm),
CONCURRENCY people at once per process. Reported per configuration: turn latency p50/p95
(cold, warm), throughput (turns per second, all processes together, from the common start to
the last turn), the resident memory of one process (after the turns, and its peak) with what
the caches estimate they hold, the event loop's longest stall (memory.looplag's ticker) and
the database's size on disk; and per target the idle indexer pass (nothing to embed).
Reflections are not run: the fake chat answers turns only.

The newcomers' attack (issue 28): the first configuration of each target runs again with
NEWCOMERS people who have no memory (BENCH_SCALE_NEWCOMERS, spread over the processes), each
sending ATTACK (every word the memories hold, the commonest first) every ATTACK_PAUSE seconds
while the others talk; the others' latencies are compared with the same run without them.
One person's flood: the same configuration again while the last person, left out of the
conversations, sends a message every FLOOD_PAUSE seconds without waiting for the answers
(BENCH_SCALE_FLOOD=0: not run).

Targets (BENCH_SCALE_TARGETS, default "sqlite,postgres"): `sqlite` is the cached build, copied
for each configuration; `postgres` starts a throwaway PostgreSQL 18 (bench/scale/pg.py, as make
test-pg does), copies the SQLite build into it by COPY, checks that a sample of people recall the
same on both, and runs each configuration on a fresh copy of that database; a postgresql:// URL
is used as it is (filled the same way first when it holds no memory). Process counts
(BENCH_SCALE_PROCESSES) default to 1 for SQLite and 1, 2, 4 for PostgreSQL; cache bounds
(BENCH_SCALE_CACHE_MB) are a list too.
Several characters (issue 33, --characters / BENCH_SCALE_CHARACTERS, a list, default 1): with N
characters the same people hold the same memories, split across the characters (memory i of a
person is character i mod N's, written under the id that character keeps the person under,
memory.character.cast; the total is the same as with one), and each person holds a conversation
of two turns (cold, warm) with each of the N characters, the order turned by the person. Runs
with another count than 1 are reported apart, side by side: bench/scale/characters.py
(scale-characters.*; make bench-characters runs 5 and 1 on SQLite).
Run: make bench-scale; smaller: BENCH_SCALE_PEOPLE=200 BENCH_SCALE_PER_PERSON=50 make bench-scale;
BENCH_SCALE_NAME names the results' files (default scale).
Options: python -m bench.scale --help.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.scale import loader, pg
from bench.scale.constants import CONCURRENCY, IDLE_PASSES
from bench.scale.data import ATTACK, MODEL, ORIGIN, STORY, WORDS, Embedder, cast

CACHE = Path(os.environ.get("ECHO_BENCH_CACHE", Path.home() / ".cache" / "echo-bench"))
# Part of the cached build's name: raise it when what the build writes changes.
BUILD_VERSION = 2
# People whose recall is compared on both backends after the copy, and what they ask.
CHECKED = 12
CHECK_TEXT = "Person {p}, tell me about note 17 and note 342"
# People with no memory in the attack run, all processes together, and the pause between two
# messages of one of them: a fast typist's 32 words. What they add is then their messages'
# cost, not a flood of turns: at one message a second each, 20 newcomers offered 20 turns/s to
# a process serving 13 (2 cores under load), and the others' p95 doubled from the load alone
# (2.27x, newcomers' recall 6 ms a turn at 200,000 memories).
NEWCOMERS = 20
ATTACK_PAUSE = 10.0
# One person's flood: a message every FLOOD_PAUSE seconds, each sent without waiting for the
# answer to the one before, as Discord delivers a script's messages. Ten a second is five
# times what bench.load's flooder managed through the cog, and past the admission's queue
# (memory.turn.admission.TURN_QUEUE) at once.
FLOOD_PAUSE = 0.1


class Chat:
    model = "bench-chat"

    async def chat(self, messages: Any, **_: Any) -> Any:
        from memory.backends.chat import ChatResult

        return ChatResult("I see. Tell me more.")


async def open_store(target: str) -> Any:
    """The store at `target`: a SQLite path, or a postgresql:// URL."""
    from memory.store import open_store

    return await open_store(target)


async def _count(store: Any) -> int:
    from memory import manage

    return int((await manage.stats(store)).memories)


def cached_build(people: int, per_person: int, dim: int, characters: int = 1) -> Path:
    """The SQLite build for these sizes, made once and kept under CACHE."""
    cast_part = f"-{characters}c" if characters > 1 else ""
    path = CACHE / f"scale-v{BUILD_VERSION}-{people}x{per_person}-{dim}d{cast_part}.sqlite3"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        for leftover in CACHE.glob(partial.name + "*"):
            leftover.unlink()
        print(f"loading {people:,} x {per_person:,} memories in {path} (once)", file=sys.stderr)
        asyncio.run(loader.load(str(partial), people, per_person, dim, characters))
        os.replace(partial, path)
    return path


def _memory_kb() -> dict[str, int]:
    """This process's resident memory now and at its peak (kB, Linux)."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


async def worker(
    target: str, index: int, count: int, people: int, dim: int, cache_mb: int, start_at: float,
    newcomers: int = 0, characters: int = 1, flood: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Serve this process's share of the people, two turns each with each character, while its
    share of the newcomers send ATTACK until the others are done (or, with `flood`, the last
    person floods in the first process); latencies, the loop's longest stall and memory."""
    from memory import Engine, Incoming, MemoryConfig, Overloaded
    from memory.looplag import LoopLag

    flooder = people if flood else 0
    mine = [p for p in range(1 + index, people + 1, count) if p != flooder]
    async with await open_store(target) as store:
        engine = Engine(store, embedder=Embedder(dim), chat=Chat(), characters=cast(characters),
                        config=MemoryConfig(cache_mb=cache_mb))  # fmt: skip
        keys = [c.key for c in engine.characters]
        before = _memory_kb()
        cold: list[float] = []
        warm: list[float] = []
        queue = list(reversed(mine))

        async def converse() -> None:
            while queue:
                person = queue.pop()
                first = f"Do you remember the {WORDS[person % len(WORDS)]}?"
                for c in range(len(keys)):
                    key = keys[(person + c) % len(keys)]
                    for n, text in enumerate((first, "And what else did I tell you?")):
                        began = time.perf_counter()
                        message = Incoming(f"bench:{person}:{key}:{n}:{start_at}", person,
                                           f"P{person}", STORY, ORIGIN, text, key)  # fmt: skip
                        await engine.turn(message)
                        (warm if n else cold).append(time.perf_counter() - began)

        attacks: list[float] = []
        talking = [True]

        async def attack(person: int) -> None:
            n = 0
            while talking[0]:
                began = time.perf_counter()
                message = Incoming(f"bench:new:{person}:{n}:{start_at}", person, f"N{person}",
                                   STORY, ORIGIN, ATTACK)  # fmt: skip
                await engine.turn(message)
                attacks.append(time.perf_counter() - began)
                n += 1
                await asyncio.sleep(ATTACK_PAUSE)

        floods: list[float] = []
        refused = [0]

        async def flooded(n: int) -> None:
            began = time.perf_counter()
            text = f"Do you remember the {WORDS[n % len(WORDS)]}? ({n})"
            message = Incoming(f"bench:flood:{n}:{start_at}", flooder, f"P{flooder}", STORY,
                               ORIGIN, text)  # fmt: skip
            try:
                await engine.turn(message)
                floods.append(time.perf_counter() - began)
            except Overloaded:
                refused[0] += 1

        async def flooding() -> None:
            sent: list[asyncio.Task[None]] = []
            while talking[0]:
                sent.append(asyncio.create_task(flooded(len(sent))))
                await asyncio.sleep(FLOOD_PAUSE)
            await asyncio.gather(*sent)

        async def talk() -> None:
            await asyncio.gather(*(converse() for _ in range(CONCURRENCY)))
            talking[0] = False

        strangers = range(people + 1 + index, people + 1 + newcomers, count)
        others = [flooding()] if flooder and index == 0 else []
        lag = LoopLag(window=float("inf"), warn_above=float("inf"))
        await asyncio.sleep(max(0.0, start_at - time.time()))
        lag.start()
        await asyncio.gather(talk(), *(attack(p) for p in strangers), *others)
        finished = time.time()
        stall = lag.longest() or 0.0
        await lag.stop()
        await engine.flush_pending()
        return {
            "cold": cold, "warm": warm, "attacks": attacks, "finished": finished,
            "floods": floods, "refused": refused[0], "stall": stall,
            "people": len(mine),
            "rss_before_kb": before["VmRSS"], **_memory_kb(),
            "cache_bytes": engine.caches.total, "cache_entries": engine.caches.entries,
            "evictions": engine.caches.evictions,
        }  # fmt: skip


async def idle_pass(target: str, dim: int) -> dict[str, float]:
    """An indexer pass with nothing to embed: median and longest of IDLE_PASSES (ms)."""
    from memory.vectors.indexer import Indexer

    async with await open_store(target) as store:
        indexer = Indexer(store, Embedder(dim))
        await indexer.run_once()  # whatever a previous run left
        times = []
        for _ in range(IDLE_PASSES):
            began = time.perf_counter()
            written = await indexer.run_once()
            times.append((time.perf_counter() - began) * 1000)
            assert written == 0
        memories = await _count(store)
    return {"median_ms": statistics.median(times), "max_ms": max(times), "memories": memories}


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000 if values else float("nan")


def run_config(
    target: str, processes: int, args: argparse.Namespace, cache_mb: int, newcomers: int = 0,
    characters: int = 1, flood: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """N worker processes on `target`, started together; their figures combined."""
    start_at = time.time() + 3.0 + processes  # room for every process to open the store
    command = [sys.executable, "-m", "bench.scale", "--worker", "--target", target,
               "--people", str(args.people), "--dim", str(args.dim)]  # fmt: skip
    procs = []
    for k in range(processes):
        own = ["--index", str(k), "--count", str(processes), "--cache-mb", str(cache_mb),
               "--start-at", repr(start_at), "--newcomers", str(newcomers),
               "--characters", str(characters), "--flood" if flood else "--no-flood"]  # fmt: skip
        procs.append(subprocess.Popen([*command, *own], stdout=subprocess.PIPE, text=True))
    outs = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"bench.scale: a worker failed (exit {proc.returncode})")
        outs.append(json.loads(out))
    cold = [t for o in outs for t in o["cold"]]
    warm = [t for o in outs for t in o["warm"]]
    attacks = [t for o in outs for t in o["attacks"]]
    floods = [t for o in outs for t in o["floods"]]
    wall = max(o["finished"] for o in outs) - start_at
    first = outs[0]
    return {
        "processes": processes, "cache_mb": cache_mb, "turns": len(cold) + len(warm),
        "characters": characters,
        "p50_ms": _percentile(cold + warm, 50), "p95_ms": _percentile(cold + warm, 95),
        "cold_p50_ms": _percentile(cold, 50), "cold_p95_ms": _percentile(cold, 95),
        "warm_p50_ms": _percentile(warm, 50), "warm_p95_ms": _percentile(warm, 95),
        "throughput": (len(cold) + len(warm)) / wall, "wall_s": wall,
        "people_per_process": first["people"],
        "rss_mb": first["VmRSS"] / 1024, "peak_rss_mb": first["VmHWM"] / 1024,
        "rss_before_mb": first["rss_before_kb"] / 1024,
        "cache_mb_held": first["cache_bytes"] / 2**20, "cache_entries": first["cache_entries"],
        "evictions": first["evictions"], "newcomers": newcomers,
        "newcomer_turns": len(attacks), "newcomer_p50_ms": _percentile(attacks, 50),
        "newcomer_p95_ms": _percentile(attacks, 95),
        "stall_ms": max(o["stall"] for o in outs) * 1000, "flood": flood,
        "flood_answered": len(floods), "flood_refused": sum(o["refused"] for o in outs),
        "flood_p50_ms": _percentile(floods, 50), "flood_p95_ms": _percentile(floods, 95),
        "size_mb": size_mb(target),
    }  # fmt: skip


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="bench.scale", description=__doc__.split("\n")[0])
    parser.add_argument("--target", action="append", default=None,
                        help="sqlite (the cached build, copied), a SQLite path, postgres (a "
                        "throwaway server) or a postgresql:// URL; repeat for several (env "
                        "BENCH_SCALE_TARGETS, comma-separated: sqlite,postgres)")  # fmt: skip
    parser.add_argument("--processes", default=env("BENCH_SCALE_PROCESSES", ""),
                        help="process counts, comma-separated (default: 1 for SQLite, "
                        "1,2,4 for PostgreSQL)")  # fmt: skip
    parser.add_argument(
        "--cache-mb",
        default=env("BENCH_SCALE_CACHE_MB", "1024"),
        help="cache bounds ([limits] cache_mb) to compare, comma-separated",
    )
    parser.add_argument("--people", type=int, default=int(env("BENCH_SCALE_PEOPLE", "2000")))
    parser.add_argument("--per-person", type=int,
                        default=int(env("BENCH_SCALE_PER_PERSON", "500")))  # fmt: skip
    parser.add_argument("--dim", type=int, default=int(env("BENCH_SCALE_DIM", "768")))
    parser.add_argument("--newcomers", type=int,
                        default=int(env("BENCH_SCALE_NEWCOMERS", str(NEWCOMERS))),
                        help="people with no memory sending ATTACK in the attack run "
                        "(0: no attack run)")  # fmt: skip
    parser.add_argument("--characters", default=env("BENCH_SCALE_CHARACTERS", "1"),
                        help="numbers of characters to compare, comma-separated, on SQLite "
                        "(default 1: the plain run; any other: scale-characters.*)")  # fmt: skip
    parser.add_argument("--flood", action=argparse.BooleanOptionalAction,
                        default=env("BENCH_SCALE_FLOOD", "1") != "0",
                        help="run each target's first configuration again while one person "
                        "floods (env BENCH_SCALE_FLOOD=0: not)")  # fmt: skip
    parser.add_argument("--name", default=env("BENCH_SCALE_NAME", "scale"),
                        help="the results' file name in bench/results/ (default scale: "
                        "scale.md, .json, .png)")  # fmt: skip
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for name in ("--index", "--count"):
        parser.add_argument(name, type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.worker:
        [target] = args.target
        figures = asyncio.run(worker(target, args.index, args.count, args.people, args.dim,
                                     int(args.cache_mb), args.start_at,
                                     args.newcomers, int(args.characters),
                                     args.flood))  # fmt: skip
        print(json.dumps(figures))
        return
    targets = args.target or os.environ.get("BENCH_SCALE_TARGETS", "sqlite,postgres").split(",")
    if _ints(args.characters) != [1]:
        run_characters(targets, args)
        return
    rows: list[dict[str, Any]] = []
    idle: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    CACHE.mkdir(parents=True, exist_ok=True)
    for target in targets:
        postgres = target == "postgres" or target.startswith(_URLS)
        counts = _ints(args.processes) or ([1, 2, 4] if postgres else [1])
        if postgres:
            with contextlib.ExitStack() as stack:
                url = target if target != "postgres" else stack.enter_context(pg.server()).uri
                run_postgres(url, target != "postgres", counts, args, rows, idle, notes)
            continue
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            built = (cached_build(args.people, args.per_person, args.dim)
                     if target == "sqlite" else Path(target))  # fmt: skip
            where = str(Path(tmp) / "run.sqlite3")
            idle["SQLite"] = asyncio.run(idle_pass(built_copy(built, where), args.dim))
            for processes in counts:
                for cache_mb in _ints(args.cache_mb):
                    built_copy(built, where)  # every configuration from the same file
                    print(f"SQLite, {processes} process(es), cache {cache_mb} MB ...",
                          file=sys.stderr)  # fmt: skip
                    rows.append(
                        {"target": "SQLite", **run_config(where, processes, args, cache_mb)}
                    )
            if args.newcomers:
                built_copy(built, where)
                print(f"SQLite, {args.newcomers} newcomers ...", file=sys.stderr)
                rows.append({"target": "SQLite", **run_config(
                    where, counts[0], args, _ints(args.cache_mb)[0], args.newcomers
                )})  # fmt: skip
            if args.flood:
                built_copy(built, where)
                print("SQLite, one person's flood ...", file=sys.stderr)
                rows.append({"target": "SQLite", **run_config(
                    where, counts[0], args, _ints(args.cache_mb)[0], flood=True
                )})  # fmt: skip
    from bench.scale.report import report

    report(rows, idle, args, notes)


_URLS = ("postgresql://", "postgres://")


def run_characters(targets: list[str], args: argparse.Namespace) -> None:
    """Each count of characters on its own build (SQLite), the same people and memories."""
    if targets != ["sqlite"]:
        raise SystemExit("bench.scale --characters runs on SQLite: BENCH_SCALE_TARGETS=sqlite")
    rows: list[dict[str, Any]] = []
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        where = str(Path(tmp) / "run.sqlite3")
        for characters in _ints(args.characters):
            built = cached_build(args.people, args.per_person, args.dim, characters)
            for processes in _ints(args.processes) or [1]:
                for cache_mb in _ints(args.cache_mb):
                    built_copy(built, where)
                    print(f"SQLite, {characters} character(s), {processes} process(es), "
                          f"cache {cache_mb} MB ...", file=sys.stderr)  # fmt: skip
                    rows.append({"target": "SQLite", **run_config(
                        where, processes, args, cache_mb, characters=characters
                    )})  # fmt: skip
    from bench.scale.characters import report

    report(rows, args)


def run_postgres(
    url: str, given: bool, counts: list[int], args: argparse.Namespace,
    rows: list[dict[str, Any]], idle: dict[str, dict[str, float]], notes: list[str],
) -> None:  # fmt: skip
    """A given URL is run as it is (filled first when it holds no memory); on the throwaway
    server, the copy of the SQLite build is made once into a base database and every
    configuration runs on a fresh copy of it (CREATE DATABASE ... TEMPLATE)."""
    label = "PostgreSQL"
    base = url if given else asyncio.run(pg.recreate(url, pg.BASE))
    if not given or asyncio.run(_empty(base)):
        built = cached_build(args.people, args.per_person, args.dim)
        print(f"filling PostgreSQL from {built.name} ...", file=sys.stderr)
        filled = asyncio.run(pg.fill(base, built))
        notes.append(
            f"PostgreSQL filled from the SQLite build by COPY in {filled['seconds']:,.0f} s "
            f"({', '.join(f'{t} {n:,}' for t, n in filled['rows'].items())} rows)."
        )
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            lite = built_copy(built, str(Path(tmp) / "check.sqlite3"))
            sample = [1 + (k * 997) % args.people for k in range(CHECKED)]
            checked = asyncio.run(pg.same_recall(lite, base, sample, CHECK_TEXT, MODEL))
        notes.append(
            f"Consistency: {checked} people recall the same memories (keyword recall "
            "and the vectors' content hashes) on SQLite and PostgreSQL."
        )
    if not given:
        copy = "echo_scale_run"
        fresh = lambda: asyncio.run(pg.recreate(url, copy, pg.BASE))  # noqa: E731
        idle[label] = asyncio.run(idle_pass(fresh(), args.dim))
    else:
        idle[label] = asyncio.run(idle_pass(base, args.dim))
    for processes in counts:
        for cache_mb in _ints(args.cache_mb):
            where = fresh() if not given else base
            print(f"{label}, {processes} process(es), cache {cache_mb} MB ...", file=sys.stderr)
            rows.append({"target": label, **run_config(where, processes, args, cache_mb)})
    if args.newcomers:
        where = fresh() if not given else base
        print(f"{label}, {args.newcomers} newcomers ...", file=sys.stderr)
        rows.append({"target": label, **run_config(
            where, counts[0], args, _ints(args.cache_mb)[0], args.newcomers
        )})  # fmt: skip
    if args.flood:
        where = fresh() if not given else base
        print(f"{label}, one person's flood ...", file=sys.stderr)
        rows.append({"target": label, **run_config(
            where, counts[0], args, _ints(args.cache_mb)[0], flood=True
        )})  # fmt: skip


async def _empty(target: str) -> bool:
    async with await open_store(target) as store:
        return await _count(store) == 0


def size_mb(target: str) -> float:
    """The database's size on disk (MB): a SQLite file with its WAL, a PostgreSQL database."""
    if target.startswith(_URLS):
        return asyncio.run(pg.size(target)) / 2**20
    files = [Path(target), Path(f"{target}-wal")]
    return sum(f.stat().st_size for f in files if f.exists()) / 2**20


def built_copy(built: Path, where: str) -> str:
    """A fresh copy of the build at `where` (a run writes its turns into it)."""
    shutil.copyfile(built, where)
    return where


if __name__ == "__main__":
    main()
