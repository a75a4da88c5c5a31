"""The terminal shows the texts people wrote exactly as stored: the `**` and backticks of a
memory survive in /memories and /why, while our own markup around them is taken away."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import render
from bot.plain import for_terminal, plain
from memory.model import Kind, Memory, Reason, Scope, Selected, Turn
from tests.bot.terminal.test_e2e import _chat, _config
from tests.fakes.ollama import FakeOllama

WRITTEN = "A un chat nommé **Félix** qui dort sur `le clavier`"


def _script(ollama: FakeOllama) -> None:
    reflection = {
        "memories": [{"text": WRITTEN, "kind": "fact", "scope": "global", "confidence": 0.95}],
        "summary": "Marie parle de son chat.",
        "state": {},
    }

    def reply(payload: dict[str, Any]) -> str:
        if "format" in payload:
            return json.dumps(reflection, ensure_ascii=False)
        return "Quel joli chat."

    ollama.chat_reply = reply


async def test_a_memory_with_markup_is_shown_verbatim_by_memories_and_why(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    config = _config(tmp_path, ollama.url)
    out, _ = await _chat(
        config, ["Mon chat Félix dort sur le clavier.", "Et Félix, tu t'en souviens ?",
                 "/memories", "/why"],
    )  # fmt: skip
    listed, why = out.split("Your memories — page")[1].split("Recalled by meaning")
    shown = re.compile(r"^#1 fact·global .* — " + re.escape(WRITTEN) + "$", re.MULTILINE)
    assert shown.search(listed), listed  # our `#1` lost its backticks, the memory kept its own
    assert shown.search(why), why
    assert "**" not in out.replace(WRITTEN, "")  # no markup of ours left anywhere


_text = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1)


@settings(deadline=None)  # a loaded machine's pause is not a failure
@given(_text)
def test_any_memory_text_comes_back_whole_in_plain_text(text: str) -> None:
    memory = Memory(id=3, user_id=1, text=text, kind=Kind.FACT, scope=Scope.GLOBAL)
    turn = Turn(id=1, user_id=1, story_id=2, selected=(Selected(memory, Reason.PINNED, None),))
    with for_terminal():
        why = render.render_why(turn)
        listed = render.render_memories([memory], page_index=0, pages=1, total=1)
    for shown in (plain(why), plain(listed)):
        assert f"#3 fact·global · c/s/sem 0/0/0 — {render.defang(text)}" in shown
        assert "\x0e" not in shown and "\x0f" not in shown
    # Outside the terminal, renderings are unmarked: Discord gets the same text as before.
    assert render.render_why(turn).count("`#3`") == 1 and "\x0e" not in render.render_why(turn)
