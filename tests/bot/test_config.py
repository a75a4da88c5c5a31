from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_config_is_valid_and_matches_the_defaults() -> None:
    settings = load_settings(ROOT / "config.example.toml")
    assert settings.memory.memories_per_turn == 24
    assert settings.memory.cosine_threshold == 0.32
    assert settings.memory.quotas == {"fact": 6, "preference": 5, "promise": 4, "episode": 5}
    assert settings.storage.path == ROOT / "data" / "echo.sqlite3"


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: no such file"):
        load_settings(tmp_path / "nope.toml")


def test_invalid_value_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[memory]\nmemories_per_turn = "many"\n')
    with pytest.raises(ConfigError, match=r"c\.toml: memory\.memories_per_turn: "):
        load_settings(path)


def test_unknown_key_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[character]\nnmae = "Lune"\n')
    with pytest.raises(ConfigError, match=r"unknown setting .character\.nmae."):
        load_settings(path)


def test_broken_toml_says_where(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[character\n")
    with pytest.raises(ConfigError, match=r"invalid TOML.*line 1"):
        load_settings(path)


def test_environment_and_secrets_override_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[llm]\nchat_model = "from-file"\n[discord]\nchannels = [1]\n')
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "discord__token").write_text("from-secret-file")
    monkeypatch.setenv("ECHO_LLM__CHAT_MODEL", "from-env")
    settings = load_settings(path, secrets_dir=secrets)
    assert settings.llm.chat_model == "from-env"
    assert settings.discord.channels == [1]
    assert settings.discord.token is not None
    assert settings.discord.token.get_secret_value() == "from-secret-file"
    assert "from-secret-file" not in repr(settings)


def test_cli_prints_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[memory]\nsemantic_slots = -1\n")
    assert main(["--config", str(path), "check-config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "memory.semantic_slots" in err and "Traceback" not in err


def test_context_settings_leave_room_for_a_prompt_and_name_a_real_strategy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings(ROOT / "config.example.toml")
    assert (settings.context.context_length, settings.context.response_tokens) == (8192, 1024)
    assert settings.context.strategy == "summarize"
    path = tmp_path / "c.toml"
    path.write_text("[context]\ncontext_length = 1024\nresponse_tokens = 900\n")
    with pytest.raises(ConfigError, match=r"context: .*leave at least 256"):
        load_settings(path)
    path.write_text('[context]\nstrategy = "sumarize"\n')
    assert main(["--config", str(path), "check-config"]) == 2
    err = capsys.readouterr().err
    assert "no strategy 'sumarize' (available: manual, summarize, truncate, vector-recall)" in err
    path.write_text('[context]\nstrategy = "vector-recall"\n')
    assert main(["--config", str(path), "check-config"]) == 0
    assert "context strategy 'vector-recall'" in capsys.readouterr().out


def test_a_key_with_surrounding_whitespace_is_stripped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[llm]\napi_key = "  sk-test-123\\t\\n"\n')
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "discord__token").write_text("tok.en \n")  # `echo TOKEN > file` leaves a newline
    settings = load_settings(path, secrets_dir=secrets)
    assert settings.llm.api_key is not None and settings.discord.token is not None
    assert settings.llm.api_key.get_secret_value() == "sk-test-123"
    assert settings.discord.token.get_secret_value() == "tok.en"
    monkeypatch.setenv("ECHO_LLM__API_KEY", "   ")
    assert load_settings(path).llm.api_key is None  # only whitespace: no key


@pytest.mark.parametrize("inside", ["\\n", "\\u0000", "\\r", "\\u001b[2J", "\\u00e9"])
def test_a_key_with_a_control_character_is_one_line_that_does_not_show_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], inside: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f'[llm]\napi_key = "sk-SECRET{inside}tail"\n')
    with pytest.raises(ConfigError, match=r"c\.toml: llm\.api_key: .*control character"):
        load_settings(path)
    assert main(["--config", str(path), "check-config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "llm.api_key" in err
    assert "SECRET" not in err and "tail" not in err


def test_the_limits_reach_the_engine_and_the_example_states_the_defaults(tmp_path: Path) -> None:
    from bot.runtime import memory_config
    from memory.admission import MAX_CHATS, NOTICE_INTERVAL, TURN_QUEUE
    from memory.engine import MAX_REPLY_CHARS, MemoryConfig
    from memory.store.outbox import BACKLOG_PER_PERSON

    example = load_settings(ROOT / "config.example.toml").limits
    assert (example.turn_queue, example.max_concurrent_chats, example.slow_down_interval,
            example.reflection_backlog, example.max_reply_chars) == (
        TURN_QUEUE, MAX_CHATS, NOTICE_INTERVAL, BACKLOG_PER_PERSON, MAX_REPLY_CHARS
    )  # fmt: skip

    def limits(c: MemoryConfig) -> tuple[float, ...]:
        return (c.turn_queue, c.slow_down_interval, c.reflection_backlog, c.max_reply_chars)

    assert limits(memory_config(load_settings(ROOT / "config.example.toml"))) == limits(
        MemoryConfig()
    )
    path = tmp_path / "c.toml"
    path.write_text("[limits]\nturn_queue = 0\nmax_reply_chars = 500\n")
    chosen = memory_config(load_settings(path))
    assert (chosen.turn_queue, chosen.max_reply_chars) == (0, 500)
