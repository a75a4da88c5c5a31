"""The options typed after /remember's and /context's text in the terminal (`kind:rule`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.terminal import options
from memory.errors import InvalidInput

CHOICES = {**options.REMEMBER, **options.CONTEXT}
_texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=80)
# Words that look like options, or nearly: the parser meets these at the end of a text.
_tricky = st.sampled_from(
    ["kind:rule", "\\kind:rule", "\\\\scope:story", "kind:", "kind:nope", "Kind:rule",
     "full:true", "kind=rule", ":rule", "scope:story:", "\\", "kind:rule\\"]
)  # fmt: skip
_options = st.fixed_dictionaries(
    {}, optional={name: st.sampled_from(values) for name, values in CHOICES.items()}
)


@settings(deadline=None)  # a loaded machine's pause is not a failure
@given(st.lists(st.one_of(_texts, _tricky), max_size=6).map(" ".join), _options)
def test_any_text_and_options_come_back_as_written(text: str, chosen: dict[str, str]) -> None:
    assert options.split(options.join(text, chosen, CHOICES), CHOICES) == (text.strip(), chosen)


@settings(deadline=None)  # a loaded machine's pause is not a failure
@given(_texts)
def test_a_text_that_does_not_end_with_an_option_is_all_text(text: str) -> None:
    words = text.split()
    last = words[-1].lstrip("\\") if words else ""
    name, colon, _ = last.partition(":")
    if colon and name in CHOICES:
        return
    assert options.split(text, CHOICES) == (text.strip(), {})


@pytest.mark.parametrize(
    ("line", "text", "chosen"),
    [
        ("Call me Sam kind:rule", "Call me Sam", {"kind": "rule"}),
        ("Likes the sea scope:story kind:preference", "Likes the sea",
         {"scope": "story", "kind": "preference"}),
        ("kind:rule in the middle stays text", "kind:rule in the middle stays text", {}),
        ("Kind:rule is not the option's form", "Kind:rule is not the option's form", {}),
        ("I like \\kind:rule", "I like kind:rule", {}),
        ("I like \\\\kind:rule kind:fact", "I like \\kind:rule", {"kind": "fact"}),
        ("And the lighthouse? full:true", "And the lighthouse?", {"full": "true"}),
        ("I am full", "I am full", {}),
        ("full:false", "", {"full": "false"}),
    ],
)  # fmt: skip
def test_options_are_read_only_in_their_form(line: str, text: str, chosen: dict[str, str]) -> None:
    assert options.split(line, CHOICES) == (text, chosen)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("Likes tea kind:nope", "kind:nope? kind is one of fact, preference, promise, episode, "
         "rule (to keep the word in the text, write \\kind:nope)"),
        ("Likes tea kind:rule kind:fact", "kind is given twice"),
        ("Likes tea full:yes", "full:yes? full is one of true, false"),
    ],
)  # fmt: skip
def test_a_mistake_in_an_option_is_one_line(line: str, said: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        options.split(line, CHOICES)
    assert str(caught.value).startswith(said)
