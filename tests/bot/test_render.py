from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.render import (
    DISCORD_LIMIT,
    defang,
    render_anchors,
    render_positions,
    render_why,
    split_message,
)
from memory.manage.story import Positions
from memory.model import Kind, Memory, Reason, Scope, Selected, Turn
from memory.store.queries.moderation import HeldAnchor, PositionDrop
from memory.store.tables.positions import Position
from tests.timebox import within


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=9000))
def test_split_keeps_every_word_and_respects_the_limit(text: str) -> None:
    chunks = split_message(text)
    assert all(0 < len(c) <= DISCORD_LIMIT for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())


# Texts where every separator the splitter looks for is common, and words of every length.
_spaced = st.text(
    alphabet=st.sampled_from(["a", "b", "é", " ", "\n", ".", "!", "?", "…", "\t", "\u00a0"]),
    max_size=400,
)


def _kept(text: str, chunks: list[str]) -> bool:
    """Whether the chunks are the text stripped, in order, with only whitespace between them."""
    rest = text.strip()
    for n, chunk in enumerate(chunks):
        if n:
            rest = rest.lstrip()
        if not rest.startswith(chunk):
            return False
        rest = rest[len(chunk) :]
    return rest == ""


@given(st.integers(min_value=-3, max_value=60), st.one_of(_spaced, st.text(max_size=200)))
def test_split_ends_for_any_limit_and_keeps_the_text(limit: int, text: str) -> None:
    with within(10.0):  # a hang guard, not a measure: the split used to never end
        if limit < 1:
            with pytest.raises(ValueError, match="at least 1 character"):
                split_message(text, limit)
            return
        chunks = split_message(text, limit)
    assert all(0 < len(c) <= limit and c == c.strip() for c in chunks)
    assert _kept(text, chunks)


def test_split_prefers_paragraphs_then_sentences() -> None:
    first = "A" * 1500 + "."
    text = first + "\n\n" + "B" * 1000
    assert split_message(text) == [first, "B" * 1000]
    sentences = ("Une phrase. " * 200).strip()
    chunks = split_message(sentences)
    assert all(c.endswith(".") for c in chunks)


_mentions = st.lists(
    st.sampled_from(["@everyone", "@here", "@EveryOne", "<@&123>", "hi", " ", "@", "<@456>"]),
    max_size=30,
).map("".join)


@given(_mentions)
def test_defanged_text_cannot_mass_ping_or_ping_roles(text: str) -> None:
    out = defang(text)
    assert not re.search(r"@(everyone|here)", out, re.I)
    assert not re.search(r"<@&\d+>", out)


def test_why_groups_by_reason_and_says_when_degraded() -> None:
    memory = Memory(id=3, user_id=1, text="Likes @everyone", kind=Kind.FACT, scope=Scope.GLOBAL)
    turn = Turn(id=1, user_id=1, story_id=2, selected=(Selected(memory, Reason.SEMANTIC, 0.41),),
                degraded=True)  # fmt: skip
    text = render_why(turn)
    assert "Degraded turn" in text and "**Recalled by meaning or keywords** (1)" in text
    assert "cos 0.41" in text and "@everyone" not in text
    assert render_why(None).startswith("No turn of yours here yet")


def test_anchors_and_positions_say_their_days_in_the_readers_language() -> None:
    """The dates of /anchors and /positions (and their glue) follow the reader's language;
    the rest stays English."""
    first, third = (datetime(2026, 12, d, 12, tzinfo=UTC).timestamp() for d in (1, 3))
    anchors = [
        HeldAnchor(1, "Léa lives in Lyon", first, added_by=7),
        HeldAnchor(2, "The boat sank", first, dropped_at=third, drop_reason="wrong", dropped_by=7),
    ]
    found = Positions(
        (Position(3, "cats", "they are proud", "", first, third),),
        (PositionDrop(4, "dogs", "rude", 7, first),),
    )
    assert render_anchors(anchors, language="en").splitlines()[1:] == [
        "`#1` Léa lives in Lyon (added by <@7>, 2026-12-01)",
        "**Dropped** (last 1)",
        "`#2` The boat sank — dropped by <@7> on 2026-12-03: wrong",
    ]
    assert render_anchors(anchors, language="fr").splitlines()[1:] == [
        "`#1` Léa lives in Lyon (added by <@7>, le 1er déc. 2026)",
        "**Dropped** (last 1)",
        "`#2` The boat sank — dropped by <@7> le 3 déc. 2026: wrong",
    ]
    assert render_positions(found) == (
        "`#3` **cats** — they are proud (re-anchored 2026-12-03)\n**Dropped** (last 1)\n"
        "dogs — dropped by <@7> on 2026-12-01: rude"
    )
    assert render_positions(found, language="fr") == (
        "`#3` **cats** — they are proud (réancrée le 3 déc. 2026)\n**Dropped** (last 1)\n"
        "dogs — dropped by <@7> le 1er déc. 2026: rude"
    )
