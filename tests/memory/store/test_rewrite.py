"""An erasure on SQLite leaves no copy in the file, even the ones page balancing left behind
(memory.store.db.Rewrite): secure_delete zeroes a row where it lies, but a row SQLite moved to
another page while it lived left its old copy in the unused space of the page it left."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path

import pytest

from memory.manage import forgetting
from memory.store import Rewrite, Store, Tx, db
from tests.fakes import canary

pytestmark = pytest.mark.sqlite_only("reads the SQLite file's bytes")

NOW = 1_700_000_000.0
PEOPLE = 1
MEMORIES = 1_200
ROUNDS = 1


def _code(i: int) -> str:
    return f"M{i % 1000:03d}CANARY{i:04d}"


async def _memories_moved_about(store: Store) -> list[int]:
    """MEMORIES memories whose texts then grow and shrink in place, as edits and merges make
    them: SQLite moves rows between pages to fit them (seeded: the same moves every run)."""
    rng = random.Random(1)

    async def write(tx: Tx) -> list[int]:
        ids = []
        for i in range(MEMORIES):
            ids.append(
                await tx.execute(
                    "INSERT INTO memories (user_id, scope, origin, kind, text, confidence,"
                    " created_at, updated_at, content_hash) VALUES (1, 'global', '42', 'fact',"
                    " ?, 0.9, ?, ?, ?)",
                    (f"Code {_code(i)} {'x' * rng.randint(10, 300)}", NOW, NOW, f"{i:064d}"),
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
    """Half of 1,200 memories forgotten at once: none of their words is left in the file (nor
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
    # 600 erasures at once: the first rewrite, then one for all that asked while it ran.
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

    async def two_seconds(writes: asyncio.Lock) -> bool:
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
