"""Migration 12 on a database from before provenance was recorded, and how its old rows are
judged when an exchange is forgotten: by date, since they cannot name where they came from."""

from __future__ import annotations

from pathlib import Path

from memory import manage_erasure
from memory.store import history, provenance
from memory.store.db import Store, Tx
from memory.write import state
from tests.fakes.canary import stored

CODE = "XK7CANARY4921"
STORY, ALICE = 10, 1001
REFLECTED_AT = 1_000.0  # when the exchange was reflected, before the upgrade


async def _old_story(tx: Tx) -> None:
    """A story as schema 11 kept it: one exchange, reflected at REFLECTED_AT, with what its
    reflection made, and what an earlier one made before it."""
    for source, user, role, text in (
        ("discord:5", ALICE, "user", f"Mon code est {CODE}."),
        ("discord:5:reply", None, "assistant", f"Noté : {CODE}."),
    ):
        await tx.execute(
            "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
            " created_at) VALUES (?, ?, ?, ?, 'Alice', ?, ?)",
            (source, STORY, user, role, text, REFLECTED_AT - 1),
        )
    await tx.execute(
        "INSERT INTO outbox (exchange_id, user_id, story_id, origin, user_name, user_message,"
        " reply, status, next_attempt_at, created_at) VALUES ('discord:5', ?, ?, '111', 'Alice',"
        " ?, 'Noté.', 'done', 0, ?)",
        (ALICE, STORY, f"Mon code est {CODE}.", REFLECTED_AT - 1),
    )
    await tx.execute(
        "INSERT INTO applied_exchanges (exchange_id, applied_at, report) VALUES"
        " ('discord:5', ?, '{}')",
        (REFLECTED_AT,),
    )
    for text, at in (("Le phare est rouge", REFLECTED_AT - 500), (f"Le code {CODE}", REFLECTED_AT)):
        await tx.execute(
            "INSERT INTO anchors (story_id, text, created_at) VALUES (?, ?, ?)", (STORY, text, at)
        )
    for topic, idea, at in (("phare", "Le phare est beau", 40.0), ("code", CODE, REFLECTED_AT)):
        await tx.execute(
            "INSERT INTO positions (story_id, topic, idea, justification, created_at,"
            " anchored_at) VALUES (?, ?, ?, '', ?, ?)",
            (STORY, topic, idea, at, at),
        )
    await tx.execute(
        "INSERT INTO story_summaries (story_id, summary, updated_at) VALUES (?, ?, ?)",
        (STORY, f"Alice a donné son code {CODE}.", REFLECTED_AT + 100),
    )


async def test_an_old_database_is_migrated_and_its_rows_judged_by_date(
    database: Path | str, tmp_path: Path
) -> None:
    path = database
    async with await Store.open(path, migrate_to=11) as old:
        await old.transact(_old_story)
    async with await Store.open(path) as store:
        done = await store.fetchone("SELECT user_message, reply, user_name FROM outbox")
        assert done is not None and tuple(done) == ("", "", "")  # finished rows keep no text
        still = await provenance.leftovers(store, ["discord:5"])
        assert [m.history_id for m in still.messages] == [1] and still.summaries == 1

        message = await history.by_source(store, "discord:5")
        report = await manage_erasure.forget_message(store, message, actor_id=ALICE)

        derived = report.erased.derived
        assert (derived.anchors, derived.positions, derived.summaries) == (1, 1, 1)
        anchors = await store.fetchall("SELECT text FROM anchors")
        assert [r[0] for r in anchors] == ["Le phare est rouge"]  # made before: kept
        positions = await store.fetchall("SELECT topic FROM positions")
        assert [r[0] for r in positions] == ["phare"]
        assert await history.summary(store, STORY) == ""  # no revision from before it
        assert await stored(store, tmp_path, CODE) == 0


async def test_state_changes_of_a_forgotten_exchange_are_undone(store: Store) -> None:
    from memory.model import Source

    async def move(tx: Tx, exchange: str, delta: float) -> None:
        await state.apply_deltas(tx, STORY, {"mood": delta}, now=1.0, source=Source(exchange, 1))

    await store.transact(lambda tx: move(tx, "a", 0.15))
    await store.transact(lambda tx: move(tx, "b", -0.1))
    await store.transact(
        lambda tx: tx.execute(
            "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
            " created_at) VALUES ('a', ?, 1, 'user', 'A', 'x', 0)",
            (STORY,),
        )
    )
    message = await history.by_source(store, "a")
    report = await manage_erasure.forget_message(store, message, actor_id=1)
    assert report.erased.derived.state_changes == 1
    mood = (await state.for_story(store, STORY))["mood"]
    assert abs(mood - -0.1) < 1e-9
