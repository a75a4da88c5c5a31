"""What the terminal prints of the shared renderings: plain text, abbreviations explained,
numbers with their noun in the right form."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.plain import plain
from bot.render import (
    _MARKS,
    CONTEXT_LEGEND,
    cannot_answer,
    count,
    render_memories,
    render_stats,
    render_why,
)
from memory.context.strategies import Status
from memory.errors import BackendUnavailable
from memory.manage import Stats
from memory.model import Kind, Memory, Reason, Scope, Selected, Turn
from memory.turn.admission import AdmissionStatus
from memory.turn.values import EngineStatus
from memory.vectors.indexer import IndexerStatus


def _stats(users: int) -> Stats:
    return Stats(memories=users, users=users, degraded_turns=0, turns=1, outbox_pending=0,
                 rejections={}, reflection_failures={})  # fmt: skip


def test_why_in_plain_text_says_what_its_abbreviations_mean() -> None:
    memory = Memory(id=3, user_id=1, text="Aime le thé", kind=Kind.FACT, scope=Scope.GLOBAL)
    turn = Turn(id=1, user_id=1, story_id=2, selected=(Selected(memory, Reason.SEMANTIC, 0.41),))
    shown = plain(render_why(turn))
    assert shown.splitlines()[:2] == [
        "Recalled by meaning or keywords (1)",
        "#3 fact·global · cos 0.41 · c/s/sem 0/0/0 — Aime le thé",
    ]
    assert shown.splitlines()[-1] == (
        "c/s/sem = times a candidate / served / served by meaning; "
        "cos = closeness in meaning to your message (cosine, up to 1)."
    )
    # With no memory line, no legend: the answer is the one line saying so.
    empty = Turn(id=2, user_id=1, story_id=2, selected=())
    assert render_why(empty) == "No memory was used for your last message here."
    listed = plain(render_memories([memory], page_index=0, pages=1, total=1))
    assert listed.endswith("\nc/s/sem = times a candidate / served / served by meaning.")


def test_stats_speak_of_one_person_and_of_people() -> None:
    idle = IndexerStatus(pending=1, last_run=None, last_error=None, embedded_total=1)
    assert "Memories: 1 (of 1 person)" in render_stats(_stats(1), idle)
    assert "Memories: 2 (of 2 people)" in render_stats(_stats(2), idle)
    assert "Memories: 0 (of 0 people)" in render_stats(_stats(0), idle)
    assert [count(n, "memory", "memories") for n in (0, 1, 2, 1000)] == [
        "0 memories", "1 memory", "2 memories", "1,000 memories"
    ]  # fmt: skip


# Texts reach the renderer cleaned: no control characters (two of them mark a person's text in
# the terminal, see bot/plain.py), no lone surrogates.
_words = st.characters(blacklist_characters="*`\n", blacklist_categories=["Cs", "Cc"])


@settings(deadline=None)  # a loaded machine's pause is not a failure
@given(st.text(alphabet=_words, min_size=1))
def test_plain_takes_away_the_markup_and_keeps_the_words(words: str) -> None:
    assert plain(f"**{words}** `{words}`") == f"{words} {words}"
    assert plain(words) == words


def test_plain_leaves_a_lone_star_and_a_roleplay_action() -> None:
    assert plain("*waves* 5 * 3 `") == "*waves* 5 * 3 `"


def test_the_context_legend_names_each_mark_as_the_count_line_does() -> None:
    # The count line says "N blocks in · N condensed · N left out": the legend uses those words.
    words = {Status.INCLUDED: "in", Status.CUT: "cut to fit", Status.CONDENSED: "condensed",
             Status.EXCLUDED: "left out"}  # fmt: skip
    assert set(words) == set(Status)
    for status, word in words.items():
        assert f"{_MARKS[status]} {word} ·" in CONTEXT_LEGEND


def test_cannot_answer_names_the_server_without_its_credentials() -> None:
    down = BackendUnavailable("http://***@llm.local:11434/api/chat: ConnectError: refused")
    said = cannot_answer("Écho", down, base_url="http://me:s3cret@llm.local:11434")
    assert "s3cret" not in said
    assert said.endswith(
        ". Is the LLM server at http://***@llm.local:11434 running? It is [llm] base_url in the "
        "config; `echo-bot doctor` checks it and the models]"
    )


def test_stats_say_a_chat_server_taking_one_request_at_a_time_and_the_edits_waiting() -> None:
    idle = IndexerStatus(pending=0, last_run=None, last_error=None, embedded_total=0)
    calm = EngineStatus(AdmissionStatus(0, 0, 0, 0), 0, 0)
    learned = EngineStatus(
        AdmissionStatus(0, 0, 1, 7), 0, 0, chat_one_at_a_time=True, chat_asked_again=2
    )
    assert "one request at a time" not in render_stats(_stats(1), idle, calm)
    shown = render_stats(_stats(1), idle, learned)
    assert "Chat server: one request at a time, replies first" in shown
    assert "2 calls asked again alone" in shown
    assert "7 edits of messages waiting to be followed" in shown
