"""`echo-bot doctor` against OpenAI-compatible servers that list their models their own way:
llama-cpp-python lists the GGUF file it was started with and answers to any model name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from memory.manage import setup
from memory.store import open_store
from tests.bot.test_cli import _run
from tests.fakes.loopback import serve
from tests.fakes.ollama import fake_vector

GGUF = "/models/SmolLM2-135M-Instruct-Q8_0.gguf"


@asynccontextmanager
async def _openai_server(*listed: str, per_token: bool = False) -> AsyncIterator[str]:
    """A loopback OpenAI-compatible server that lists `listed` and, like llama-cpp-python,
    answers chat and embedding requests whatever model they name."""

    async def models(_: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": m, "object": "model"} for m in listed]}
        )

    async def chat(request: web.Request) -> web.Response:
        payload = await request.json()
        return web.json_response({
            "model": payload.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "{}"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1},
        })  # fmt: skip

    async def embeddings(request: web.Request) -> web.Response:
        texts = (await request.json())["input"]
        texts = [texts] if isinstance(texts, str) else texts
        # Unpooled (llama-cpp-python serving a chat model): a vector for each word.
        data = [
            {"index": i, "embedding": [fake_vector(w) for w in t.split()] if per_token
             else fake_vector(t)}
            for i, t in enumerate(texts)
        ]  # fmt: skip
        return web.json_response({"object": "list", "data": data})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/v1/embeddings", embeddings)
    async with serve(app) as url:
        yield url


def _config(tmp_path: Path, url: str, chat_model: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbackend = "openai"\nbase_url = "{url}"\nchat_model = "{chat_model}"\n'
        'embedding_model = "e5"\n[storage]\npath = "echo.sqlite3"\n',
        encoding="utf-8",
    )
    return path


def _chat_line(out: str) -> str:
    """The line on the chat model itself (not the one on whether it sees images)."""
    [line] = [line for line in out.splitlines() if " chat model " in line and " images" not in line]
    return line


async def test_a_server_listing_its_gguf_file_is_a_warning_with_the_setting(
    tmp_path: Path,
) -> None:
    async with _openai_server(GGUF) as url:
        _, out, _ = await _run("doctor", "--config", str(_config(tmp_path, url, "llama3.1:8b")))
    line = _chat_line(out)
    assert line.startswith("WARN chat model llama3.1:8b is not listed")
    assert f"lists {GGUF}" in line and "answer to any name" in line
    assert line.endswith(f'→ to match, set [llm] chat_model = "{GGUF}"')


async def test_the_listed_file_as_chat_model_is_ok(tmp_path: Path) -> None:
    async with _openai_server(GGUF) as url:
        _, out, _ = await _run("doctor", "--config", str(_config(tmp_path, url, GGUF)))
    assert _chat_line(out) == f"OK   chat model {GGUF} is available at {url}"
    assert "one request at a time" not in out  # nothing learned of it


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        (("gpt-4o-mini", "gpt-4o"), "lists gpt-4o-mini, gpt-4o → load it in the server, or set "
                                    '[llm] chat_model = "gpt-4o-mini"'),
        ((), "lists no model → load one"),
    ],
)  # fmt: skip
async def test_a_model_a_named_server_does_not_list_is_a_failure_with_what_it_lists(
    tmp_path: Path, listed: tuple[str, ...], expected: str
) -> None:
    async with _openai_server(*listed) as url:
        code, out, _ = await _run("doctor", "--config", str(_config(tmp_path, url, "llama3.1:8b")))
    line = _chat_line(out)
    assert line.startswith("FAIL chat model llama3.1:8b") and line.endswith(expected)
    assert code == 1


async def test_one_server_for_chat_and_unpooled_embeddings_is_told_what_to_set(
    tmp_path: Path,
) -> None:
    async with _openai_server(GGUF, per_token=True) as url:
        _, out, _ = await _run("doctor", "--config", str(_config(tmp_path, url, GGUF)))
    [line] = [line for line in out.splitlines() if "one vector per token" in line]
    assert line.startswith("FAIL") and "embedding_base_url" in line and "--pooling" in line


async def test_a_server_learned_to_take_one_request_at_a_time_is_said_with_its_option(
    tmp_path: Path,
) -> None:
    async with _openai_server(GGUF) as url:
        config = _config(tmp_path, url, GGUF)
        async with await open_store(tmp_path / "echo.sqlite3") as store:
            await setup.on_one_at_a_time(store, url, GGUF)()
        _, out, _ = await _run("doctor", "--config", str(config))
    [line] = [line for line in out.splitlines() if "one request at a time" in line]
    assert line.startswith("WARN") and "--interrupt_requests false" in line and url in line
