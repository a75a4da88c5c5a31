"""An erasure on PostgreSQL while another process writes what may copy the erased words: the
two transactions are not run one at a time there, as SQLite runs them. Run by `make test-pg`."""

from __future__ import annotations

import asyncio
import contextlib
from asyncio import Task
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest
from asyncpg.transaction import Transaction

from memory.context.budget import ContextPlan
from memory.context.builder import ContextBuilder, ContextConfig
from memory.context.prompt import Character
from memory.context.tokens import Estimator
from memory.manage import forgetting as manage_erasure
from memory.model import CondensedHistory
from memory.store import Store, Tx, open_store
from memory.store.tables import history, story_context
from tests.fakes import canary
from tests.pg.server import waiting_for_locks

USER, STORY = 1, 10
CANARY = "ZQXCANARY4242"
MODEL = "llama3"


async def _told(store: Store, source_id: str) -> tuple[int, CondensedHistory]:
    """Alice's message holding the canary, and a condensed history made of it."""

    async def said(tx: Tx) -> int | None:
        return await history.add_user_message(
            tx, source_id=source_id, story_id=STORY, user_id=USER, author_name="Alice",
            content=f"my locker code is {CANARY}", now=1.0,
        )  # fmt: skip

    message_id = await store.transact(said)
    assert message_id is not None
    return message_id, CondensedHistory(
        (f"Alice: my code is {CANARY}",), message_id, sources=(message_id,)
    )


@asynccontextmanager
async def _condensing_waits(
    url: str, writer: Store, condensed: CondensedHistory
) -> AsyncIterator[tuple[Transaction, Task[None], asyncpg.Connection]]:
    """Another process's turn (`writer`) writing `condensed`, held on the table by a session
    until the test commits that session's transaction; with a connection watching the locks."""
    holder = await asyncpg.connect(url)
    watcher = await asyncpg.connect(url)
    try:
        holding = holder.transaction()
        await holding.start()
        await holder.execute("LOCK TABLE story_context IN EXCLUSIVE MODE")
        condensing = asyncio.create_task(
            writer.transact(lambda tx: story_context.set_condensed(tx, STORY, condensed, now=2.0))
        )
        await waiting_for_locks(watcher, 1)
        yield holding, condensing, watcher
    finally:
        await holder.close()
        await watcher.close()


@pytest.mark.parametrize("erasing", ["forget", "prune"])
async def test_a_turn_condensing_in_another_process_during_an_erasure_keeps_nothing_of_it(
    store: Store, url: str, erasing: str
) -> None:
    """Another process's turn checked that the message is still stored, then waits to write
    the condensed history holding its sentence (a session holds the table) while the message
    is forgotten here, or pruned by the hourly retention rules (past `history_days`): once both
    finish, the condensed history does not hold it."""

    _, condensed = await _told(store, "discord:5")
    async with (
        await open_store(url) as other,
        _condensing_waits(url, other, condensed) as (holding, condensing, _),
    ):
        if erasing == "forget":
            message = await history.by_source(store, "discord:5")
            erasure: Task[Any] = asyncio.create_task(
                manage_erasure.forget_message(store, message, actor_id=USER, engine=None)
            )
        else:
            erasure = asyncio.create_task(
                manage_erasure.tidy(store, history_days=1, now=10 * 86_400.0)
            )
        await asyncio.wait({erasure}, timeout=1.0)  # it waits for the turn, or is done
        await holding.commit()
        await asyncio.wait_for(asyncio.gather(condensing, erasure), 60)
    if erasing == "prune":
        assert erasure.result().messages == 1
    assert (await story_context.condensed(store, STORY)).sentences == ()
    assert CANARY.lower() not in await canary.rows_text(store)


def _turn_ended(store: Store) -> ContextBuilder:
    return ContextBuilder(store, character=Character("Écho", "a character"), chat_model=MODEL)


def _plan(condensed: CondensedHistory | None) -> ContextPlan:
    return ContextPlan(
        "recent", Estimator(MODEL), ContextConfig().budget, (),
        ({"role": "user", "content": "hello"},), 1, condensed,
    )  # fmt: skip


async def test_turns_that_condense_nothing_keep_learning_while_an_erasure_waits(
    store: Store, url: str
) -> None:
    """An erasure waits for a turn condensing the history in another process (a session holds
    the table); a third process's turn ends, condensing too, and waits for the erasure. A
    fourth's turn that condenses nothing still stores what it learned of the token count at
    once (its calibration), and once they all finish the condensed history holds nothing of
    the forgotten message."""

    message_id, condensed = await _told(store, "discord:8")
    later = CondensedHistory((f"Alice: {CANARY} it is",), message_id + 1, sources=(message_id,))
    samples = "SELECT rejected FROM token_calibration WHERE model = $1"
    async with (
        await open_store(url) as second,
        await open_store(url) as third,
        await open_store(url, busy_timeout_ms=2_000) as fourth,
        _condensing_waits(url, second, condensed) as (holding, condensing, watcher),
    ):
        message = await history.by_source(store, "discord:8")
        forgetting = asyncio.create_task(
            manage_erasure.forget_message(store, message, actor_id=USER, engine=None)
        )
        await waiting_for_locks(watcher, 2)
        ending = asyncio.create_task(_turn_ended(third).after_reply(STORY, _plan(later), None))
        await waiting_for_locks(watcher, 3)
        await asyncio.wait_for(_turn_ended(fourth).after_reply(STORY + 1, _plan(None), None), 30)
        learned = await watcher.fetchval(samples, MODEL)
        assert not forgetting.done()
        await holding.commit()
        await asyncio.wait_for(asyncio.gather(condensing, forgetting, ending), 60)
        assert learned == 1  # stored while the erasure waited
        assert await watcher.fetchval(samples, MODEL) == 2
    assert (await story_context.condensed(store, STORY)).sentences == ()
    assert CANARY.lower() not in await canary.rows_text(store)


async def _vacuuming(watcher: asyncpg.Connection) -> None:
    """Return once a VACUUM runs in another session of this database."""
    for _ in range(600):
        if await watcher.fetchval(
            "SELECT count(*) FROM pg_stat_progress_vacuum WHERE datname = current_database()"
        ):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the VACUUM never started")


@pytest.mark.parametrize("other", ["vacuum", "reader"])
async def test_an_erasure_while_another_session_vacuums_is_complete_at_once(
    store: Store, url: str, other: str
) -> None:
    """A VACUUM running in another session (what an autovacuum worker does, and it vacuums
    pg_database in every database while a test suite creates and drops them) began before the
    erasure and shows a snapshot, which PostgreSQL leaves out when it decides what a vacuum may
    remove: the erasure is complete at once, nothing of the canary left in any live row. A
    reader's older snapshot, though, still keeps the erasure pending."""
    session = await asyncpg.connect(url)
    watcher = await asyncpg.connect(url)
    crawling: Task[Any] | None = None
    try:
        await _told(store, "discord:9")
        if other == "vacuum":
            await session.execute("CREATE TABLE crawl AS SELECT generate_series(1, 50000) AS n")
            await session.execute("DELETE FROM crawl")
            # A page a tenth of a second: it runs for the whole test.
            await session.execute("SET vacuum_cost_delay = 100; SET vacuum_cost_limit = 1")
            crawling = asyncio.create_task(session.execute("VACUUM crawl"))
            await _vacuuming(watcher)
        else:
            reading = session.transaction(isolation="repeatable_read")
            await reading.start()
            await session.fetchval("SELECT count(*) FROM messages")
        message = await history.by_source(store, "discord:9")
        report = await manage_erasure.forget_message(store, message, actor_id=USER, engine=None)
        assert report.complete == (other == "vacuum")
        # What the vacuum after the erasure could not remove (PostgreSQL's own count): the
        # erased message's row version stays for the reader only.
        dead = "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'messages'"
        assert await watcher.fetchval(dead) == (0 if other == "vacuum" else 1)
        assert CANARY.lower() not in await canary.rows_text(store)
    finally:
        if crawling is not None:
            await watcher.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_progress_vacuum"
                                  " WHERE datname = current_database()")  # fmt: skip
            with contextlib.suppress(asyncpg.PostgresError):
                await crawling
        await session.close()
        await watcher.close()
