"""The store functions several processes share: claiming outbox rows under leases, and each
person's generation in the database. Two `Store`s on one database (an SQLite file, or a
PostgreSQL database under `make test-pg`) stand for two processes."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memory.model import Exchange
from memory.store import Store, Tx, open_store
from memory.store.migrations import LATEST, MIGRATIONS
from memory.store.tables import counters, outbox

MAX = 5
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
async def two(shared_database: Path | str) -> AsyncIterator[tuple[Store, Store]]:
    target = shared_database
    async with await open_store(target) as a, await open_store(target) as b:
        yield a, b


def _claimable(rows: list[dict[str, Any]], now: float) -> int | None:
    """The row a claim must take, decided by brute force from the rule in its docstring."""
    pending = [r for r in rows if r["status"] == "pending"]
    live = [r for r in pending if r["lease_until"] is not None and r["lease_until"] > now]
    busy_users, busy_stories = {r["user_id"] for r in live}, {r["story_id"] for r in live}
    due = [r for r in pending if r["next_attempt_at"] <= now]
    keyed = []
    for r in due:
        mine = sorted((o["next_attempt_at"], o["id"]) for o in due if o["user_id"] == r["user_id"])
        place = mine.index((r["next_attempt_at"], r["id"])) + 1
        if r in live or r["user_id"] in busy_users or r["story_id"] in busy_stories:
            continue
        keyed.append(((place, mine[0][0], r["user_id"], r["next_attempt_at"], r["id"]), r["id"]))
    return min(keyed)[1] if keyed else None


async def claim(store: Store, holder: str, now: float, lease: float = 10.0) -> outbox.Lease | None:
    return await store.transact(
        lambda tx: outbox.claim(tx, holder=holder, now=now, lease=lease, max_attempts=MAX)
    )


async def enqueue(store: Store, e: Exchange, now: float, backlog: int = 20) -> int:
    return await store.transact(lambda tx: outbox.enqueue(tx, e, now=now, backlog=backlog))


@pytest.mark.parametrize("seed", range(4))
async def test_a_claim_takes_the_row_the_rule_says_from_either_process(
    two: tuple[Store, Store], seed: int
) -> None:
    """Random enqueues, claims, completions, failures, releases and clock moves from two
    processes: every claim takes exactly the row brute force picks, or none when it does."""
    rng = random.Random(seed)
    now = 100.0
    held: list[outbox.Lease] = []
    for step in range(120):
        store = rng.choice(two)
        roll = rng.random()
        if roll < 0.3:
            e = Exchange(f"x{step}", rng.randint(1, 4), rng.randint(10, 13), "111", "P", "m", "r")
            await enqueue(store, e, now)
        elif roll < 0.6:
            rows = [dict(r) for r in await store.fetchall("SELECT * FROM outbox")]
            expected = _claimable(rows, now)
            lease = await claim(store, f"h{step}", now, rng.uniform(1, 20))
            assert (lease.row.id if lease else None) == expected, step
            if lease is not None:
                held.append(lease)
        elif roll < 0.8 and held:
            lease = held.pop(rng.randrange(len(held)))

            async def finish(tx: Tx, lease: outbox.Lease = lease, now: float = now) -> None:
                if not await outbox.holds(tx, lease):
                    return
                choice = rng.choice(["done", "failed", "released"])
                if choice == "done":
                    await outbox.mark_done(tx, lease.row.id)
                elif choice == "failed":
                    await outbox.mark_failed(tx, lease.row.id, error="e", next_attempt_at=now + 3)
                else:
                    await outbox.release(tx, lease)

            await store.transact(finish)
        else:
            now += rng.uniform(0, 8)


async def test_a_lease_expiry_is_an_attempt_and_the_last_one_drops_the_row(
    two: tuple[Store, Store],
) -> None:
    a, b = two
    e = Exchange("x1", 1, 10, "111", "P", "m", "r")
    await enqueue(a, e, 0.0)
    now = 1.0
    for attempt in range(1, MAX + 1):  # the last holder makes the last attempt
        lease = await claim((a, b)[attempt % 2], f"h{now}", now)
        assert lease is not None and lease.row.attempts == attempt - 1
        assert await claim(b, "x", now + 9) is None
        now += 10.0
    assert await claim(a, "last", now) is None
    row = await a.fetchone("SELECT status, attempts, leased_by FROM outbox")
    assert row is not None and tuple(row) == ("dropped", MAX, None)
    named = await counters.read_all(b)
    assert named["reflection_dropped_after_retries:LeaseExpired"] == 1
    assert named["reflection_failed:LeaseExpired"] == MAX


async def test_the_backlog_never_drops_a_row_some_process_holds(two: tuple[Store, Store]) -> None:
    a, b = two
    for n in range(3):
        e = Exchange(f"x{n}", 1, 10 + n, "111", "P", "m", "r")
        await enqueue(a, e, float(n))
    await a.transact(lambda tx: tx.execute("UPDATE outbox SET next_attempt_at = 9 WHERE id = 1"))
    lease = await claim(b, "h", 5.0, 100.0)
    assert lease is not None and lease.row.exchange.exchange_id == "x1"
    e = Exchange("x9", 1, 10, "111", "P", "m", "r")
    assert await enqueue(a, e, 6.0, backlog=1) == 1
    rows = await a.fetchall("SELECT exchange_id, status FROM outbox ORDER BY id")
    assert [tuple(r) for r in rows] == [
        ("x0", "pending"), ("x1", "pending"), ("x2", "dropped"), ("x9", "pending")
    ]  # fmt: skip


async def _touch(store: Store, ids: list[int] | None, *, vectors_only: bool = False) -> None:
    async def run(tx: Tx) -> None:
        tx.touch(7, ids, vectors_only=vectors_only)

    await store.transact(run)


async def test_each_process_sees_the_others_generations_and_no_ids_of_its_commits(
    two: tuple[Store, Store],
) -> None:
    a, b = two
    await _touch(a, [1])
    start = await a.sync_generation(7)
    await _touch(a, [2])
    assert a.changed_since(7, start) == {2}  # its own commit: the ids are known
    assert await b.sync_generation(7) == start + 1
    await _touch(b, [3])
    await _touch(a, [4])
    assert a.generation(7) == start + 3  # learned from its own commit's RETURNING
    assert a.changed_since(7, start) is None  # B's commit between: unknown ids
    assert a.changed_since(7, start + 2) == {4}
    before = await a.sync_generation(7)
    await _touch(b, [5], vectors_only=True)  # the indexer in the other process
    await a.sync_generation(7)
    assert a.changed_since(7, before) == frozenset()  # no memory row changed: pools stay
    assert a.embedded_since(7, before) is None  # vectors did: matrices compare hashes


async def test_a_database_from_before_the_leases_is_migrated_with_its_pending_rows(
    database: Path | str,
) -> None:
    path = database
    async with await open_store(path, migrate_to=16) as old:
        await old.transact(lambda tx: tx.execute(
            "INSERT INTO outbox (exchange_id, user_id, story_id, origin, user_name, user_message,"
            " reply, next_attempt_at, created_at) VALUES ('x1', 1, 10, '111', 'P', 'm', 'r', 0, 0)"
        ))  # fmt: skip
        await _touch(old, [1])
        assert old.generation(7) == 1  # counted in this process only
    async with await open_store(path) as new:
        assert await new.schema_version() == LATEST
        lease = await claim(new, "h", 1.0)
        assert lease is not None and lease.row.exchange.exchange_id == "x1"
        assert await new.sync_generation(7) == 0
        await _touch(new, [1])
        assert await new.sync_generation(7) == 1


OPEN_AND_CLOSE = (
    "import asyncio, sys\n"
    "from memory.store import open_store\n"
    "async def main():\n"
    "    async with await open_store(sys.argv[1]) as store:\n"
    "        print(await store.schema_version())\n"
    "asyncio.run(main())\n"
)


async def _migrated_once(target: Path | str) -> None:
    async with await open_store(target) as store:
        rows = await store.fetchall("SELECT version FROM schema_migrations ORDER BY version")
        assert [int(r[0]) for r in rows] == [version for version, _ in MIGRATIONS]


async def test_several_stores_opening_a_new_database_at_once_migrate_it_once(
    database: Path | str,
) -> None:
    """Four pools (or SQLite connections) open a database nobody migrated, at the same moment:
    each opens it, one migration of each number is applied, none fails half way."""
    opened = await asyncio.gather(*(open_store(database) for _ in range(4)), return_exceptions=True)
    stores = [s for s in opened if isinstance(s, Store)]
    try:
        assert len(stores) == 4, [repr(e) for e in opened if not isinstance(e, Store)]
        assert [await s.schema_version() for s in stores] == [LATEST] * 4
    finally:
        for s in stores:
            await s.close()
    await _migrated_once(database)


async def test_processes_starting_at_once_on_a_new_database_migrate_it_once(
    database: Path | str,
) -> None:
    """Four real processes start on one new database at the same moment (several shards
    started together): all four open it, and every migration is applied once."""
    pipe = asyncio.subprocess.PIPE
    argv = (sys.executable, "-c", OPEN_AND_CLOSE, str(database))
    children = [
        await asyncio.create_subprocess_exec(*argv, cwd=ROOT, stdout=pipe, stderr=pipe)
        for _ in range(4)
    ]
    results = [await asyncio.wait_for(c.communicate(), 120) for c in children]
    for child, (out, err) in zip(children, results, strict=True):
        assert child.returncode == 0, err.decode()[-2000:]
        assert out.decode().split() == [str(LATEST)]
    await _migrated_once(database)
