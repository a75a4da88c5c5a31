"""The README's set-up, the first screen a newcomer reads, says how to get the LLM it needs:
the models the default config names, and the lines to change for another server, each a real
setting."""

from __future__ import annotations

import re
from pathlib import Path

from bot.config import LLMSettings

README = Path(__file__).parents[1] / "README.md"
# About what a terminal shows before any scrolling.
FIRST_SCREEN = 60


def _set_up() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Set up")
    return text[start : text.index("\n## ", start + 1)]


def test_the_first_screen_says_to_pull_the_models_the_default_config_names() -> None:
    first = "\n".join(README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])
    defaults = LLMSettings()
    assert f"ollama pull {defaults.chat_model}" in first
    assert f"ollama pull {defaults.embedding_model}" in first
    assert "multilingual" in first and "French" in first
    for server in ("llama-server", "vLLM", "LM Studio"):
        assert server in first


def test_every_line_the_set_up_says_to_change_is_a_real_setting() -> None:
    # `key = value` in the text, or a line of a ```toml block (commented out or not).
    named = re.findall(r"`(\w+) = [^`]*`|^(?:# )?(\w+) = ", _set_up(), re.M)
    named = [inline or line for inline, line in named]
    assert {"backend", "base_url", "chat_model", "embedding_model"} <= set(named)
    assert set(named) <= set(LLMSettings.model_fields), set(named) - set(LLMSettings.model_fields)
    assert 'backend = "openai"' in _set_up()
