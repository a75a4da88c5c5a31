from __future__ import annotations

import json
import math
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.model import Kind, Scope
from memory.write.reflection import (
    MAX_ITEMS,
    MAX_MEMORY_CHARS,
    MAX_PAYLOAD_BYTES,
    build_messages,
    json_schema,
    parse,
)


def _item(text: str = "Aime le jazz", **over: Any) -> dict[str, Any]:
    return {"text": text, "kind": "preference", "scope": "global", "confidence": 0.9} | over


def test_valid_payload_round_trips() -> None:
    payload = {"memories": [_item()], "summary": "Ils parlent de musique.", "state": {"mood": 0.2}}
    result = parse(json.dumps(payload))
    assert [(c.text, c.kind, c.scope, c.confidence) for c in result.candidates] == [
        ("Aime le jazz", Kind.PREFERENCE, Scope.GLOBAL, 0.9)
    ]
    assert result.summary == "Ils parlent de musique."
    assert dict(result.state) == {"mood": 0.2}
    assert result.dropped == ()


def test_invalid_items_are_dropped_with_reasons_and_valid_ones_survive() -> None:
    payload = {
        "memories": [
            _item("Vit à Lyon"),
            _item(kind="opinion"),
            _item(confidence=1.5),
            _item(confidence="élevée"),
            _item(text=42),
            "not an object",
            _item("x" * (MAX_MEMORY_CHARS + 1)),
            _item(scope="partout"),
            _item(confidence=True),
            _item("Has a cat", kind="FACT", scope="Story", confidence="0.95"),
        ]
    }
    result = parse(json.dumps(payload))
    assert [c.text for c in result.candidates] == ["Vit à Lyon", "Has a cat"]
    assert [reason for _, reason in result.dropped] == [
        "unknown_kind",
        "confidence_out_of_range",
        "confidence_not_a_number",
        "text_not_a_string",
        "not_an_object",
        "text_too_long",
        "unknown_scope",
        "confidence_not_a_number",
    ]


def test_truncated_json_keeps_the_complete_items() -> None:
    full = json.dumps({"summary": "s", "memories": [_item("Vit à Lyon"), _item("A un chat")]})
    cut = full[: full.rindex("A un chat") + 4]
    result = parse(cut)
    assert [c.text for c in result.candidates] == ["Vit à Lyon"]
    assert result.summary == "s"
    assert ("memories[1]", "truncated") in result.dropped


def test_code_fences_and_prose_around_json_are_tolerated() -> None:
    raw = "Voici le JSON :\n```json\n" + json.dumps({"memories": [_item()]}) + "\n```"
    assert len(parse(raw).candidates) == 1


def test_text_hygiene_is_applied_to_items() -> None:
    result = parse(json.dumps({"memories": [_item("  Aime\u200b le\u202e  jazz \U000e0041")]}))
    assert result.candidates[0].text == "Aime le jazz"


def test_items_beyond_the_cap_are_counted() -> None:
    result = parse(json.dumps({"memories": [_item(f"Fait {i}") for i in range(MAX_ITEMS + 3)]}))
    assert len(result.candidates) == MAX_ITEMS
    assert [r for _, r in result.dropped].count("too_many_items") == 3


def test_huge_payload_is_cut_and_counted() -> None:
    big = json.dumps({"memories": [_item(f"Fait numéro {i}") for i in range(5000)]})
    assert len(big) > MAX_PAYLOAD_BYTES
    result = parse(big)
    assert ("payload", "too_large_truncated") in result.dropped
    assert len(result.candidates) == MAX_ITEMS


def test_not_json_at_all() -> None:
    assert parse("désolé, je ne peux pas").dropped == (("payload", "no_json_object"),)
    assert parse(b"\xff\xfe{").candidates == ()


def test_schema_is_the_one_sent_to_ollama() -> None:
    schema = json_schema()
    assert set(schema["required"]) >= {"memories", "summary"}
    item = schema["$defs"]["MemoryItem"]["properties"]
    assert item["kind"]["enum"] == ["fact", "preference", "promise", "episode"]


def test_prompt_carries_the_exchange_as_data_and_does_not_ask_to_abstain() -> None:
    messages = build_messages(
        user_name="Marie", character_name="Écho", user_message="J'ai un chat", reply="Ah !"
    )
    assert json.loads(messages[1]["content"])["user_message"] == "J'ai un chat"
    # Measured on the original deployment: "return nothing if…" doubled the off-topic rate.
    assert "nothing" not in messages[0]["content"].lower()


# --- numbers out of every range, and nesting past the stack ---------------------------------

LONG_INT = "9" * 400  # parses; too large for a float and for SQLite's INTEGER
HUGE_INT = "9" * 5_000  # past Python's 4,300-digit limit: json.loads raises ValueError


def test_a_400_digit_number_drops_its_item_with_the_reason_and_keeps_the_rest() -> None:
    raw = (
        '{"memories": [{"text": "Aime le jazz", "kind": "fact", "scope": "global",'
        f' "confidence": {LONG_INT}}}, {json.dumps(_item("Vit à Lyon"))}],'
        f' "state": {{"mood": {LONG_INT}, "closeness": -{LONG_INT}, "energy": 0.1}},'
        f' "drop_anchors": [{{"id": {LONG_INT}, "reason": "faux"}}, {{"id": 3, "reason": "vu"}}]}}'
    )
    result = parse(raw)
    assert [c.text for c in result.candidates] == ["Vit à Lyon"]
    assert dict(result.state) == {"energy": 0.1}
    assert result.drop_anchors == ((3, "vu"),)
    assert set(result.dropped) == {
        ("memories[0]", "confidence_out_of_range"),
        ("state.mood", "not_finite"),
        ("state.closeness", "not_finite"),
        ("drop_anchors[0]", "anchor_id_out_of_range"),
    }


def test_anchor_ids_are_bounded_to_sqlite_rowids() -> None:
    ids = [2**63 - 1, 2**63, 0, -1, 1]
    result = parse(json.dumps({"drop_anchors": [{"id": i, "reason": "r"} for i in ids]}))
    assert [i for i, _ in result.drop_anchors] == [2**63 - 1, 1]
    assert [r for _, r in result.dropped] == ["anchor_id_out_of_range"] * 3


def test_floats_are_finite_and_those_past_float32_are_only_numbers() -> None:
    # 1e39 is finite (a state delta, clamped when applied) but an impossible confidence.
    raw = json.dumps({"memories": [_item(confidence=1e39)], "state": {"mood": 1e39}})
    result = parse(raw.replace("1e+39}", "1e400}"))
    assert result.candidates == () and dict(result.state) == {}
    assert set(result.dropped) == {
        ("memories[0]", "confidence_out_of_range"),
        ("state.mood", "not_finite"),
    }
    assert dict(parse(raw).state) == {"mood": 1e39}


def test_an_integer_past_pythons_parsing_limit_costs_only_its_field() -> None:
    raw = json.dumps({"summary": "s", "memories": [_item()], "state": {"mood": 0}})
    result = parse(raw.replace('"mood": 0', f'"mood": {HUGE_INT}'))
    assert [c.text for c in result.candidates] == ["Aime le jazz"] and result.summary == "s"
    assert ("state", "unreadable") in result.dropped


def test_nesting_deeper_than_the_stack_is_dropped_and_counted() -> None:
    deep = "[" * 30_000 + "]" * 30_000
    raw = json.dumps({"summary": "s", "memories": [_item(), "DEEP"]}).replace('"DEEP"', deep)
    result = parse(raw)
    assert [c.text for c in result.candidates] == ["Aime le jazz"] and result.summary == "s"
    assert ("memories[1]", "truncated") in result.dropped
    assert parse('{"state": ' + "{" * 30_000).state == {}


_hostile_fragment = st.sampled_from(
    [LONG_INT, HUGE_INT, "-" + LONG_INT, "1e39", "-1e39", "1e400", "[" * 5_000, "{" * 5_000,
     "[" * 3_000 + "]" * 3_000, '{"a":' * 2_000 + "1" + "}" * 2_000]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_hostile_numbers_and_nesting_anywhere_never_crash(data: st.DataObject) -> None:
    payload = {
        "memories": [_item(), _item("A un chat", confidence=0.5)],
        "summary": "s",
        "state": {"mood": 0.25},
        "drop_anchors": [{"id": 7, "reason": "r"}],
    }
    raw = json.dumps(payload)
    # Any value in the payload replaced by a hostile one.
    values = ["0.9", "0.5", "0.25", "7", '"s"', '"global"']
    target = data.draw(st.sampled_from(values))
    fragment = data.draw(_hostile_fragment)
    result = parse(raw.replace(target, fragment, 1))
    for candidate in result.candidates:
        assert 0.0 <= candidate.confidence <= 1.0
    assert all(math.isfinite(v) for v in result.state.values())
    assert all(1 <= i <= 2**63 - 1 for i, _ in result.drop_anchors)


# --- fuzz: no crash, no invalid candidate, every rejection counted ---------------------------

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**1000).map(lambda n: n * (-1) ** (n % 2)),
    st.floats(allow_nan=True),
    st.floats(min_value=3.5e38, allow_infinity=True),  # past float32
    st.text(max_size=40),
)
_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
_items = st.lists(
    st.one_of(
        _json,
        st.fixed_dictionaries(
            {
                "text": st.one_of(st.text(max_size=60), _json_leaf),
                "kind": st.sampled_from(["fact", "preference", "rule", "FAIT", "x", 3]),
                "scope": st.sampled_from(["global", "story", "histoire", None, "nowhere"]),
                "confidence": st.one_of(_json_leaf, st.floats(-2, 2)),
            }
        ),
    ),
    max_size=25,
)


@settings(max_examples=300)
@given(_items, st.integers(min_value=0, max_value=400))
def test_fuzzed_payloads_never_crash_and_account_for_every_item(items: list[Any], cut: int) -> None:
    raw = json.dumps({"memories": items, "summary": "s"})
    for text in (raw, raw[: len(raw) - cut]):
        result = parse(text)
        for candidate in result.candidates:
            assert candidate.text and len(candidate.text) <= MAX_MEMORY_CHARS
            assert candidate.kind is not Kind.RULE
            assert 0.0 <= candidate.confidence <= 1.0
    complete = parse(raw)
    item_drops = [d for d in complete.dropped if d[0].startswith("memories")]
    assert len(complete.candidates) + len(item_drops) == len(items)


@given(st.text(max_size=300) | st.binary(max_size=300))
def test_arbitrary_text_never_crashes(raw: str | bytes) -> None:
    parse(raw)


def test_a_payload_ending_in_a_huge_run_of_spaces_parses_at_once() -> None:
    # Found by the reflection fuzz: a fence regex backtracked quadratically here (10 s).
    started = time.perf_counter()
    result = parse(json.dumps({"memories": [_item()]}) + " " * 70_000)
    assert len(result.candidates) == 1 and time.perf_counter() - started < 1.0
