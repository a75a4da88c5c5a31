"""/retry and /swipe N in the terminal: another answer to the last message, shown instead of the
one before, and the memory learning the answer kept when the script moves on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.terminal.chat import terminal_user_id
from bot.terminal.options import HELP
from memory import manage
from tests.bot.terminal.test_commands import _runtime, _typed
from tests.fakes.ollama import FakeOllama


def _numbered(ollama: FakeOllama) -> list[str]:
    """Replies numbered per request ("Réponse 1", "Réponse 2", …); a reflection remembers the
    reply it was given. Returns the replies each reflection was given."""
    given: list[str] = []
    count = {"n": 0}

    def reply(payload: dict[str, Any]) -> str:
        if "format" not in payload:
            count["n"] += 1
            return f"Réponse {count['n']}."
        asked = json.loads(payload["messages"][-1]["content"])
        given.append(asked["character_reply"])
        memory = {"text": f"A entendu {asked['character_reply']}", "kind": "fact",
                  "scope": "global", "confidence": 0.9}  # fmt: skip
        return json.dumps({"memories": [memory], "summary": "", "state": {}})

    ollama.chat_reply = reply
    return given


async def test_retry_and_swipe_show_the_answers_and_the_memory_learns_the_kept_one(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    given = _numbered(ollama)
    async with _runtime(tmp_path, ollama) as runtime:
        out = await _typed(runtime, "Marie", ["Bonjour", "/retry", "/retry", "/swipe 2"])
        memories = await manage.list_memories(runtime.store, terminal_user_id("Marie"))
    lines = out.splitlines()
    assert lines == [
        "Écho: Réponse 1.",
        "Écho: Réponse 2.", "(answer 2/2)",
        "Écho: Réponse 3.", "(answer 3/3)",
        "Écho: Réponse 2.", "(answer 2/3)",
    ]  # fmt: skip
    # Reflected once, at the end of the script, from the answer kept.
    assert given == ["Réponse 2."]
    assert [m.text for m in memories] == ["A entendu Réponse 2."]


async def test_once_moved_on_the_answers_no_longer_change(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    given = _numbered(ollama)
    async with _runtime(tmp_path, ollama) as runtime:
        out = await _typed(runtime, "Marie", ["/retry", "Bonjour", "/memories", "/retry"])
    assert "Nothing to answer again yet" in out
    assert "The answers to this message can no longer change." in out
    assert given == ["Réponse 1."]
    assert "/retry" in HELP and "/swipe N" in HELP
