"""A large dedup index is built in another process: everyone else's turns complete meanwhile,
the result decides the merge, a generation that moved during the build patches it or builds
it again, a failed process build falls back to a thread (logged without text, counted), and
closing the builder leaves no process behind.

The process runs a module-level function of this file held on a file gate (what the real
build would compute, once the gate opens): a process cannot be patched from here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from memory import manage
from memory.manage import privacy
from memory.store import Store
from memory.store.tables import memories
from memory.write import apply
from memory.write.dedup_features import Features, features
from memory.write.dedup_index import DedupIndex, Listed
from memory.write.dedup_pool import IndexBuilder
from tests.memory.test_off_loop import HEAVY, _crowd_served, _engine, _reflection

GATE_SECONDS = 20.0


def held_features(gate: str, texts: Sequence[str]) -> Features:
    """`features`, once the test opens the gate; notes the process it ran in."""
    Path(gate, f"entered-{os.getpid()}").touch()
    waited = time.monotonic() + GATE_SECONDS
    while not Path(gate, "open").exists():
        if time.monotonic() > waited:
            raise TimeoutError("the gate never opened")
        time.sleep(0.01)
    return features(texts)


def failing_features(texts: Sequence[str]) -> Features:
    raise ValueError(f"cannot read {texts[0]!r}")  # a memory's text in the message


def dying_features(texts: Sequence[str]) -> Features:
    os._exit(3)


async def _entered(gate: Path) -> list[int]:
    for _ in range(2_000):
        found = [int(p.name.split("-")[1]) for p in gate.glob("entered-*")]
        if found:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError("the build never reached the process")


@pytest.mark.parametrize("meanwhile", [None, "forget", "privacy"])
async def test_a_large_index_is_built_in_another_process_and_checked_against_the_store(
    store: Store, tmp_path: Path, meanwhile: str | None
) -> None:
    engine = await _engine(store)
    target = (await memories.list_for_user(store, HEAVY))[-1]
    held = functools.partial(held_features, str(tmp_path))
    builder = IndexBuilder(process_min=1, chunk=16, work=held)
    try:
        exchange, reflection = _reflection(target.text + " every week")  # a variant
        heavy = asyncio.ensure_future(apply.apply_reflection(
            store, exchange, reflection, character_name="Echo", now=99.0, builder=builder,
        ))  # fmt: skip
        pids = await _entered(tmp_path)
        await _crowd_served(engine, heavy)
        if meanwhile is not None:  # the write lock is free while the index builds
            await manage.forget(store, HEAVY, target.id)
        if meanwhile == "privacy":  # a change that names no memory: built again
            await privacy.choose(store, HEAVY, "everywhere", default="where_learned")
        assert not heavy.done()
        (tmp_path / "open").touch()
        [outcome] = (await heavy).outcomes
        assert os.getpid() not in pids and set(pids) <= set(builder.processes())
        assert builder.fallbacks == 0
        if meanwhile is None:  # the index built there decided the merge
            assert (outcome.action, outcome.memory_id) == ("merged", target.id)
            assert builder.in_process == 1
        else:  # patched (forget) or built again (privacy): the forgotten memory stays gone
            assert outcome.action == "created" and outcome.memory_id != target.id
            assert await memories.get(store, HEAVY, target.id) is None
            assert builder.in_process == (2 if meanwhile == "privacy" else 1)
    finally:
        (tmp_path / "open").touch()
        await builder.close()


@pytest.mark.parametrize("work", [failing_features, dying_features])
async def test_a_failed_process_build_falls_back_to_a_thread_logged_without_text(
    store: Store, caplog: pytest.LogCaptureFixture, work: object
) -> None:
    await _engine(store, latency=0.0)
    target = (await memories.list_for_user(store, HEAVY))[-1]
    builder = IndexBuilder(process_min=1, work=work)  # type: ignore[arg-type]
    try:
        exchange, reflection = _reflection(target.text + " every week")
        with caplog.at_level(logging.WARNING, logger="memory.write.dedup_pool"):
            report = await apply.apply_reflection(
                store, exchange, reflection, character_name="Echo", now=99.0, builder=builder
            )
        [outcome] = report.outcomes
        assert (outcome.action, outcome.memory_id) == ("merged", target.id)
        assert (builder.fallbacks, builder.in_process) == (1, 0)
        assert "build process failed" in caplog.text
        assert not any(t.text in caplog.text for t in await memories.list_for_user(store, HEAVY))
        # The next build gets a working process again (a dead one broke the pool).
        builder.work = features
        pool = Listed(await memories.list_for_user(store, HEAVY))
        rebuilt = await builder.build(pool)
        assert builder.in_process == 1 and len(rebuilt) == len(pool)
    finally:
        await builder.close()


async def test_closing_the_builder_leaves_no_process_and_later_builds_run_in_a_thread(
    store: Store,
) -> None:
    await _engine(store, latency=0.0)
    pool = await memories.list_for_user(store, HEAVY)
    builder = IndexBuilder(process_min=1, chunk=8)
    index = await builder.build(Listed(pool))
    pids = builder.processes()
    assert pids and os.getpid() not in pids
    await builder.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    again = await builder.build(Listed(pool))
    assert builder.in_process == 1 and builder.processes() == []
    for memory in pool[:5]:
        assert again.decide(memory.text) == index.decide(memory.text)
        assert index.decide(memory.text) == DedupIndex(pool).decide(memory.text)


async def test_a_build_in_flight_when_the_builder_closes_completes_in_a_thread(
    store: Store, tmp_path: Path
) -> None:
    await _engine(store, latency=0.0)
    pool = await memories.list_for_user(store, HEAVY)
    held = functools.partial(held_features, str(tmp_path))
    builder = IndexBuilder(process_min=1, chunk=8, work=held)
    building = asyncio.ensure_future(builder.build(Listed(pool)))
    pids = await _entered(tmp_path)
    closing = asyncio.ensure_future(builder.close())
    await asyncio.sleep(0.1)
    assert not closing.done()  # it waits for the chunk running, which is held
    (tmp_path / "open").touch()
    index = await building
    await closing
    assert len(index) == len(pool) and builder.in_process == 0 and builder.fallbacks == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


SCRIPT = """
import asyncio
from memory.model import Kind, Memory, Scope
from memory.write.dedup_index import Listed
from memory.write.dedup_pool import IndexBuilder

async def main():
    builder = IndexBuilder(process_min=1, chunk=4)
    memories = [Memory(id=i + 1, user_id=1, text=f"Plays chess on day {i}", kind=Kind.FACT,
                       scope=Scope.GLOBAL) for i in range(40)]
    index = await builder.build(Listed(memories))
    print(len(index), *builder.processes(), flush=True)

if __name__ == "__main__":
    asyncio.run(main())
"""


def test_a_program_that_ends_without_closing_its_builder_exits_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    script = tmp_path / "forgot_to_close.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    size, *pids = (int(x) for x in done.stdout.split())
    assert size == 40 and pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
