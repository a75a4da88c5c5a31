"""Against a server that refuses json_schema as llama-cpp-python does, as a person runs Écho:
memories still come out of the conversation, the mode learned is kept across restarts and
reported by `doctor`, `[llm] structured_output` overrides it, and only the deadlines of the
settings bound a call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.runtime import open_runtime
from memory import Incoming, manage
from memory.assembly import CONNECT_TIMEOUT
from memory.errors import BackendUnavailable
from tests.bot.terminal.test_e2e import REFLECTION, _chat
from tests.bot.test_cli import _run
from tests.fakes.openai import (
    LLAMA_CPP_PYTHON,
    FakeOpenAI,
    reflection_when_asked,
    serve_fake_openai,
)

REFUSED = "json_schema refused: response_format.type: Input should be 'text' or 'json_object'"


@pytest.fixture
async def llama_cpp_python() -> AsyncIterator[FakeOpenAI]:
    async with serve_fake_openai(LLAMA_CPP_PYTHON) as fake:
        fake.chat_reply = reflection_when_asked(REFLECTION)
        yield fake


def _config(tmp_path: Path, url: str, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbackend = "openai"\nbase_url = "{url}"\nchat_model = "smol"\n'
        f'embedding_model = "e5"\n{extra}[storage]\npath = "echo.sqlite3"\n'
        '[character]\nname = "Écho"\npersona = "Tu es Écho."\n',
        encoding="utf-8",
    )
    return path


async def test_memories_come_out_and_the_mode_is_learned_once_across_restarts(
    tmp_path: Path, llama_cpp_python: FakeOpenAI
) -> None:
    config = _config(tmp_path, llama_cpp_python.url)
    await _chat(config, ["J'ai un chat roux qui s'appelle Félix."])
    # The turn, then the reflection: refused as json_schema, accepted as json_object + schema.
    assert llama_cpp_python.modes_sent() == ["none", "json_schema", "json_object_schema"]
    out, _ = await _chat(config, ["Il a trois ans.", "/memories"])
    assert "A un chat roux nommé Félix" in out
    # After a restart, the mode learned is sent at once.
    assert llama_cpp_python.modes_sent()[3:] == ["none", "json_object_schema"]


async def test_doctor_reports_the_mode_and_what_the_server_refused(
    tmp_path: Path, llama_cpp_python: FakeOpenAI
) -> None:
    config = _config(tmp_path, llama_cpp_python.url)
    await _chat(config, ["/help"])  # the database is made by the chat: `doctor` makes none
    _, out, _ = await _run("doctor", "--config", str(config))
    line = next(x for x in out.splitlines() if "structured output" in x)
    assert line == (
        f"OK   structured output at {llama_cpp_python.url} (smol): json_object_schema (learned "
        f"from the server; {REFUSED})"
    )
    # Learned by `doctor`, not kept (a check only reads): the bot learns it at its first
    # reflection, and keeps it.
    await _chat(config, ["J'ai un chat."])
    assert llama_cpp_python.modes_sent()[-1] == "json_object_schema"


async def test_the_override_wins_and_a_refused_one_is_a_failure_with_the_servers_words(
    tmp_path: Path, llama_cpp_python: FakeOpenAI
) -> None:
    config = _config(tmp_path, llama_cpp_python.url, 'structured_output = "json_object"\n')
    _, out, _ = await _run("doctor", "--config", str(config))
    assert (f"OK   structured output at {llama_cpp_python.url} (smol): json_object (the schema "
            "is in the prompt) (set in [llm] structured_output)") in out  # fmt: skip
    assert llama_cpp_python.modes_sent() == ["json_object"]

    config = _config(tmp_path, llama_cpp_python.url, 'structured_output = "json_schema"\n')
    _, out, _ = await _run("doctor", "--config", str(config))
    url = llama_cpp_python.url
    assert (f"FAIL structured output at {url} (smol): {url}/v1/chat/completions: HTTP 500: "
            "response_format.type: Input should be 'text' or 'json_object' → try [llm] "
            'structured_output = "auto"') in out  # fmt: skip
    _, err = await _chat(config, ["J'ai un chat."])
    # The log says what the server said, never what the person did.
    assert "HTTP 500: response_format.type: Input should be 'text' or 'json_object'" in err
    assert "J'ai un chat" not in err
    settings = load_settings(config)
    async with open_runtime(settings) as runtime:
        stats = await manage.stats(runtime.store)
    assert stats.reflection_failures == {"BackendRefused": 1}
    assert stats.last_reflection_error is not None
    assert stats.last_reflection_error.endswith(
        "HTTP 500: response_format.type: Input should be 'text' or 'json_object'"
    )


async def test_only_the_settings_deadlines_bound_a_turn(
    tmp_path: Path, llama_cpp_python: FakeOpenAI
) -> None:
    settings = load_settings(_config(tmp_path, llama_cpp_python.url, "chat_timeout = 0.3\n"))
    llama_cpp_python.delay = 1.0
    async with open_runtime(settings) as runtime:
        # Connecting has its own short timeout; nothing else but the deadlines.
        timeout = runtime.http.timeout
        limits = (timeout.connect, timeout.read, timeout.write, timeout.pool)
        assert limits == (CONNECT_TIMEOUT, None, None, None)
        message = Incoming("t:1", 1, "Marie", 10, "dm", "Bonjour")
        with pytest.raises(BackendUnavailable) as caught:
            await runtime.engine.turn(message)
    assert str(caught.value) == "chat_timeout: no answer within 0.3 s"
