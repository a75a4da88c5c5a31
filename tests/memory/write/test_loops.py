"""Positions with the self-citation guard, summary with anchors, bounded state."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory.errors import StoreError
from memory.model import Candidate, Exchange, Kind, Scope
from memory.store import Store
from memory.store.tables import counters, history, memories
from memory.write import stances, state, summary
from memory.write.apply import apply_reflection
from memory.write.reflection import Reflection, json_schema, parse
from memory.write.stances import SELF_CITATION_CHARS, self_cites, shared_chars

STORY = 10
IDEA = "Le silence d'une bibliothèque vaut mieux que le bruit d'une fête"


def _exchange(n: int) -> Exchange:
    return Exchange(f"x{n}", 1, STORY, "111", "Marie", "On parle de fêtes ?", "Pas vraiment.")


async def _reflect(store: Store, n: int, now: float, **payload: Any) -> None:
    reflection = parse(json.dumps({"memories": [], **payload}))
    await apply_reflection(store, _exchange(n), reflection, character_name="Écho", now=now)


def _position(action: str, justification: str, idea: str = IDEA) -> dict[str, str]:
    return {"topic": "fêtes", "idea": idea, "justification": justification, "action": action}


def test_the_guard_sits_on_the_30_character_line() -> None:
    quote = IDEA[:SELF_CITATION_CHARS]  # ends with a space: "!" keeps it inside the text
    assert shared_chars(f"Elle l'a dit : {quote}!", IDEA) == SELF_CITATION_CHARS
    assert self_cites(f"Elle l'a dit : {quote}!", IDEA)
    assert not self_cites(f"Elle l'a dit : {IDEA[: SELF_CITATION_CHARS - 1]}!", IDEA)


async def test_a_self_quoting_justification_does_not_move_the_date(store: Store) -> None:
    await _reflect(store, 1, 100.0, positions=[_position("create", "Marie évite les soirées")])
    # The loop seen on the original deployment: the reflection re-validates the position by quoting
    # it.
    await _reflect(
        store, 2, 200.0, positions=[_position("revalidate", f"Comme je l'ai dit : {IDEA}")]
    )
    [position] = await stances.for_story(store, STORY)
    assert position.anchored_at == 100.0
    assert (await counters.read_all(store))["position_self_citation"] == 1
    # Just under the line (29 shared characters) is a legitimate justification: it re-anchors.
    near = f"Rien à voir : {IDEA[: SELF_CITATION_CHARS - 1]}"
    await _reflect(store, 3, 300.0, positions=[_position("revalidate", near)])
    [position] = await stances.for_story(store, STORY)
    assert position.anchored_at == 300.0


async def test_a_legitimate_justification_re_anchors(store: Store) -> None:
    await _reflect(store, 1, 100.0, positions=[_position("create", "Marie évite les soirées")])
    await _reflect(
        store, 2, 250.0, positions=[_position("revalidate", "Marie a encore fui un anniversaire")]
    )
    [position] = await stances.for_story(store, STORY)
    assert position.anchored_at == 250.0 and position.justification.startswith("Marie a encore")


async def test_an_anchor_survives_a_summary_that_forgot_its_fact(store: Store) -> None:
    await _reflect(store, 1, 1.0, summary="Marie a perdu la clé du phare.",
                   new_anchors=["La clé du phare est perdue"])  # fmt: skip
    await _reflect(store, 2, 2.0, summary="Ils parlent de la pluie.")
    assert await history.summary(store, STORY) == "Ils parlent de la pluie."
    assert [a.text for a in await summary.active(store, STORY)] == ["La clé du phare est perdue"]


async def test_an_anchor_is_dropped_only_by_id_with_a_reason(store: Store) -> None:
    await _reflect(store, 1, 1.0, new_anchors=["La clé du phare est perdue"])
    [anchor] = await summary.active(store, STORY)
    await _reflect(store, 2, 2.0, drop_anchors=[{"id": anchor.id, "reason": ""}])
    await _reflect(store, 3, 3.0, drop_anchors=[{"id": anchor.id}])
    assert [a.id for a in await summary.active(store, STORY)] == [anchor.id]
    assert (await counters.read_all(store))["anchor_drop_refused_no_reason"] == 2
    await _reflect(store, 4, 4.0, drop_anchors=[{"id": anchor.id, "reason": "Clé retrouvée"}])
    assert await summary.active(store, STORY) == []
    row = await store.fetchone("SELECT drop_reason FROM anchors WHERE id = ?", (anchor.id,))
    assert row is not None and row[0] == "Clé retrouvée"  # kept in history


async def test_near_duplicate_anchors_are_not_added_twice(store: Store) -> None:
    await _reflect(store, 1, 1.0, new_anchors=["La clé du phare est perdue"])
    await _reflect(store, 2, 2.0, new_anchors=["La clé du phare est perdue !"])
    assert len(await summary.active(store, STORY)) == 1


async def test_state_deltas_are_clamped_and_unknown_fields_counted(store: Store) -> None:
    await _reflect(store, 1, 1.0, state={"mood": 5.0, "closeness": 0.05, "hunger": 1.0})
    await _reflect(store, 2, 2.0, state={"mood": 0.9})
    values = await state.for_story(store, STORY)
    assert values == {"mood": pytest.approx(0.4), "closeness": pytest.approx(0.05)}
    named = await counters.read_all(store)
    assert named["state_unknown_field"] == 1 and named["state_clamped"] == 2
    for _ in range(20):
        await _reflect(store, 100 + _, 3.0, state={"mood": -1.0})
    assert (await state.for_story(store, STORY))["mood"] == -1.0


async def test_everything_applies_in_one_transaction_or_not_at_all(store: Store) -> None:
    broken = Reflection(
        candidates=(Candidate(text="Aime les phares", kind=Kind.FACT, scope=Scope.GLOBAL),),
        summary="Un résumé.",
        new_anchors=("x" * 600,),  # refused by the table's CHECK, after the memory was inserted
    )
    with pytest.raises(StoreError):
        await apply_reflection(store, _exchange(1), broken, character_name="Écho", now=1.0)
    assert await memories.list_for_user(store, 1) == []
    assert await history.summary(store, STORY) == ""
    assert await store.fetchall("SELECT * FROM applied_exchanges") == []


def test_position_and_anchor_items_are_validated_one_by_one() -> None:
    result = parse(json.dumps({
        "memories": [],
        "positions": [_position("create", "ok"), _position("shout", "x"), {"topic": 3}, "nope"],
        "new_anchors": ["Un fait clé", "", 42],
        "drop_anchors": [{"id": 3, "reason": "faux"}, {"id": "3"}],
    }))  # fmt: skip
    assert [p.action for p in result.positions] == ["create"]
    assert result.new_anchors == ("Un fait clé",)
    assert result.drop_anchors == ((3, "faux"),)
    reasons = sorted(r for _, r in result.dropped)
    assert reasons == sorted(["unknown_action", "missing_field", "not_an_object",
                              "invalid_anchor", "invalid_anchor", "no_anchor_id"])  # fmt: skip


def test_the_schema_asks_for_the_idea_not_the_wording() -> None:
    position = json_schema()["$defs"]["PositionItem"]["properties"]
    assert "idea" in position and "quote" not in json.dumps(position).lower().replace(
        "not a sentence", ""
    )
    assert "own" in position["idea"]["description"]
