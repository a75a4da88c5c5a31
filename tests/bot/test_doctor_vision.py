"""`echo-bot doctor` says whether the chat model sees the pictures people post: as the server
says it (Ollama's capabilities, llama-server's /props), as the bot learned it from the first
picture it sent, or not known yet."""

from __future__ import annotations

from pathlib import Path

from memory.manage import setup
from memory.store import open_store
from tests.bot.test_cli import _run
from tests.bot.test_doctor_context import MODEL, _config
from tests.fakes.ollama import serve_fake_ollama
from tests.fakes.openai import serve_fake_openai


def _vision_line(out: str) -> str:
    [line] = [line for line in out.splitlines() if "images" in line and "chat model" in line]
    return line


async def test_an_ollama_vision_model_is_said_to_see(tmp_path: Path) -> None:
    async with serve_fake_ollama() as ollama:
        ollama.sees_images = True
        _, out, _ = await _run("doctor", "--config", str(_config(tmp_path, ollama.url, "ollama")))
    assert _vision_line(out) == (
        f"OK   chat model {MODEL} sees images (the server says so): pictures posted are shown to it"
    )


async def test_a_model_without_vision_is_a_warning_with_what_to_do(tmp_path: Path) -> None:
    async with serve_fake_ollama() as ollama:
        _, out, _ = await _run("doctor", "--config", str(_config(tmp_path, ollama.url, "ollama")))
    line = _vision_line(out)
    assert line.startswith(f"WARN chat model {MODEL} does not see images (the server says so)")
    assert "use a vision model" in line


async def test_a_server_that_says_nothing_is_learned_from_the_first_picture(
    tmp_path: Path,
) -> None:
    async with serve_fake_openai() as fake:
        config = _config(tmp_path, fake.url)
        _, before, _ = await _run("doctor", "--config", str(config))
        async with await open_store(tmp_path / "echo.sqlite3") as store:
            modes = await setup.negotiator(store, override=None)
            await modes.learn_sight(fake.url, MODEL, True, "it took an image")
        _, after, _ = await _run("doctor", "--config", str(config))
    assert "does not say whether it sees images" in _vision_line(before)
    assert _vision_line(after).startswith(
        f"OK   chat model {MODEL} sees images (learned from the first picture sent)"
    )
