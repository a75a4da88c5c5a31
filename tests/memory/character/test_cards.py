"""Character Cards V2/V3 from JSON and PNG: what is understood, and clear refusals."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from memory.character.cards import load_card, load_lorebook, parse_card
from memory.context.lore import activate
from memory.context.prompt import lore_blocks
from memory.errors import CardError
from memory.model import LoreScope


def v2(**data: Any) -> dict[str, Any]:
    """A small original card (written for these tests)."""
    base = {
        "name": "Nyx",
        "description": "{{char}} keeps the night lighthouse of Ouessant and talks to {{user}}.",
        "personality": "dry humour, patient",
        "scenario": "A stormy night; <USER> knocks at the lighthouse door.",
        "first_mes": "*{{char}} opens the door.* Come in, {{user}}, before the wind does.",
        "alternate_greetings": ["Again at my door, {{user}}?"],
        "mes_example": "<START>\n{{user}}: Is the lamp on?\n{{char}}: Always.",
        "system_prompt": "Stay in character. {{original}}",
        "post_history_instructions": "Answer in two sentences at most.",
        "creator_notes": "test card",
        "tags": ["test"],
        "creator": "tests",
        "character_version": "1",
        "extensions": {"fav": True},
        "character_book": {
            "scan_depth": 3,
            "token_budget": 256,
            "extensions": {},
            "entries": [
                {"keys": ["Fresnel"], "content": "The lens came from Paris in 1902.",
                 "extensions": {}, "enabled": True, "insertion_order": 10},
                {"keys": ["keeper"], "content": "{{char}} became keeper at nineteen.",
                 "extensions": {"probability": 100}, "enabled": True, "insertion_order": 5,
                 "priority": 50, "selective": True, "secondary_keys": ["first", "young"],
                 "case_sensitive": False},
                {"keys": [], "content": "Storms every night this week.", "extensions": {},
                 "enabled": True, "insertion_order": 1, "constant": True},
                {"keys": ["old"], "content": "Disabled entry.", "extensions": {},
                 "enabled": False, "insertion_order": 1},
                {"keys": ["^re+gex$"], "content": "Regex entry.", "extensions": {},
                 "enabled": True, "insertion_order": 1, "use_regex": True},
            ],
        },
    }  # fmt: skip
    base.update(data)
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": base}


def v3(**data: Any) -> dict[str, Any]:
    card = v2(**data)
    card["spec"], card["spec_version"] = "chara_card_v3", "3.0"
    card["data"].update({"nickname": "the keeper", "group_only_greetings": [], "assets": []})
    return card


def png(path: Path, chunks: dict[str, Any]) -> Path:
    info = PngInfo()
    for keyword, value in chunks.items():
        text = value if isinstance(value, str) else json.dumps(value)
        info.add_text(keyword, base64.b64encode(text.encode()).decode())
    Image.new("RGB", (8, 8), (20, 30, 60)).save(path, pnginfo=info)
    return path


def test_v2_json_maps_persona_greetings_examples_and_lore(tmp_path: Path) -> None:
    path = tmp_path / "nyx.json"
    path.write_text(json.dumps(v2()), encoding="utf-8")
    card = load_card(path)
    assert card.name == "Nyx" and card.report.spec == "chara_card_v2"
    assert card.persona.startswith(
        "Nyx keeps the night lighthouse of Ouessant and talks to {{user}}"
    )
    assert "Personality: dry humour, patient" in card.persona
    assert "Scenario: A stormy night; {{user}} knocks" in card.persona
    assert card.system == "Stay in character."
    assert card.post_history == "Answer in two sentences at most."
    assert card.greetings == (
        "*Nyx opens the door.* Come in, {{user}}, before the wind does.",
        "Again at my door, {{user}}?",
    )
    assert card.examples == "{{user}}: Is the lamp on?\nNyx: Always."
    assert [e.content for e in card.lore] == [
        "The lens came from Paris in 1902.", "{{char}} became keeper at nineteen.",
        "Storms every night this week.",
    ]  # fmt: skip
    keeper = card.lore[1]
    assert keeper.selective and keeper.secondary_keywords == ("first", "young")
    assert keeper.priority == 50 and card.lore[0].priority == 10  # priority, else insertion_order
    assert all(e.scan_depth == 3 and e.scope is LoreScope.CHARACTER for e in card.lore)
    assert card.lore[2].constant and card.lore_budget == 256
    assert dict(card.report.skipped) == {
        "entry 4": "disabled",
        "entry 5": "regex keys are not supported",
    }
    assert "data.character_book.entries[1].extensions.probability" in card.report.unknown
    assert "data.extensions.fav" not in card.report.unknown  # extensions is a known field
    assert any("{{original}}" in w for w in card.report.warnings)


def test_v2_png_and_v3_png_preferring_v3(tmp_path: Path) -> None:
    only_v2 = load_card(png(tmp_path / "a.png", {"chara": v2()}))
    assert only_v2.name == "Nyx" and only_v2.report.container == "PNG chunk 'chara'"
    both = load_card(png(tmp_path / "b.png", {"chara": v2(name="Old"), "ccv3": v3(name="New")}))
    assert both.name == "New" and both.report.spec == "chara_card_v3"
    assert both.report.container == "PNG chunk 'ccv3'"
    assert "data.nickname" not in both.report.unknown


def test_lorebook_entries_activate_in_a_conversation() -> None:
    card = parse_card(json.dumps(v2()))
    conversation = ["Tell me about the FRESNEL lens", "hi"]
    fired = activate(card.lore, conversation, depth=4, character="Nyx")
    assert [a.entry.content for a in fired][:2] == [
        "Storms every night this week.",
        "The lens came from Paris in 1902.",
    ]
    keeper = activate(card.lore, ["who is the keeper?"], depth=4, character="Nyx")
    assert "{{char}} became keeper at nineteen." not in [a.entry.content for a in keeper]
    young = activate(card.lore, ["the young keeper?"], depth=4, character="Nyx")
    assert "{{char}} became keeper at nineteen." in [a.entry.content for a in young]
    # Played under another name: the entries follow the character the bot plays, and {{char}}
    # is its name when an entry is shown.
    renamed = parse_card(json.dumps(v2()), played_as="Lune")
    assert activate(renamed.lore, ["fresnel"], depth=4, character="Nyx")[1:] == []
    assert {e.character for e in renamed.lore} == {"lune"}
    [block] = lore_blocks(
        activate(renamed.lore, ["young keeper"], depth=4, character="Lune")[1:],
        user_name="Marie", character="Lune",
    )  # fmt: skip
    assert block.text.endswith("Lune became keeper at nineteen.")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not valid JSON"),
        (json.dumps(v2(name="  ")).encode(), "has no name"),
        (json.dumps({"spec": "chara_card_v9", "data": {}}).encode(), "'chara_card_v9', where"),
        (json.dumps({"spec": "chara_card_v2"}).encode(), "without its 'data' object"),
        (b"[1, 2]", "its JSON is not an object"),
        (b"\xff\xfe\x00garbage", "neither a PNG image nor UTF-8 JSON text"),
    ],
)
def test_malformed_json_cards_say_what_is_wrong(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(CardError, match=message) as caught:
        load_card(path)
    assert str(caught.value).startswith(str(path))
    if "data' object" not in message and "no name" not in message:  # not a card at all
        assert str(caught.value).endswith(": give a Character Card V2/V3 file (.json, or a .png "
                                          "with the card inside)")  # fmt: skip


@pytest.mark.parametrize(
    "document", [{"title": "my notes"}, {"spec": None, "data": {"name": "Nyx"}}, {}]
)
def test_a_json_file_that_is_not_a_card_says_what_was_expected(
    tmp_path: Path, document: dict[str, object]
) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(CardError) as caught:
        load_card(path)
    assert str(caught.value) == (
        f'{path}: not a character card (no "spec": "chara_card_v2" or "chara_card_v3", and no '
        '"name"): give a Character Card V2/V3 file (.json, or a .png with the card inside)'
    )
    assert "None" not in str(caught.value)


def test_a_card_given_to_lore_import_says_to_use_card_import(tmp_path: Path) -> None:
    picture = png(tmp_path / "nyx.png", {"chara": v2()})
    with pytest.raises(CardError) as caught:
        load_lorebook(picture)
    assert str(caught.value) == (
        f"{picture}: a PNG (a character card's picture), not a lorebook: its lorebook is "
        f"imported with `echo-bot card import {picture}`"
    )
    card = tmp_path / "nyx.json"
    card.write_text(json.dumps(v2()), encoding="utf-8")
    with pytest.raises(CardError) as caught:
        load_lorebook(card)
    assert str(caught.value) == (
        f"{card}: a character card, not a lorebook: its lorebook is imported with "
        f"`echo-bot card import {card}`"
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("Eldoria is a realm.", encoding="utf-8")
    with pytest.raises(CardError, match=r"not valid JSON \(.*\): give a lorebook \.json file"):
        load_lorebook(notes)


def test_malformed_png_cards_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(CardError, match="PNG without a character card"):
        load_card(png(tmp_path / "plain.png", {"Comment": "just a picture"}))
    with pytest.raises(CardError, match="not valid JSON"):
        load_card(png(tmp_path / "broken.png", {"chara": "{oops"}))
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(png(tmp_path / "ok.png", {"chara": v2()}).read_bytes()[:60])
    with pytest.raises(CardError, match="damaged PNG"):
        load_card(truncated)
    with pytest.raises(CardError, match="cannot be read"):
        load_card(tmp_path / "missing.png")


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=20,
))  # fmt: skip
def test_any_json_either_reads_or_raises_card_error(document: Any) -> None:
    for candidate in (
        document,
        {"spec": "chara_card_v2", "data": document},
        {"spec": "chara_card_v2", "data": {"name": "X", "character_book": document}},
    ):
        try:
            card = parse_card(json.dumps(candidate))
        except CardError:
            continue
        assert card.name.strip()


def test_card_text_is_cleaned_and_nothing_is_dropped_silently() -> None:
    book = {"entries": [{"keys": [f"k{i}" for i in range(30)], "content": "c\u200bontent",
                         "extensions": {}, "enabled": True, "insertion_order": 2**70}]}  # fmt: skip
    card = parse_card(json.dumps(v2(description="A\u202e hidden\u200b turn", character_book=book)))
    assert card.persona.startswith("A hidden turn")
    [entry] = card.lore
    assert entry.content == "content" and len(entry.keywords) == 25
    assert entry.priority == 10**9  # clamped to what SQLite stores
    assert any("keys beyond the first 25 ignored" in w for w in card.report.warnings)


def test_every_spelling_of_char_and_user_the_specs_list_is_understood() -> None:
    book = {"entries": [
        {"keys": ["{{char}}'s lamp"], "content": "<bot> lights the lamp for <user> at dusk.",
         "extensions": {}, "enabled": True, "insertion_order": 1,
         "secondary_keys": ["<CHAR>"], "selective": True},
    ]}  # fmt: skip
    card = parse_card(json.dumps(v2(
        description="{{ Char }} and <BOT> and <char> greet {{USER}} and <User>.",
        character_book=book,
    )))  # fmt: skip
    assert card.persona.startswith("Nyx and Nyx and Nyx greet {{user}} and {{user}}.")
    [entry] = card.lore
    assert entry.content == "{{char}} lights the lamp for {{user}} at dusk."
    assert (entry.keywords, entry.secondary_keywords) == (("{{char}}'s lamp",), ("{{char}}",))
    # A key naming the character fires when the conversation names it.
    assert activate(card.lore, ["is nyx's lamp lit?"], depth=4, character="Nyx")
    assert not activate(card.lore, ["is the lamp lit?"], depth=4, character="Nyx")


def test_the_v1_copies_next_to_data_are_not_unknown_fields() -> None:
    card = v2()
    copies = {k: card["data"][k] for k in ("name", "description", "personality", "scenario",
                                           "first_mes", "mes_example")}  # fmt: skip
    card.update(copies, avatar="none", talkativeness="0.5")  # the last two: SillyTavern's own
    report = parse_card(json.dumps(card)).report
    assert [u for u in report.unknown if not u.startswith("data.")] == ["avatar", "talkativeness"]
    v3_card = v3()
    v3_card.update(copies)
    assert not [u for u in parse_card(json.dumps(v3_card)).report.unknown if "." not in u]


def test_an_entry_is_stored_the_same_whatever_name_plays_it() -> None:
    book = {"entries": [{"keys": ["k"], "content": "{{char}} " * 800, "extensions": {},
                         "enabled": True, "insertion_order": 1}]}  # fmt: skip
    short, long = (
        parse_card(json.dumps(v2(name=name, character_book=book)))
        for name in ("Nyx", "Nyx-of-the-lighthouse")
    )
    assert [e.content for e in short.lore] == [e.content for e in long.lore]
    assert short.report.skipped == long.report.skipped == ()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
# What a lorebook's entries may hold: SillyTavern's field names with any values.
_WORLD_INFO_ENTRY = st.dictionaries(
    st.sampled_from(["key", "keysecondary", "content", "constant", "disable", "order",
                     "selective", "caseSensitive", "comment", "scanDepth", "uid"]),
    _JSON, max_size=8,
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=st.dictionaries(st.text(max_size=3), _WORLD_INFO_ENTRY | _JSON, max_size=5))
def test_any_lorebook_is_read_or_refused_in_one_line(
    tmp_path: Path, entries: dict[str, Any]
) -> None:
    path = tmp_path / "book.json"
    path.write_text(json.dumps({"entries": entries}), encoding="utf-8")
    try:
        book = load_lorebook(path)
    except CardError as exc:
        assert "\n" not in str(exc)
        return
    assert all(e.scope is LoreScope.GLOBAL and e.content.strip() for e in book.lore)
    assert len(book.lore) + len(book.skipped) <= len(entries)
