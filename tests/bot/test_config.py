from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_database_path_is_relative_to_the_config_file() -> None:
    settings = load_settings(ROOT / "config.example.toml")
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


def test_a_bad_environment_variable_is_blamed_on_the_variable_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[memory]\nsemantic_slots = 3\n")
    monkeypatch.setenv("ECHO_MEMORY__MEMORIES_PER_TURN", "many")
    with pytest.raises(ConfigError) as raised:
        load_settings(path)
    assert str(raised.value).startswith("ECHO_MEMORY__MEMORIES_PER_TURN: ")
    assert "c.toml" not in str(raised.value)
    monkeypatch.delenv("ECHO_MEMORY__MEMORIES_PER_TURN")
    monkeypatch.setenv("echo_memory__nope", "1")  # matched regardless of case, named as written
    with pytest.raises(ConfigError, match=r"^echo_memory__nope: no such setting$"):
        load_settings(path)
    monkeypatch.delenv("echo_memory__nope")
    # A list must be JSON in the environment: one line naming the variable, not a traceback.
    monkeypatch.setenv("ECHO_DISCORD__TOKEN", "not-json-and-fine")
    monkeypatch.setenv("ECHO_DISCORD__CHANNELS", "[1, x]")
    assert main(["--config", str(path), "check-config"]) == 2
    err = capsys.readouterr().err
    assert err == "echo-bot: ECHO_DISCORD__CHANNELS: not valid JSON (a list or a table is " \
        "written in JSON there: [1, 2])\n"  # fmt: skip


def test_a_bad_secret_file_is_blamed_on_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("")
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "llm__api_key").write_text("sk-\x00")
    with pytest.raises(ConfigError, match=r"^the secret file .*llm__api_key: .*control character"):
        load_settings(path, secrets_dir=secrets)


def test_a_renamed_key_names_its_new_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[llm]\nnum_ctx = 4096\n")
    with pytest.raises(
        ConfigError, match=r"c\.toml: \[llm\] num_ctx is now \[context\] context_length$"
    ):
        load_settings(path)
    path.write_text("")
    monkeypatch.setenv("ECHO_LLM__NUM_CTX", "4096")
    with pytest.raises(
        ConfigError, match=r"^ECHO_LLM__NUM_CTX was renamed ECHO_CONTEXT__CONTEXT_LENGTH$"
    ):
        load_settings(path)


def test_every_renamed_key_points_at_a_real_setting_and_is_gone() -> None:
    from bot.config import RENAMED, Settings

    def keys(section: str) -> set[str]:
        model = Settings.model_fields[section].annotation
        assert model is not None
        return set(model.model_fields)  # type: ignore[attr-defined]

    for (old_section, old_key), (section, key) in RENAMED.items():
        assert key in keys(section) and old_key not in keys(old_section)


def test_a_postgresql_url_selects_it_and_its_password_comes_from_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[storage]\nurl = "postgresql://echo@db:5432/echo"\n', encoding="utf-8")
    monkeypatch.setenv("ECHO_STORAGE__PASSWORD", "s3cret-pw")
    settings = load_settings(path)
    assert settings.storage.database == "postgresql://echo@db:5432/echo"
    assert settings.storage.database_password() == "s3cret-pw"
    assert "s3cret-pw" not in repr(settings)
    # The process's own files stay in the folder of [storage] path.
    assert settings.storage.path == tmp_path / "data" / "echo.sqlite3"


def test_a_url_holding_its_password_is_refused_without_showing_it(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[storage]\nurl = "postgresql://echo:hunter22@db/echo"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"storage\.url: .*ECHO_STORAGE__PASSWORD") as caught:
        load_settings(path)
    assert "hunter22" not in str(caught.value)


def test_a_password_in_a_server_url_is_one_of_the_secrets() -> None:
    # Sent as Basic auth: a server or a proxy quoting it back in its own words ("user admin,
    # password hunter2hunter2 refused") matches no pattern, only the value.
    settings = Settings(
        llm={"base_url": "http://admin:hunter2hunter2@10.0.0.5:11434",  # type: ignore[arg-type]
             "embedding_base_url": "http://e:embed%2Fpass-42@10.0.0.6"},
    )  # fmt: skip
    said = settings.secrets().redact("password hunter2hunter2 refused; embed/pass-42 too")
    assert "hunter2" not in said and "embed/pass" not in said


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"),
        ("https://example.org/api/v1", "https://example.org/api"),
        ("http://127.0.0.1:8080/v1/v1", "http://127.0.0.1:8080/v1"),  # once
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://127.0.0.1:8080/v10", "http://127.0.0.1:8080/v10"),
    ],
)
def test_a_trailing_v1_is_dropped_from_the_server_addresses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, used: str
) -> None:
    # The clients add /v1/chat/completions, /v1/embeddings (and Ollama's /api/...) themselves.
    path = tmp_path / "c.toml"
    path.write_text(f'[llm]\nbackend = "openai"\nbase_url = "{given}"\n')
    settings = load_settings(path)
    assert (settings.llm.base_url, settings.llm.embeddings_url) == (used, used)
    monkeypatch.setenv("ECHO_LLM__EMBEDDING_BASE_URL", given.replace("8080", "8081"))
    settings = load_settings(path)
    assert settings.llm.embedding_base_url == used.replace("8080", "8081")


def test_check_config_says_what_the_followups_settings_come_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[character]\ntimezone = "Europe/Paris"\nfollowups = false\n'
        "[followups]\nservers_on = [42, 43]\nquiet_from = 22\nquiet_until = 7\n"
    )
    assert main(["--config", str(path), "check-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        "Follow-ups: allowed, off for people who chose nothing, except in servers 42, 43; "
        "none sent 22:00-07:00 (Europe/Paris); never by 'default' (followups = false)"
    ) in lines
    path.write_text("[followups]\nenabled = false\n")
    assert main(["--config", str(path), "check-config"]) == 0
    assert "Follow-ups: never ([followups] enabled = false)" in capsys.readouterr().out
