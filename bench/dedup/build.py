"""Dedup index builds, side by side: the index of objects per memory this work replaced (built
in a thread, its code taken from git at OLD), the numpy index built in this process, and the
same with its features computed in another process (`IndexBuilder`). For each: the build's
wall time, the Python objects the collector tracks afterwards (what a full collection walks),
the median decision time, and every decision checked identical to the old index's.
Run: .venv/bin/python -m bench.dedup.build [N]
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.dedup.cost import _candidates, _texts
from memory.model import Kind, Memory, Scope
from memory.write.dedup_index import Listed
from memory.write.dedup_pool import IndexBuilder, build_in_thread

RESULTS = Path(__file__).resolve().parent.parent / "results"
ROOT = Path(__file__).resolve().parents[2]
# The last commit with the index of objects per memory.
OLD = "ef0dfba"


def _old_module() -> ModuleType:
    source = subprocess.run(["git", "show", f"{OLD}:memory/write/dedup_index.py"], cwd=ROOT,
                            check=True, capture_output=True).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "old_dedup_index.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("old_dedup_index", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


async def _measured(build: Any, candidates: list[str]) -> tuple[float, int, float, Any]:
    gc.collect()
    tracked = len(gc.get_objects()) + gc.get_freeze_count()
    started = time.perf_counter()
    index = await build()
    wall = time.perf_counter() - started
    gc.collect()
    objects = len(gc.get_objects()) + gc.get_freeze_count() - tracked
    times = []
    for candidate in candidates:
        started = time.perf_counter()
        index.decide(candidate)
        times.append(time.perf_counter() - started)
    return wall, objects, statistics.median(times), index


async def _main(n: int) -> None:
    texts = _texts()[:n]
    memories = [Memory(id=i + 1, user_id=1, text=t, kind=Kind.FACT, scope=Scope.GLOBAL)
                for i, t in enumerate(texts)]  # fmt: skip
    candidates = _candidates(texts)
    old = _old_module()
    builder = IndexBuilder()
    try:
        await builder.build(Listed(memories[:3_000]))  # the pool started: not part of a build
        # Each as the product runs it: in a worker thread, or in the builder's process.
        runs = {
            f"objects per memory, in a thread (the code at {OLD})":
                lambda: asyncio.to_thread(old.build_index, memories),
            "numpy arrays, features in a thread":
                lambda: asyncio.to_thread(build_in_thread, Listed(memories)),
            "numpy arrays, features in another process (IndexBuilder)":
                lambda: builder.build(Listed(memories)),
        }  # fmt: skip
        results = {name: await _measured(build, candidates) for name, build in runs.items()}
    finally:
        await builder.close()
    reference = next(iter(results.values()))[3]
    rows = []
    for name, (wall, objects, decide, index) in results.items():
        same = all(index.decide(c) == reference.decide(c) for c in candidates)
        rows.append(f"| {name} | {wall:.2f} | {objects:,} | {decide * 1000:.2f} |"
                    f" {'yes' if same else 'NO'} |")  # fmt: skip
    lines = [
        f"# Dedup index builds at {n:,} memories",
        "",
        f"`.venv/bin/python -m bench.dedup.build {n}`, one run. Objects: how many more the"
        " garbage collector tracks once the index is built, frozen ones included (a full"
        " collection walks those not frozen);"
        f" the {n:,} memories given to each build are not counted.",
        "",
        "| build | wall (s) | objects tracked | decision (ms, median) | decisions as the old"
        " index |",
        "|---|---|---|---|---|",
        *rows,
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dedup_build.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def main() -> None:
    asyncio.run(_main(int(sys.argv[1]) if len(sys.argv) > 1 else 30_000))


if __name__ == "__main__":
    sys.exit(main())
