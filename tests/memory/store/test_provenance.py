"""Migration 12 on a database from before provenance was recorded, and how its old rows are
judged when an exchange is forgotten: by date, since they cannot name where they came from."""

from __future__ import annotations

from pathlib import Path

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from bot import render
from memory import manage
from memory.manage import forgetting
from memory.manage import versions as manage_versions
from memory.model import Kind, Scope, Source
from memory.store import Store, Tx, open_store
from memory.store.queries import provenance
from memory.store.tables import applied_exchanges, history, memories
from memory.write import filters, state
from memory.write.filters import _stem
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
    async with await open_store(path, migrate_to=11) as old:
        await old.transact(_old_story)
    async with await open_store(path) as store:
        done = await store.fetchone("SELECT user_message, reply, user_name FROM outbox")
        assert done is not None and tuple(done) == ("", "", "")  # finished rows keep no text
        still = await provenance.leftovers(store, ["discord:5"])
        assert [m.history_id for m in still.messages] == [1] and still.summaries == 1

        message = await history.by_source(store, "discord:5")
        report = await forgetting.forget_message(store, message, actor_id=ALICE, engine=None)

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
    report = await forgetting.forget_message(store, message, actor_id=1, engine=None)
    assert report.erased.derived.state_changes == 1
    mood = (await state.for_story(store, STORY))["mood"]
    assert abs(mood - -0.1) < 1e-9


BOB, CAROL, DAVE = 1002, 1003, 1004


async def _exchange(tx: Tx, n: int, user: int, text: str, *, at: float) -> str:
    """One exchange of STORY: the person's message, its done outbox row, reflected at `at`."""
    source = f"discord:{n}"
    await tx.execute(
        "INSERT INTO messages (source_id, story_id, user_id, role, author_name, content,"
        " created_at) VALUES (?, ?, ?, 'user', 'x', ?, ?)",
        (source, STORY, user, text, at - 1),
    )
    await tx.execute(
        "INSERT INTO outbox (exchange_id, user_id, story_id, origin, user_name, user_message,"
        " reply, status, next_attempt_at, created_at) VALUES (?, ?, ?, '111', '', '', '',"
        " 'done', 0, ?)",
        (source, user, STORY, at - 1),
    )
    await tx.execute(
        "INSERT INTO applied_exchanges (exchange_id, applied_at, report) VALUES (?, ?, '{}')",
        (source, at),
    )
    return source


async def _memory(tx: Tx, user: int, text: str, exchange_id: str, *, at: float) -> None:
    memory = await memories.insert(
        tx, user_id=user, text=text, kind=Kind.FACT, scope=Scope.GLOBAL, story_id=STORY,
        origin="111", confidence=0.95, now=at,
    )  # fmt: skip
    await applied_exchanges.record_event(tx, memory.id, exchange_id, "created", 1.0, now=at)


async def _texts(store: Store, user: int) -> list[str]:
    return sorted(m.text for m in await manage.list_memories(store, user))


async def test_a_reflection_applied_before_schema_21_is_judged_by_date(
    database: Path | str, tmp_path: Path
) -> None:
    """Bob's reflections before the upgrade recorded nothing of what they were shown: the one
    applied after Alice's exchange was reflected counts as shown her words; what it wrote in
    his own message's words stays, and so does what he learned before."""

    async def story(tx: Tx) -> None:
        before = await _exchange(tx, 4, BOB, "Le phare est rouge.", at=900.0)
        await _memory(tx, BOB, "Le phare est rouge", before, at=900.0)
        await _exchange(tx, 5, ALICE, f"Mon code est {CODE}.", at=REFLECTED_AT)
        await tx.execute(
            "INSERT INTO story_summaries (story_id, summary, updated_at) VALUES (?, ?, ?)",
            (STORY, f"Alice a donné son code {CODE}.", REFLECTED_AT),
        )
        after = await _exchange(tx, 7, BOB, "J'aime le jardin, tu te souviens du code ?", at=1100.0)
        await _memory(tx, BOB, f"Connaît le code {CODE}", after, at=1100.0)
        await _memory(tx, BOB, "Aime le jardin", after, at=1100.0)

    async with await open_store(database, migrate_to=18) as old:
        await old.transact(story)
    async with await open_store(database) as store:
        report = await forgetting.forget_person(store, ALICE, engine=None)
        assert await _texts(store, BOB) == ["Aime le jardin", "Le phare est rouge"]
        assert await stored(store, tmp_path, CODE) == 0
        assert report.erased.others == 1
        said = render.render_erasure(report, heading="Erased:")
        assert "1 item of other people went with it" in said


async def test_what_a_reflection_was_shown_is_followed_from_note_to_note(store: Store) -> None:
    """Bob's reflection was shown Alice's anchor (not the summary) and wrote an anchor of its
    own; Carol's was shown only Bob's anchor and wrote a memory from it; Dave's was shown
    neither. Forgetting Alice's message takes Bob's anchor and Carol's memory, not Dave's."""

    async def story(tx: Tx) -> None:
        alices = await _exchange(tx, 5, ALICE, f"Mon code est {CODE}.", at=REFLECTED_AT)
        first = await tx.execute(
            "INSERT INTO anchors (story_id, text, created_at, exchange_id, user_id)"
            " VALUES (?, ?, ?, ?, ?)",
            (STORY, f"Le code {CODE}", REFLECTED_AT, alices, ALICE),
        )
        bobs = await _exchange(tx, 7, BOB, "Tu te souviens ?", at=1100.0)
        await provenance.record_shown(
            tx, bobs, STORY, provenance.Shown(500.0, (first,), ()), now=1100.0
        )
        second = await tx.execute(
            "INSERT INTO anchors (story_id, text, created_at, exchange_id, user_id)"
            " VALUES (?, ?, ?, ?, ?)",
            (STORY, f"Bob connaît le code {CODE}", 1100.0, bobs, BOB),
        )
        carols = await _exchange(tx, 9, CAROL, "Et Bob ?", at=1200.0)
        await provenance.record_shown(
            tx, carols, STORY, provenance.Shown(500.0, (second,), ()), now=1200.0
        )
        await _memory(tx, CAROL, f"Sait que Bob connaît le code {CODE}", carols, at=1200.0)
        daves = await _exchange(tx, 11, DAVE, "Bonjour.", at=1300.0)
        await provenance.record_shown(tx, daves, STORY, provenance.Shown(500.0), now=1300.0)
        await _memory(tx, DAVE, "Salue poliment", daves, at=1300.0)

    await store.transact(story)
    message = await history.by_source(store, "discord:5")
    report = await forgetting.forget_message(store, message, actor_id=ALICE, engine=None)
    assert report.erased.others == 2  # Bob's anchor, Carol's memory
    said = render.render_erasure(report, heading="Forgotten:")
    assert (
        "\n2 items of other people went with it: memories, anchors or positions a reflection"
        " wrote while it was shown what you said" in said
    )
    assert await store.fetchall("SELECT text FROM anchors") == []
    assert await _texts(store, CAROL) == []
    assert await _texts(store, DAVE) == ["Salue poliment"]


_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=4, max_size=9)


async def test_one_forgotten_message_takes_only_the_copies_of_its_words(store: Store) -> None:
    """Alice's code reached the summary; the 20 reflections after it (Bob's and hers in turn)
    were each shown a revision written from that one. Half of them reworded their person's
    news (words of neither their message nor Alice's exchange), half kept its words; one of
    Bob's copied her code. Forgetting her message takes the copy alone (before: all eleven)."""
    reworded = ["Cultive des tomates", "Adore les randonnées", "Joue du violoncelle",
                "Collectionne les timbres", "Élève des poules"]  # fmt: skip

    async def story(tx: Tx) -> None:
        alices = await _exchange(tx, 5, ALICE, f"Mon code est {CODE}.", at=REFLECTED_AT)
        summary = f"Alice a donné son code {CODE}."
        await history.set_summary(tx, STORY, summary, REFLECTED_AT, source=Source(alices, ALICE))
        shown = REFLECTED_AT
        for n in range(20):
            who, at = (BOB, ALICE)[n % 2], REFLECTED_AT + 10 * (n + 1)
            said = f"J'ai un potager numéro {n}."
            exchange = await _exchange(tx, 10 + n, who, said, at=at)
            await provenance.record_shown(tx, exchange, STORY, provenance.Shown(shown), now=at)
            text = f"{reworded[n // 4]} {n}" if n % 4 < 2 else f"Potager numéro {n}"
            await _memory(tx, who, text, exchange, at=at)
            summary = f"Alice a confié son code {CODE}; on parle de potagers ({n})."
            await history.set_summary(tx, STORY, summary, at, source=Source(exchange, who))
            shown = at
        bobs = await _exchange(tx, 40, BOB, "Tu te souviens ?", at=REFLECTED_AT + 500)
        await provenance.record_shown(
            tx, bobs, STORY, provenance.Shown(shown), now=REFLECTED_AT + 500
        )
        await _memory(tx, BOB, f"Connaît le code {CODE}", bobs, at=REFLECTED_AT + 500)

    await store.transact(story)
    before = {p: len(await _texts(store, p)) for p in (ALICE, BOB)}
    message = await history.by_source(store, "discord:5")
    report = await forgetting.forget_message(store, message, actor_id=ALICE, engine=None)
    assert report.erased.memories == 0  # her exchange made none; her later ones all stay
    assert report.erased.others == 1
    assert len(await _texts(store, BOB)) == before[BOB] - 1
    assert len(await _texts(store, ALICE)) == before[ALICE] == 10
    assert CODE not in " ".join([*await _texts(store, ALICE), *await _texts(store, BOB)])


async def test_a_legacy_reflection_keeps_what_it_reworded(
    database: Path | str, tmp_path: Path
) -> None:
    """A reflection applied before schema 21 (judged by date) that reworded Bob's news in
    words of neither his message nor Alice's exchange keeps it."""

    async def story(tx: Tx) -> None:
        await _exchange(tx, 5, ALICE, f"Mon code est {CODE}.", at=REFLECTED_AT)
        await tx.execute(
            "INSERT INTO story_summaries (story_id, summary, updated_at) VALUES (?, ?, ?)",
            (STORY, f"Alice a donné son code {CODE}.", REFLECTED_AT),
        )
        after = await _exchange(tx, 7, BOB, "J'ai un potager.", at=1100.0)
        await _memory(tx, BOB, "Cultive des tomates", after, at=1100.0)
        await _memory(tx, BOB, f"Sait que le code est {CODE}", after, at=1100.0)

    async with await open_store(database, migrate_to=18) as old:
        await old.transact(story)
    async with await open_store(database) as store:
        report = await forgetting.forget_person(store, ALICE, engine=None)
        assert await _texts(store, BOB) == ["Cultive des tomates"]
        assert await stored(store, tmp_path, CODE) == 0
        assert report.erased.others == 1


_TAINTED = st.lists(_WORDS.map(lambda w: "t" + w), min_size=1, max_size=6)


@settings(max_examples=60)
@given(said=st.lists(_WORDS, max_size=6), extra=st.lists(_WORDS.map(lambda w: "q" + w),
       max_size=4), erased=_TAINTED, pick=st.integers(min_value=0))  # fmt: skip
@example(said=[], extra=[], erased=["t00xx"], pick=0)  # a word whose stem stems again
def test_an_item_goes_only_with_a_word_of_the_taint_its_person_did_not_say(
    said: list[str], extra: list[str], erased: list[str], pick: int
) -> None:
    """An item whose words beyond its person's message avoid the taint stays, however many;
    one holding a word of the taint its person did not say goes."""
    message = " ".join(said)
    taint = filters.content_words(" ".join(erased))
    own = filters.content_words(message)
    extra = [w for w in extra if _stem(w) not in taint]
    assert not filters.carries(" ".join([*reversed(said), *extra]), message, taint)
    foreign = sorted(taint - own)
    assume(foreign)
    # A word as the erased message wrote it (its stem, written again, could lose one more
    # letter: "t00xx" stems to "t00x", which stems to "t00").
    stem = foreign[pick % len(foreign)]
    word = next(w for w in erased if stem in filters.content_words(w))
    assert filters.carries(" ".join([*said, word, *extra]), message, taint)


async def test_an_earlier_version_copied_from_a_forgotten_message_goes_too(
    store: Store,
) -> None:
    """Carol's reflection, shown Alice's anchor, wrote a memory with Alice's code; Carol then
    corrected it in her own words. Forgetting Alice's message keeps Carol's correction and
    takes out the earlier version that held the code."""

    async def story(tx: Tx) -> None:
        alices = await _exchange(tx, 5, ALICE, f"Mon code est {CODE}.", at=REFLECTED_AT)
        anchor = await tx.execute(
            "INSERT INTO anchors (story_id, text, created_at, exchange_id, user_id)"
            " VALUES (?, ?, ?, ?, ?)",
            (STORY, f"Le code {CODE}", REFLECTED_AT, alices, ALICE),
        )
        carols = await _exchange(tx, 9, CAROL, "Et le code ?", at=1200.0)
        await provenance.record_shown(
            tx, carols, STORY, provenance.Shown(500.0, (anchor,), ()), now=1200.0
        )
        await _memory(tx, CAROL, f"Connaît le code {CODE}", carols, at=1200.0)

    await store.transact(story)
    [carols] = await manage.list_memories(store, CAROL)
    await manage_versions.edit(store, CAROL, carols.id, "Connaît un code secret", now=1300.0)
    message = await history.by_source(store, "discord:5")
    await forgetting.forget_message(store, message, actor_id=ALICE, engine=None)
    assert await _texts(store, CAROL) == ["Connaît un code secret"]
    assert (await manage_versions.history(store, CAROL, carols.id)).earlier == ()
    assert await store.fetchall("SELECT id FROM memory_versions") == []
