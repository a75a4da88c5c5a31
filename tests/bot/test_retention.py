"""Retention, run by the scheduler's job: a reflection dropped after its retries keeps the
exchange a week, then only ids; messages older than `[privacy] history_days` leave the history
with the condensed sentences taken from them; a finished reflection never kept any text."""

from __future__ import annotations

import time
from pathlib import Path

from bot.config import Settings
from bot.runtime import Runtime, listed_jobs, open_runtime
from memory.model import CondensedHistory, Exchange
from memory.store import Store, Tx
from memory.store.queries.retention import DROPPED_TEXT_SECONDS
from memory.store.tables import history, outbox, story_context
from tests.fakes.canary import stored
from tests.fakes.ollama import FakeOllama

DAY = 86_400.0
OLD, RECENT = "OLDCANARY1111", "NEWCANARY2222"


def _settings(
    database: Path | str, tmp_path: Path, ollama: FakeOllama, **privacy: float
) -> Settings:
    """The `database` fixture's SQLite file, or its PostgreSQL URL (the process's own files
    then in tmp_path)."""
    if isinstance(database, str):
        storage: dict[str, object] = {"path": tmp_path / "echo.sqlite3", "url": database}
    else:
        storage = {"path": database}
    return Settings(
        llm={"base_url": ollama.url},  # type: ignore[arg-type]
        storage=storage,  # type: ignore[arg-type]
        privacy=privacy,  # type: ignore[arg-type]
    )


async def _run_job(runtime: Runtime, job_id: str) -> None:
    [job] = [j for j in listed_jobs(runtime) if j.name == job_id]
    await job.run()


async def _reflection(store: Store, exchange: Exchange, *, age: float, done: bool) -> None:
    """Queue an exchange `age` seconds ago; its reflection then succeeded, or was dropped."""
    await store.transact(lambda tx: outbox.enqueue(tx, exchange, now=time.time() - age))
    row = await outbox.get(store, exchange.exchange_id)
    assert row is not None
    if done:
        await store.transact(lambda tx: outbox.mark_done(tx, row.id))
    else:
        await store.transact(
            lambda tx: outbox.mark_failed(tx, row.id, error="e", next_attempt_at=None)
        )


async def test_a_dropped_reflection_keeps_its_text_a_week_then_only_ids(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    async with open_runtime(_settings(database, tmp_path, ollama)) as runtime:
        store = runtime.store
        for n, (code, age) in enumerate(((OLD, 8 * DAY), (RECENT, 6 * DAY), ("DONCANARY3333", 0))):
            exchange = Exchange(f"x{n}", 1, 5, "dm", "Alice", f"Mon code est {code}.", "Noté.")
            await _reflection(store, exchange, age=age, done=n == 2)
        rows = await store.fetchall("SELECT user_message FROM outbox ORDER BY id")
        assert rows[2][0] == ""  # finished: no text from the start

        await _run_job(runtime, "retention")

        rows = await store.fetchall(
            "SELECT exchange_id, user_message, status FROM outbox ORDER BY id"
        )
        assert [tuple(r) for r in rows] == [
            ("x0", "", "dropped"),
            ("x1", f"Mon code est {RECENT}.", "dropped"),
            ("x2", "", "done"),
        ]
        assert await stored(store, tmp_path, OLD) == 0 and await stored(store, tmp_path, RECENT) > 0
    assert DROPPED_TEXT_SECONDS == 7 * DAY


async def test_history_past_history_days_leaves_with_its_condensed_sentences(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    async with open_runtime(_settings(database, tmp_path, ollama, history_days=30)) as runtime:
        store = runtime.store
        now = time.time()

        async def write(tx: Tx) -> None:
            for n, (code, age) in enumerate(((OLD, 40 * DAY), (RECENT, 2 * DAY))):
                await history.add_user_message(
                    tx, source_id=f"m{n}", story_id=5, user_id=1, author_name="Alice",
                    content=f"Mon code est {code}.", now=now - age,
                )  # fmt: skip
                await history.add_reply(
                    tx, source_id=f"m{n}:reply", story_id=5, author_name="Écho",
                    content=f"Noté : {code}.", now=now - age,
                )  # fmt: skip
            condensed = CondensedHistory(
                (f"Alice: Mon code est {OLD}.", f"Alice: Mon code est {RECENT}."),
                through_id=3, sources=(1, 3),
            )  # fmt: skip
            await story_context.set_condensed(tx, 5, condensed, now=now)

        await store.transact(write)
        assert await stored(store, tmp_path, OLD) > 0

        await _run_job(runtime, "retention")

        kept = await history.recent(store, 5, limit=10)
        assert [m.content for m in kept] == [f"Mon code est {RECENT}.", f"Noté : {RECENT}."]
        assert (await story_context.condensed(store, 5)).sentences == (
            f"Alice: Mon code est {RECENT}.",
        )
        assert await stored(store, tmp_path, OLD) == 0


def test_the_example_config_states_the_history_default() -> None:
    from bot.config import PrivacySettings, load_settings

    root = Path(__file__).resolve().parents[2]
    example = load_settings(root / "config.example.toml").privacy
    assert example.history_days == PrivacySettings().history_days == 90
