"""`echo-bot chat --character KEY`: the terminal talks to one of several characters, under its
name, and what it learns is that character's own memory of the person."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.cli_runner import echo_bot
from tests.bot.terminal.test_e2e import _script
from tests.fakes.ollama import FakeOllama

pytestmark = pytest.mark.slow


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{url}"\n[storage]\npath = "echo.sqlite3"\n'
        '[[characters]]\nkey = "nyx"\nname = "Nyx"\npersona = "Tu es Nyx."\n'
        '[[characters]]\nkey = "brann"\nname = "Brann"\npersona = "Tu es Brann."\n',
        encoding="utf-8",
    )
    return path


async def _chat(config: Path, lines: list[str], *extra: str) -> tuple[int, str, str]:
    return await echo_bot(
        "--config", str(config), "chat", "--user", "Marie", *extra,
        stdin="\n".join(lines).encode(),
    )  # fmt: skip


async def test_the_terminal_talks_to_the_character_named_and_keeps_its_memory_apart(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    config = _config(tmp_path, ollama.url)
    code, said, _ = await _chat(config, ["J'ai un chat roux qui s'appelle Félix."],
                                "--character", "brann")  # fmt: skip
    assert code == 0 and "Brann: Félix ! Quel joli nom." in said
    _, brann, _ = await _chat(config, ["/memories"], "--character", "brann")
    assert "A un chat roux nommé Félix" in brann
    _, nyx, _ = await _chat(config, ["/memories"])
    assert "A un chat roux nommé Félix" not in nyx and "No memories here." in nyx
    code, _, err = await _chat(config, ["Bonjour"], "--character", "nope")
    assert code != 0 and "no character 'nope' (there are: nyx, brann)" in err
    assert len([line for line in err.splitlines() if "nope" in line]) == 1
