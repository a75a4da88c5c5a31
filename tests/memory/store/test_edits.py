"""Following edits in the store (memory/store/queries/erasure.py `edit`), against an oracle: for any
sequence of edits of a message, the history holds the last wording, the reply stays exactly
while no edit took back a word it carries, one reflection waits with the last wording (and the
reply if it stayed), and no tombstone blocks the exchange."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.model import Exchange
from memory.store import open_store
from memory.store.queries import erasure
from memory.store.tables import history, outbox
from memory.write import filters

EXCHANGE = "discord:1"
WORDS = ["code", "XK7CANARY4921", "jardin", "tomates", "chat", "Lyon", "soeur"]
_texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


async def _run(first: str, reply: str, edits: list[str], path: Path) -> None:
    async with await open_store(path) as store:

        async def said(tx: erasure.Tx) -> None:
            await history.add_user_message(
                tx, source_id=EXCHANGE, story_id=10, user_id=5, author_name="Alice",
                content=first, now=1.0,
            )  # fmt: skip
            await history.add_reply(
                tx, source_id=f"{EXCHANGE}:reply", story_id=10, author_name="Écho",
                content=reply, now=1.0,
            )  # fmt: skip
            exchange = Exchange(EXCHANGE, 5, 10, "111", "Alice", first, reply)
            await outbox.enqueue(tx, exchange, now=1.0)

        await store.transact(said)
        wording, kept, followed = first, True, 0
        for n, text in enumerate(edits):
            done = await store.transact(
                lambda tx, t=text, n=n: erasure.edit(
                    tx, EXCHANGE, t, now=2.0 + n, due=2.0 + n, bounds={},
                    words=filters.content_words, carries=filters.carries,
                )
            )  # fmt: skip
            assert (done is None) == (text == wording)
            if done is not None:
                taken = filters.content_words(wording) - filters.content_words(text)
                dropped = kept and filters.carries(reply, text, taken)
                assert done.reply_dropped == dropped
                kept, wording, followed = kept and not dropped, text, followed + 1

        stored = await history.by_source(store, EXCHANGE)
        assert stored is not None and stored.content == wording
        answer = await history.by_source(store, f"{EXCHANGE}:reply")
        assert (answer is not None) == kept
        queued = await outbox.get(store, EXCHANGE)
        assert queued is not None
        assert queued.exchange.user_message == wording
        assert queued.exchange.reply == (reply if kept else "")
        assert await store.fetchall("SELECT exchange_id FROM erased_exchanges") == []
        rows = await store.fetchone("SELECT count(*) FROM erasures")
        assert rows is not None and rows[0] == followed


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_texts, _texts, st.lists(_texts, max_size=5))
def test_edits_leave_the_last_wording_and_drop_a_reply_that_carried_a_taken_back_word(
    first: str, reply: str, edits: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_run(first, reply, edits, Path(tmp) / "e.sqlite3"))
