"""A character's name made one Discord takes for a webhook's username, wherever it came from:
Discord's rules (1 to 80 characters; no "discord", "clyde", "@", "#", ":" or "```"; not
"everyone" or "here"), checked here as Discord states them, independently of how the name is
adjusted."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory import Character, Characters, valid_name
from memory.character.names import NAME_LIMIT

_REFUSED_INSIDE = ("discord", "clyde", "@", "#", ":", "```")


def discord_takes(name: str) -> bool:
    folded = name.casefold()
    return (
        1 <= len(name) <= NAME_LIMIT
        and not any(word in folded for word in _REFUSED_INSIDE)
        and folded.strip() not in ("everyone", "here")
        and name == name.strip()
        and "\n" not in name
    )


_risky = st.lists(
    st.sampled_from(
        ["Discord", "disc", "ord", "CLYDE", "cly", "de", "@", "#", ":", "`", "everyone", "here",
         " ", "\n", "\t", "\u200a", "Nyx", "é", "x" * 30]
    ),
    max_size=40,
).map("".join)  # fmt: skip


@given(st.one_of(_risky, st.text(max_size=300)))
def test_any_name_becomes_one_discord_takes_and_stays_so(name: str) -> None:
    made = valid_name(name)
    assert discord_takes(made)
    assert valid_name(made) == made


@given(st.text(alphabet=st.characters(categories=["L", "N"]), min_size=1, max_size=NAME_LIMIT))
def test_a_name_discord_takes_is_left_as_it_is(name: str) -> None:
    if discord_takes(name):
        assert valid_name(name) == name


@pytest.mark.parametrize(
    ("name", "made"),
    [
        ("Clyde of the Discord", "Cly\u200ade of the Disc\u200aord"),
        ("Dr. Who: @Clara #1", "Dr. Who\ua789 \uff20Clara \uff031"),
        ("everyone", "every\u200aone"),
        ("  Here \n", "He\u200are"),
        ("a```b", "a`\u200a`\u200a`b"),
        ("\n\t ", "Écho"),
        ("N" * 2100, "N" * NAME_LIMIT),
    ],
)
def test_how_a_name_is_adjusted(name: str, made: str) -> None:
    assert valid_name(name) == made


def test_a_cast_plays_every_character_under_a_valid_name() -> None:
    long = Character("L" * 2100, "", key="long")
    cast = Characters([long, Character("Nyx", "", key="nyx")])
    assert [c.name for c in cast] == ["L" * NAME_LIMIT, "Nyx"]
    assert cast.need("long").name == "L" * NAME_LIMIT
