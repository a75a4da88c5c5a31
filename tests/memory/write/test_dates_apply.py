"""A reflection's memories are stored with the dates they mean, read from when the exchange was
said in the person's time zone, and the dedup compares those dates, not the words. On the
`store` fixture's backend."""

from __future__ import annotations

import json
from datetime import date, datetime
from zoneinfo import ZoneInfo

from memory import manage
from memory.model import Exchange
from memory.store import Store
from memory.store.tables import memories, memory_dates, outbox
from memory.write.apply import apply_reflection
from memory.write.reflection import parse

PARIS = ZoneInfo("Europe/Paris")
GUILD = "111"


def _at(day: int, hour: int, minute: int = 0) -> float:
    return datetime(2026, 12, day, hour, minute, tzinfo=PARIS).timestamp()


async def _said(store: Store, exchange_id: str, text: str, *, at: float, applied: float) -> None:
    """An exchange queued at `at` whose reflection proposes `text`, applied at `applied`."""
    exchange = Exchange(exchange_id, 1, 10, GUILD, "Marie", "J'ai un truc à te dire", "Ah ?")
    await store.transact(lambda tx: outbox.enqueue(tx, exchange, now=at))
    item = {"text": text, "kind": "fact", "scope": "global", "confidence": 0.95}
    reflection = parse(json.dumps({"memories": [item], "summary": "s"}))
    await apply_reflection(
        store, exchange, reflection, character_name="Écho", now=applied, zone=PARIS
    )


async def _texts(store: Store) -> list[str]:
    return sorted(m.text for m in await memories.list_for_user(store, 1))


async def test_tomorrow_said_late_monday_is_tuesday_even_when_reflected_after_midnight(
    store: Store,
) -> None:
    # Said Monday 7 Dec at 23:50 in Paris; the worker got to it at 00:20 on Tuesday.
    await _said(store, "m1", "A un entretien d'embauche demain", at=_at(7, 23, 50),
                applied=_at(8, 0, 20))  # fmt: skip
    await _said(store, "m2", "Part en voyage dans quelques jours", at=_at(7, 23, 51),
                applied=_at(8, 0, 21))  # fmt: skip
    assert await _texts(store) == [
        "A un entretien d'embauche demain (2026-12-08)",
        # Nothing the code can resolve: the words as said, and the memory the day it was said.
        "Part en voyage dans quelques jours",
    ]
    by_text = {m.text: m for m in await memories.list_for_user(store, 1)}
    dated = by_text["A un entretien d'embauche demain (2026-12-08)"]
    assert await memory_dates.of(store, dated.id) == [(date(2026, 12, 8), date(2026, 12, 8))]
    assert await memory_dates.of(store, by_text["Part en voyage dans quelques jours"].id) == []


async def test_demain_and_mardi_said_the_same_monday_are_one_memory(store: Store) -> None:
    await _said(store, "m1", "A un entretien d'embauche demain", at=_at(7, 10),
                applied=_at(7, 10, 1))  # fmt: skip
    await _said(store, "m2", "A un entretien d'embauche mardi", at=_at(7, 18),
                applied=_at(7, 18, 1))  # fmt: skip
    (only,) = await memories.list_for_user(store, 1)
    assert only.text.endswith("(2026-12-08)")
    assert await memory_dates.of(store, only.id) == [(date(2026, 12, 8), date(2026, 12, 8))]


async def test_the_same_words_said_on_two_days_are_two_appointments(store: Store) -> None:
    await _said(store, "m1", "Has a dentist appointment tomorrow", at=_at(7, 10),
                applied=_at(7, 10, 1))  # fmt: skip
    await _said(store, "m2", "Has a dentist appointment tomorrow", at=_at(9, 10),
                applied=_at(9, 10, 1))  # fmt: skip
    assert await _texts(store) == [
        "Has a dentist appointment tomorrow (2026-12-08)",
        "Has a dentist appointment tomorrow (2026-12-10)",
    ]


async def test_a_richer_wording_of_the_same_day_rewrites_the_memory_and_keeps_one_date(
    store: Store,
) -> None:
    await _said(store, "m1", "Léa has a job interview next Tuesday", at=_at(7, 10),
                applied=_at(7, 10, 1))  # fmt: skip
    await _said(store, "m2", "Léa has a big job interview on Tuesday", at=_at(7, 11),
                applied=_at(7, 11, 1))  # fmt: skip
    (only,) = await memories.list_for_user(store, 1)
    assert only.text == "Léa has a big job interview on Tuesday (2026-12-08)"
    assert await memory_dates.of(store, only.id) == [(date(2026, 12, 8), date(2026, 12, 8))]


async def test_a_memory_the_person_writes_is_dated_the_same_way(store: Store) -> None:
    text = "Dentist appointment next Friday"
    await manage.remember(
        store, user_id=1, story_id=10, origin=GUILD, text=text, now=_at(7, 9), zone=PARIS
    )
    (written,) = await memories.list_for_user(store, 1)
    assert written.text == "Dentist appointment next Friday (2026-12-11)"
    assert await memory_dates.of(store, written.id) == [(date(2026, 12, 11), date(2026, 12, 11))]
