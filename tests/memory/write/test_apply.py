from __future__ import annotations

import json
from typing import Any

from memory.model import Exchange, Scope
from memory.store import Store
from memory.store.tables import counters, memories
from memory.write.apply import apply_reflection
from memory.write.reflection import parse

GUILD = "111"


def _exchange(
    exchange_id: str,
    message: str = "J'adore le jazz manouche",
    *,
    user_id: int = 1,
    story_id: int = 10,
    origin: str = GUILD,
) -> Exchange:
    return Exchange(exchange_id, user_id, story_id, origin, "Marie", message, "Ah, Django !")


def _reflection(*texts: str, scope: str = "global", **extra: Any) -> Any:
    items = [{"text": t, "kind": "preference", "scope": scope, "confidence": 0.95} for t in texts]
    return parse(json.dumps({"memories": items, "summary": "s", **extra}))


async def _apply(store: Store, exchange: Exchange, reflection: Any, now: float = 100.0) -> Any:
    return await apply_reflection(store, exchange, reflection, character_name="Écho", now=now)


async def test_created_then_merged_then_absorbed(store: Store) -> None:
    first = await _apply(store, _exchange("m1"), _reflection("Adore le jazz manouche"))
    assert [o.action for o in first.outcomes] == ["created"]
    memory_id = first.outcomes[0].memory_id

    richer = await _apply(
        store, _exchange("m2"), _reflection("Adore le jazz manouche depuis l'enfance"), now=200.0
    )
    assert [(o.action, o.memory_id) for o in richer.outcomes] == [("merged", memory_id)]

    poorer = await _apply(store, _exchange("m3"), _reflection("Adore le jazz manouche"), now=300.0)
    assert [(o.action, o.memory_id) for o in poorer.outcomes] == [("absorbed", memory_id)]

    [memory] = await memories.list_for_user(store, 1)
    assert memory.text == "Adore le jazz manouche depuis l'enfance"
    # The merge moved the date; the absorption did not.
    assert (memory.created_at, memory.updated_at) == (100.0, 200.0)


async def test_same_exchange_twice_writes_nothing_the_second_time(store: Store) -> None:
    reflection = _reflection("Adore le jazz manouche", "Vit à Lyon")
    await _apply(store, _exchange("m1"), reflection)
    again = await _apply(store, _exchange("m1"), reflection)
    assert again.already_applied and again.outcomes == ()
    assert len(await memories.list_for_user(store, 1)) == 2
    assert (await counters.read_all(store))["memories_created"] == 2


async def test_rejections_and_dropped_items_are_counted(store: Store) -> None:
    reflection = parse(
        json.dumps(
            {
                "memories": [
                    {"text": "Aime les huîtres", "kind": "fact", "scope": "global",
                     "confidence": 1},
                    {"text": "Écho est fière de Marie", "kind": "fact", "scope": "global",
                     "confidence": 1},
                    {"text": "x", "kind": "nope", "scope": "global", "confidence": 1},
                ]
            }
        )
    )  # fmt: skip
    report = await _apply(
        store, _exchange("m1", "Je n'aime pas les huîtres, j'ai eu mon bac"), reflection
    )
    assert [(o.action, o.reason) for o in report.outcomes] == [
        ("rejected", "negation_inverted"),
        ("rejected", "character_attitude"),
    ]
    assert await counters.read_all(store) == {
        "memories_rejected:character_attitude": 1,
        "memories_rejected:negation_inverted": 1,
        "reflection_dropped:unknown_kind": 1,
    }
    assert await memories.list_for_user(store, 1) == []


async def test_duplicates_inside_one_reflection_merge_with_each_other(store: Store) -> None:
    report = await _apply(
        store, _exchange("m1"), _reflection("Adore le jazz manouche", "Adore le jazz manouche !")
    )
    assert [o.action for o in report.outcomes] == ["created", "absorbed"]


async def test_memories_of_another_user_are_never_merged_into(store: Store) -> None:
    await _apply(store, _exchange("a1", user_id=1), _reflection("Adore le jazz manouche"))
    report = await _apply(store, _exchange("b1", user_id=2), _reflection("Adore le jazz manouche"))
    assert [o.action for o in report.outcomes] == ["created"]
    assert [m.user_id for m in await memories.list_for_user(store, 2)] == [2]


async def test_story_memories_merge_only_within_their_story(store: Store) -> None:
    await _apply(
        store, _exchange("s1", story_id=10), _reflection("Cherche la clé du phare", scope="story")
    )
    other = await _apply(
        store, _exchange("s2", story_id=20), _reflection("Cherche la clé du phare", scope="story")
    )
    same = await _apply(
        store, _exchange("s3", story_id=10), _reflection("Cherche la clé du phare", scope="story")
    )
    assert [o.action for o in other.outcomes] == ["created"]
    assert [o.action for o in same.outcomes] == ["absorbed"]


async def test_dm_memories_and_guild_memories_do_not_merge(store: Store) -> None:
    await _apply(
        store, _exchange("d1", origin="dm", story_id=5), _reflection("Adore le jazz manouche")
    )
    report = await _apply(store, _exchange("g1"), _reflection("Adore le jazz manouche"))
    assert [o.action for o in report.outcomes] == ["created"]
    guild_view = await memories.visible(store, 1, 10, GUILD)
    assert [m.origin for m in guild_view] == [GUILD]
    dm_view = await memories.visible(store, 1, 5, "dm")
    assert [m.origin for m in dm_view] == ["dm"]  # served where learned, by default
    everywhere = await memories.visible(store, 1, 5, "dm", everywhere=True)
    assert sorted(m.origin for m in everywhere) == [GUILD, "dm"]


async def test_global_wording_widens_a_story_memory(store: Store) -> None:
    await _apply(store, _exchange("s1"), _reflection("Adore le jazz manouche", scope="story"))
    await _apply(store, _exchange("s2"), _reflection("Adore le jazz manouche et le swing"))
    [memory] = await memories.list_for_user(store, 1)
    assert memory.scope is Scope.GLOBAL and memory.story_id is None


async def test_the_stored_report_holds_no_memory_text(store: Store) -> None:
    await _apply(store, _exchange("m1"), _reflection("Adore le jazz manouche"))
    row = await store.fetchone("SELECT report FROM applied_exchanges WHERE exchange_id = 'm1'")
    assert row is not None and "jazz" not in row["report"]


async def test_a_kept_index_merges_across_reflections_and_never_into_a_forgotten_memory(
    store: Store,
) -> None:
    from memory import manage
    from memory.write.dedup_index import IndexCache

    indexes = IndexCache()

    async def reflect(exchange_id: str, text: str) -> Any:
        return await apply_reflection(store, _exchange(exchange_id), _reflection(text),
                                      character_name="Écho", now=1.0, indexes=indexes)  # fmt: skip

    first = await reflect("k1", "Adore le jazz manouche")
    key = (1, 10, False)
    assert indexes.get(key, store.generation(1)) is not None  # kept, and current
    second = await reflect("k2", "Adore le jazz manouche depuis l'enfance")
    assert second.outcomes[0].memory_id == first.outcomes[0].memory_id  # merged via the kept index

    await manage.forget(store, 1, first.outcomes[0].memory_id)  # another writer: index is stale
    assert indexes.get(key, store.generation(1)) is None
    third = await reflect("k3", "Adore le jazz manouche depuis l'enfance")
    assert [o.action for o in third.outcomes] == ["created"]
