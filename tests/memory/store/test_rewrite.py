"""An erasure on SQLite leaves no copy in the file, even the ones page balancing left behind
(memory.store.db.Rewrite): secure_delete zeroes a row where it lies, but a row SQLite moved to
another page while it lived left its old copy in the unused space of the page it left."""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from memory.manage import forgetting
from memory.store import Rewrite, Store, Tx, db, open_store
from memory.store.queries import erasure
from tests.fakes import canary

pytestmark = pytest.mark.sqlite_only("reads the SQLite file's bytes")

NOW = 1_700_000_000.0
PEOPLE = 1
MEMORIES = 600
ROUNDS = 1

T = TypeVar("T")


def _code(i: int) -> str:
    return f"M{i % 1000:03d}CANARY{i:04d}"


async def _memories_moved_about(store: Store) -> list[int]:
    """MEMORIES memories (the even ones person 1's, the odd ones person 2's) whose texts then
    grow and shrink in place, as edits and merges make them: SQLite moves rows between pages to
    fit them (seeded: the same moves every run)."""
    rng = random.Random(1)

    async def write(tx: Tx) -> list[int]:
        ids = []
        for i in range(MEMORIES):
            text = f"Code {_code(i)} {'x' * rng.randint(10, 300)}"
            ids.append(
                await tx.execute(
                    "INSERT INTO memories (user_id, scope, origin, kind, text, confidence,"
                    " created_at, updated_at, content_hash) VALUES (?, 'global', '42', 'fact',"
                    " ?, 0.9, ?, ?, ?)",
                    (1 + i % 2, text, NOW, NOW, f"{i:064d}"),
                )
            )
        return ids

    ids = await store.transact(write)
    for _ in range(ROUNDS):

        async def grow(tx: Tx) -> None:
            for _ in range(MEMORIES):
                i = rng.randrange(MEMORIES)
                await tx.execute(
                    "UPDATE memories SET text = ? WHERE id = ?",
                    (f"Code {_code(i)} {'y' * rng.randint(10, 600)}", ids[i]),
                )

        await store.transact(grow)
    return ids


async def _left(store: Store, folder: Path, codes: list[str]) -> list[str]:
    found = await canary.stored_each(store, folder, codes)
    return [code for code in codes if found[code]]


async def test_forgotten_memories_leave_no_copy_anywhere_in_the_file(
    store: Store, tmp_path: Path
) -> None:
    """Half of 600 memories forgotten at once: none of their words is left in the file (nor
    its WAL), the other half's all are, and the erasures shared a few rewrites of the file."""
    ids = await _memories_moved_about(store)
    before = store.rewrites
    done = await asyncio.gather(
        *(forgetting.forget_memory(store, 1, ids[i]) for i in range(0, MEMORIES, 2))
    )
    # Complete at once unless a read of another erasure held an old snapshot as it settled:
    # then the job completes it (its next run).
    assert await forgetting.settle_pending(store) == 0
    assert sum(f.complete for f in done) > 0
    gone = [_code(i) for i in range(0, MEMORIES, 2)]
    kept = [_code(i) for i in range(1, MEMORIES, 2)]
    assert await _left(store, tmp_path, gone) == []
    assert await _left(store, tmp_path, kept) == kept
    # 300 erasures at once: the first rewrite, then one for all that asked while it ran.
    assert 1 <= store.rewrites - before <= 3


async def test_a_large_file_waits_for_its_rewrite_and_its_erasures_say_so(
    store: Store, tmp_path: Path
) -> None:
    """Past rewrite_mb the erasure is not complete at once: secure_delete left copies page
    balancing made (the reason for the rewrite), the erasures stay pending, and the erasures
    job rewrites the file at most once every rewrite_hours, on its clock."""
    clock = [0.0]
    store.monotonic = lambda: clock[0]
    store.rewrite = Rewrite(inline_mb=0, every_hours=6)
    # The job rewrote the file a moment ago: the next rewrite is 6 hours later.
    assert await store.checkpoint(scheduled=True)
    rewrites = store.rewrites
    ids = await _memories_moved_about(store)

    done = await asyncio.gather(
        *(forgetting.forget_memory(store, 1, ids[i]) for i in range(0, MEMORIES, 2))
    )
    gone = [_code(i) for i in range(0, MEMORIES, 2)]
    assert not any(f.complete for f in done)
    left = await _left(store, tmp_path, gone)
    assert left, "SQLite left no copy: this test no longer shows why the file is rewritten"
    assert store.rewrites == rewrites
    clock[0] += 5 * 3600
    assert await forgetting.settle_pending(store) == len(done)  # not yet: still pending
    assert await _left(store, tmp_path, gone) == left

    clock[0] += 3600
    assert await forgetting.settle_pending(store) == 0
    assert store.rewrites == rewrites + 1
    assert await _left(store, tmp_path, gone) == []
    assert await forgetting.settle_pending(store) == 0  # nothing pending: no rewrite
    assert store.rewrites == rewrites + 1


async def test_a_reader_on_an_old_snapshot_delays_the_truncation_not_another_rewrite(
    store: Store, tmp_path: Path
) -> None:
    """A reader holding an old snapshot (a backup) keeps the WAL's old pages: the erasure is
    pending; the job's retries do not rewrite the file again (each would add its whole size to
    the WAL), and the erasure completes once the reader lets go."""
    ids = await _memories_moved_about(store)
    backup = sqlite3.connect(tmp_path / "echo.sqlite3", isolation_level=None)
    backup.execute("BEGIN")
    backup.execute("SELECT count(*) FROM memories").fetchall()
    try:
        forgotten = await forgetting.forget_memory(store, 1, ids[0])
        assert not forgotten.complete
        rewrites = store.rewrites
        for _ in range(3):
            assert await forgetting.settle_pending(store) == 1
        assert store.rewrites == rewrites
    finally:
        backup.execute("COMMIT")
        backup.close()
    assert await forgetting.settle_pending(store) == 0
    assert store.rewrites == rewrites
    assert await _left(store, tmp_path, [_code(0)]) == []


async def test_a_felt_rewrite_is_spaced_and_the_erasures_between_wait_for_the_job(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose rewrite is felt (over REWRITE_FELT_MB: here every file) is not rewritten
    again within REWRITE_SPACING times the last rewrite's length: a second erasure 10 s after
    one that took 2 s is pending, and the erasures job completes it once 60 s have passed."""
    monkeypatch.setattr(db, "REWRITE_FELT_MB", 0.0)
    clock = [0.0]
    store.monotonic = lambda: clock[0]
    vacuum = store.backend.vacuum

    async def two_seconds(writes: asyncio.Lock) -> str | None:
        clock[0] += 2.0
        return await vacuum(writes)

    monkeypatch.setattr(store.backend, "vacuum", two_seconds)
    ids = await _memories_moved_about(store)

    assert (await forgetting.forget_memory(store, 1, ids[0])).complete
    rewrites = store.rewrites
    clock[0] += 10
    assert not (await forgetting.forget_memory(store, 1, ids[2])).complete
    assert store.rewrites == rewrites
    clock[0] += 20  # the job's next run: 30 s after the last rewrite
    assert await forgetting.settle_pending(store) == 1
    clock[0] += 30  # 60 s after it: 30 times its 2 s
    assert await forgetting.settle_pending(store) == 0
    assert store.rewrites == rewrites + 1
    assert await _left(store, tmp_path, [_code(0), _code(2)]) == []


async def test_the_job_rewrites_for_an_erasure_another_process_left_pending(
    store: Store, tmp_path: Path
) -> None:
    """Two processes on one large file: the one that forgot leaves its erasures pending; the
    other's erasures job, which rewrote the file before them, rewrites it again for them
    rather than calling them complete with their copies still in the file."""
    clock = [0.0]
    store.monotonic = lambda: clock[0]
    store.rewrite = Rewrite(inline_mb=0, every_hours=6)
    assert await store.checkpoint(scheduled=True)  # this process's job, a moment ago
    rewrites = store.rewrites
    async with await open_store(tmp_path / "echo.sqlite3") as other:
        other.rewrite = Rewrite(inline_mb=0, every_hours=6)
        ids = await _memories_moved_about(other)
        done = await asyncio.gather(
            *(forgetting.forget_memory(other, 1, ids[i]) for i in range(0, MEMORIES, 2))
        )
    gone = [_code(i) for i in range(0, MEMORIES, 2)]
    assert not any(f.complete for f in done)
    assert await _left(store, tmp_path, gone), "SQLite left no copy: the test shows nothing"

    clock[0] += 6 * 3600
    assert await forgetting.settle_pending(store) == 0
    assert await _left(store, tmp_path, gone) == []
    assert store.rewrites == rewrites + 1


async def test_an_erasure_whose_caller_was_cancelled_is_rewritten_before_it_completes(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forget cancelled once its transaction began commits all the same, but never asks
    for a checkpoint: the erasures job finds it pending and rewrites the file before it
    records it complete, though no erasure asked since the job's last rewrite."""
    assert await store.checkpoint(scheduled=True)  # the job's run a moment ago
    rewrites = store.rewrites
    await _memories_moved_about(store)
    began = asyncio.Event()
    transact = store.transact

    def began_then(fn: Callable[[Tx], Awaitable[T]]) -> Awaitable[T]:
        began.set()
        return transact(fn)

    monkeypatch.setattr(store, "transact", began_then)
    forget = asyncio.ensure_future(forgetting.forget_person(store, 1, engine=None))
    await began.wait()
    forget.cancel()  # the person's request timed out: the erasure's transaction runs on
    with pytest.raises(asyncio.CancelledError):
        await forget
    monkeypatch.undo()
    await store.check_writable()  # after the erasure's transaction (the write lock's order)
    assert await erasure.pending(store)

    assert await forgetting.settle_pending(store) == 0
    gone = [_code(i) for i in range(0, MEMORIES, 2)]
    assert await _left(store, tmp_path, gone) == []
    assert store.rewrites == rewrites + 1


async def test_another_process_writes_and_reads_at_once_after_a_rewrite(
    store: Store, tmp_path: Path
) -> None:
    """Process A forgets a memory and rewrites the file (its schema's pages move); process B,
    whose connections prepared their statements before, inserts, updates and reads at once:
    each works on the rewritten file (a VACUUM from a second connection once left the next
    INSERT failing with "no such table")."""
    async with await open_store(tmp_path / "echo.sqlite3") as other:
        ids = await _memories_moved_about(other)
        for i in range(0, 20, 2):
            assert await other.fetchone("SELECT text FROM memories WHERE id = ?", (ids[i],))
            rewrites = store.rewrites
            assert (await forgetting.forget_memory(store, 1, ids[i])).complete
            assert store.rewrites == rewrites + 1

            async def write(tx: Tx, i: int = i) -> int:
                await tx.execute("UPDATE memories SET text = 'moved' WHERE id = ?", (ids[i + 1],))
                return await tx.execute(
                    "INSERT INTO memories (user_id, scope, origin, kind, text, confidence,"
                    " created_at, updated_at, content_hash) VALUES (2, 'global', '42', 'fact',"
                    " 'new', 0.9, ?, ?, ?)",
                    (NOW, NOW, f"new{i:061d}"),
                )

            new = await other.transact(write)
            assert await other.fetchone("SELECT text FROM memories WHERE id = ?", (ids[i],)) is None
            row = await other.fetchone("SELECT text FROM memories WHERE id = ?", (new,))
            assert row is not None and row[0] == "new"
        assert await _left(store, tmp_path, [_code(i) for i in range(0, 20, 2)]) == []


async def test_a_failing_rewrite_keeps_the_erasure_pending_and_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """While another process holds the write lock past the busy timeout, the job's rewrite
    fails: the erasure stays pending, the words stay readable to nobody but the file, and the
    operator gets one warning for the failure however often the job retries, then one line
    when a rewrite works again. Each try writes a copy of the file (a full disk refuses it):
    after a failure the next waits 60 s, then 120 s, doubling; the job's runs between try
    nothing."""
    path = tmp_path / "echo.sqlite3"
    clock = [0.0]
    async with await open_store(path, busy_timeout_ms=50) as store:
        store.monotonic = lambda: clock[0]
        store.rewrite = Rewrite(inline_mb=0, every_hours=6)
        ids = await _memories_moved_about(store)
        forgotten = await forgetting.forget_memory(store, 1, ids[0])
        assert not forgotten.complete
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        tried = []
        try:
            with caplog.at_level(logging.DEBUG, logger="memory.store"):
                for _ in range(8):  # the job every 30 s for 4 minutes: tries at 0, 60, 180 s
                    assert await forgetting.settle_pending(store) == 1
                    tried.append(sum("rewrite" in m for m in caplog.messages))
                    clock[0] += 30
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert tried == [1, 1, 2, 2, 2, 2, 3, 3]
        warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert [r.getMessage() for r in warned if "rewrite" in r.getMessage()] == [
            "rewrite after an erasure failed: database is locked (the erasures job retries;"
            " said again only if the reason changes)"
        ]
        assert not any(_code(0) in r.getMessage() for r in caplog.records)
        caplog.clear()
        clock[0] += 240  # past the third wait (240 s)
        with caplog.at_level(logging.INFO, logger="memory.store"):
            assert await forgetting.settle_pending(store) == 0
        assert "rewrite after an erasure works again (3 tries failed)" in caplog.messages
        assert await _left(store, tmp_path, [_code(0)]) == []
        assert await store.fetchone("SELECT 1 FROM memories WHERE id = ?", (ids[1],))
