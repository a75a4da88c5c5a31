"""`echo-bot doctor` says the context the chat server takes for the chat model, and warns with
the value to set when [context] context_length is larger (the engine keeps within the server's
all the same): said by the server (llama.cpp's /props, vLLM's /v1/models, Ollama's /api/show),
learned from its refusal (llama-cpp-python), or unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.manage import setup
from memory.store import open_store
from tests.bot.test_cli import _run
from tests.fakes.ollama import serve_fake_ollama
from tests.fakes.openai import serve_fake_openai

MODEL = "/models/SmolLM2-135M-Instruct.gguf"


def _config(tmp_path: Path, url: str, backend: str = "openai", model: str = MODEL) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbackend = "{backend}"\nbase_url = "{url}"\nchat_model = "{model}"\n'
        'embedding_model = "nomic-embed-text"\n[storage]\npath = "echo.sqlite3"\n',
        encoding="utf-8",
    )
    return path


def _context_line(out: str) -> str:
    [line] = [line for line in out.splitlines() if "context" in line and "chat server" in line]
    return line


@pytest.mark.parametrize("says", ["props", "models"])
async def test_a_server_smaller_than_context_length_is_a_warning_with_the_value(
    tmp_path: Path, says: str
) -> None:
    async with serve_fake_openai() as fake:
        fake.context, fake.says_context = 512, says
        _, out, _ = await _run("doctor", "--config", str(_config(tmp_path, fake.url)))
    line = _context_line(out)
    assert line.startswith(f"WARN chat server {fake.url} ({MODEL}) takes 512 tokens of context")
    assert "fewer than [context] context_length = 8,192" in line
    assert line.endswith(
        "→ set [context] context_length = 512, or start the server with a larger context"
    )


async def test_a_server_large_enough_is_ok(tmp_path: Path) -> None:
    async with serve_fake_ollama() as ollama:
        config = _config(tmp_path, ollama.url, "ollama", "llama3.1:8b")
        _, out, _ = await _run("doctor", "--config", str(config))
    assert _context_line(out) == (
        f"OK   chat server {ollama.url} (llama3.1:8b) takes 131,072 tokens of context (it says "
        "so); [context] context_length 8,192 fits"
    )


async def test_a_server_that_says_nothing_is_unknown_until_it_refused(tmp_path: Path) -> None:
    async with serve_fake_openai() as fake:
        fake.context = 512
        config = _config(tmp_path, fake.url)
        _, before, _ = await _run("doctor", "--config", str(config))
        async with await open_store(tmp_path / "echo.sqlite3") as store:
            sizes = await setup.context_sizes(store)
            await sizes.learn(fake.url, MODEL, 512, "refusal")
        _, after, _ = await _run("doctor", "--config", str(config))
    line = _context_line(before)
    assert line.startswith("WARN") and "does not say its context" in line
    assert "context_length = 8192 (--n_ctx)" in line
    line = _context_line(after)
    assert line.startswith("WARN")
    assert "takes 512 tokens of context (learned when it refused a longer prompt)" in line
    assert "set [context] context_length = 512" in line
