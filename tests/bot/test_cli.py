"""`echo-bot doctor`, `export` and `import` as a person runs them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import stat
import sys
from pathlib import Path

import pytest

from bot.terminal.chat import terminal_user_id
from tests.bot.cli_runner import echo_bot
from tests.bot.terminal.test_e2e import _chat, _config, _script
from tests.fakes.discord_api import serve_fake_discord
from tests.fakes.ollama import FakeOllama


async def _run(*args: str, **environ: str) -> tuple[int, str, str]:
    """`echo-bot ARGS` with the ECHO_* variables given (in this process), stdin empty."""
    return await echo_bot(*args, env=environ)


async def _process(*args: str, **environ: str) -> tuple[int, str, str]:
    """`_run` as `python -m bot ARGS`: the real entry point, its exit code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")} | environ
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_doctor_says_ok_or_the_fix_one_line_each(tmp_path: Path, ollama: FakeOllama) -> None:
    config = _config(tmp_path, ollama.url)
    code, out, _ = await _run("doctor", "--config", str(config))
    lines = out.splitlines()
    assert code == 1  # no Discord token here
    # No database yet: said, and none is made by looking (the chat makes it).
    assert lines[1] == (f"OK   Character 'Écho': name from [character] name in {config}, "
                        f"persona from [character] persona in {config}")  # fmt: skip
    assert lines[2].startswith("OK   time zone from the machine's ([character] timezone unset)")
    assert lines[3] == (f"WARN database {tmp_path / 'echo.sqlite3'} does not exist yet → "
                        "`echo-bot run` or `chat` creates it")  # fmt: skip
    assert not (tmp_path / "echo.sqlite3").exists()
    await _chat(config, ["/memories"])
    code, out, _ = await _run("doctor", "--config", str(config))
    lines = out.splitlines()
    assert [line[:4] for line in lines[:7]] == ["OK  "] * 7
    assert "takes 131,072 tokens of context (it says so)" in lines[5]
    # The loopback server's embeddings are bags of words: they cannot tell "afraid of flying"
    # from "air travel makes me anxious", and the doctor says so, with the fix.
    assert lines[7].startswith("FAIL fr: nomic-embed-text does NOT separate paraphrases")
    assert lines[8].startswith("FAIL en: ") and "no absolute threshold" in lines[8]
    # Unfit for both languages: another multilingual model is not the only way out.
    assert "check its task prefixes" in lines[9] and "multilingual" not in lines[9]
    assert "ECHO_DISCORD__TOKEN" in lines[-1]

    ollama.models = ["llama3.1:8b"]
    _, out, _ = await _run("doctor", "--config", str(config))
    assert (
        "embedding model nomic-embed-text (from the default of [llm] embedding_model) is "
        "missing" in out
    )
    assert "ollama pull nomic-embed-text" in out


async def test_doctor_names_the_time_zone_and_refuses_an_unknown_one_in_one_line(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    _, out, _ = await _run("doctor", "--config", str(config),
                           ECHO_CHARACTER__TIMEZONE="America/Sao_Paulo")  # fmt: skip
    zone = next(line for line in out.splitlines() if "time zone" in line)
    assert zone.startswith("OK   time zone from ECHO_CHARACTER__TIMEZONE: Now it is ")
    assert zone.endswith("(America/Sao_Paulo, UTC-03:00).")
    for command in ("doctor", "check-config"):
        code, out, err = await _run(command, "--config", str(config),
                                    ECHO_CHARACTER__TIMEZONE="Europe/Pariss")  # fmt: skip
        assert code != 0 and "Traceback" not in err
        assert err.strip().splitlines() == [
            "echo-bot: ECHO_CHARACTER__TIMEZONE: Value error, no time zone named "
            "'Europe/Pariss' (an IANA name, like Europe/Paris or America/New_York)"
        ]


async def test_doctor_prints_its_own_lines_only(tmp_path: Path, ollama: FakeOllama) -> None:
    """What doctor learns on the way (the chat server's structured-output mode) is said in its
    line, not again as a log line between them."""
    config = _config(tmp_path, ollama.url)
    await _chat(config, ["/memories"])  # a database, so that every check runs
    async with serve_fake_discord() as discord_api:
        _, out, err = await _run("doctor", "--config", str(config),
                                    ECHO_DISCORD__TOKEN="MTA5.Zq9-doctor-token-for-tests",
                                    ECHO_DISCORD__API_URL=discord_api.api_url)  # fmt: skip
    lines = out.splitlines()
    assert "OK   structured output" in out and "OK   Discord accepts the token" in out
    assert [line for line in lines if not line.startswith(("OK   ", "WARN ", "FAIL "))] == []
    assert err == ""
    # Asked for, the log is there: -v shows what doctor did on the way.
    _, _, err = await _run("doctor", "-v", "--config", str(config))
    assert "accepts structured output" in err


def _rows(database: Path) -> list[str]:
    """Every row of every table, as SQL: a database compared row for row."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        return list(db.iterdump())


async def test_doctor_leaves_the_database_row_for_row_as_it_found_it(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    await _chat(config, ["/memories"])
    before = _rows(tmp_path / "echo.sqlite3")
    _, out, _ = await _run("doctor", "--config", str(config))
    assert "OK   structured output" in out and "FAIL fr: nomic-embed-text" in out  # it checked
    assert _rows(tmp_path / "echo.sqlite3") == before


async def test_a_server_that_is_down_is_one_fail_line_naming_the_variable_that_set_it(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    down = "http://127.0.0.1:9"  # port 9 (discard) refuses connections
    code, out, _ = await _run("doctor", "--config", str(config), ECHO_LLM__BASE_URL=down)
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert code == 1
    assert len(failures) == 1, failures  # not the embedding, calibration, structured output too
    assert failures[0].startswith(f"FAIL chat backend {down} unreachable")
    assert failures[0].endswith(
        "→ is Ollama installed and running (README, Set up)? (the address is from "
        "ECHO_LLM__BASE_URL)"
    )
    _, out, _ = await _run("doctor", "--config", str(config))  # the file's value, reachable
    assert "FAIL chat backend" not in out


async def test_a_base_url_ending_in_v1_reaches_the_server(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    # What OpenAI-compatible docs give: http://host:port/v1. The clients add the path.
    config = _config(tmp_path, ollama.url)
    given = {
        "ECHO_LLM__BASE_URL": f"{ollama.url}/v1",
        "ECHO_LLM__EMBEDDING_BASE_URL": f"{ollama.url}/v1/",
    }
    _, out, _ = await _run("doctor", "--config", str(config), **given)
    assert "unreachable" not in out and "FAIL chat backend" not in out
    assert any(line.startswith("OK   chat model llama3.1:8b") for line in out.splitlines()), out


async def test_a_missing_chat_model_is_not_contradicted_by_a_structured_output_line(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.models = ["nomic-embed-text"]
    # A real `python -m bot doctor`: its exit code is the process's.
    code, out, _ = await _process("doctor", "--config", str(_config(tmp_path, ollama.url)))
    assert code == 1
    assert "structured output" not in out  # no "OK … json_schema" beside the missing model
    assert ("FAIL chat model llama3.1:8b (from the default of [llm] chat_model) is missing at "
            f"{ollama.url} → ollama pull llama3.1:8b") in out.splitlines()  # fmt: skip


async def test_export_then_import_moves_a_persons_memories(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    _script(ollama)
    config = _config(tmp_path, ollama.url)
    await _chat(config, ["J'ai un chat roux qui s'appelle Félix."])
    dump = tmp_path / "marie.json"
    dump.write_text("{}", encoding="utf-8")
    dump.chmod(0o644)  # a file there before, readable by everyone
    code, out, err = await _run("export", "--config", str(config), "--user", "Marie", str(dump))
    data = json.loads(dump.read_text())
    assert code == 0 and [m["text"] for m in data["memories"]] == ["A un chat roux nommé Félix"]
    marie = terminal_user_id("Marie")
    assert (out, err) == (
        f"Wrote 1 memory, 1 message with their replies about 'Marie' (user id {marie}) to "
        f"{dump} (readable by you only).\n",
        "",
    )
    assert stat.S_IMODE(dump.stat().st_mode) == 0o600
    # To stdout: the data alone there, the line on stderr.
    code, out, err = await _run("export", "--config", str(config), "--user-id", str(marie))
    assert code == 0 and json.loads(out)["memories"] == data["memories"]
    assert err == f"Exported 1 memory, 1 message with their replies about user id {marie}.\n"

    code, out, _ = await _run("import", "--config", str(config), "--user-id", "42", str(dump))
    assert code == 0 and out == "Imported 1 memory: 1 new memory.\n"
    code, out, _ = await _run("import", "--config", str(config), "--user-id", "42", str(dump))
    assert out == "Nothing to import: you already have the file's 1 memory as they are.\n"


@pytest.mark.slow  # an `echo-bot` process per case: about 10 s
async def test_import_of_a_file_that_is_not_an_export_is_one_line(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    dump = tmp_path / "dump.json"
    for content, message in (
        (b"{oops", "not JSON (Expecting property name enclosed in double quotes, line 1)"),
        (b"[1, 2]", 'not an `echo-bot export` file (no "memories" list)'),
        (b"\xff\xfe", "not JSON (Expecting value, line 1)"),
    ):
        dump.write_bytes(content)
        code, _, err = await _run("import", "--config", str(config), "--user", "M", str(dump))
        assert code == 1 and err.splitlines() == [f"echo-bot: {dump}: {message}"]
    # The whole file is checked first: the first item that is not a memory is named with why,
    # in one line, and nothing is written (an id past SQLite's 64 bits, a lone surrogate too).
    good = {"text": "Aime le chocolat \ud800", "kind": "fact", "scope": "global"}
    for bad, said in (
        ({"text": "Aime le thé", "kind": "fact", "scope": "story", "story_id": 10**30},
         "memories[1]: story_id must be a 64-bit integer (required for a story memory)"),
        ({"text": "Aime le café", "kind": "nope", "scope": "global"},
         "memories[1]: kind must be one of fact, preference, promise, episode, rule"),
        ("not an object", "memories[1]: not an object"),
        ({**good, "pinned": "yes"}, "memories[1]: pinned must be true or false"),
        ({**good, "created_at": 5.0, "updated_at": 4.0},
         "memories[1]: updated_at is before created_at"),
    ):  # fmt: skip
        dump.write_text(json.dumps({"memories": [good, bad]}), encoding="utf-8")
        code, _, err = await _run("import", "--config", str(config), "--user", "M", str(dump))
        assert code == 1 and err.splitlines() == [f"echo-bot: {dump}: {said}"]
    # Nothing was written, not even a database.
    assert not (tmp_path / "echo.sqlite3").exists()


@pytest.mark.slow  # an `echo-bot` process per case: about 10 s
async def test_export_import_and_reindex_answer_in_one_line_and_make_no_database(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    database = tmp_path / "echo.sqlite3"
    dump = tmp_path / "marie.json"
    dump.write_text(json.dumps({"memories": []}), encoding="utf-8")
    for command, then in (
        (["import", "--user", "Marie", str(dump)],
         "`echo-bot run` or `chat` creates it (a new install: start it once, then import)"),
        (["export", "--user", "Marie"], "nobody's memories to export yet"),
        (["reindex"], "no memory to embed yet"),
    ):  # fmt: skip
        code, _, err = await _run(command[0], "--config", str(config), *command[1:])
        assert code == 1 and err.splitlines() == [
            f"echo-bot: no database at {database} ([storage] path): {then}"
        ]
        assert not database.exists()
    await _chat(config, ["/remember Aime le thé"])
    missing = tmp_path / "no such folder" / "marie.json"
    code, _, err = await _run("export", "--config", str(config), "--user", "Marie", str(missing))
    assert code == 1
    assert err.splitlines() == [
        f"echo-bot: {missing}: cannot be written (No such file or directory)"
    ]
    gone = tmp_path / "gone.json"
    for bad, said in ((tmp_path, "Is a directory"), (gone, "No such file or directory")):
        code, _, err = await _run("import", "--config", str(config), "--user", "M", str(bad))
        assert code == 1 and err.splitlines() == [f"echo-bot: {bad}: cannot be read ({said})"]


async def test_sync_without_a_token_says_so_in_one_line_and_makes_no_database(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = _config(tmp_path, ollama.url)
    code, out, err = await _process("sync", "--config", str(config))  # the real exit code
    assert (code, out) == (2, "")
    assert err == f"echo-bot: {config}: no Discord token (ECHO_DISCORD__TOKEN or [discord] token)\n"
    assert not (tmp_path / "echo.sqlite3").exists()


async def test_doctor_never_shows_the_password_of_a_server_url(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    secret_url = ollama.url.replace("http://", "http://me:s3cret@")
    _, out, err = await _run("doctor", "--config", str(_config(tmp_path, secret_url)))
    assert "s3cret" not in out + err
    hidden = ollama.url.replace("//", "//***@")
    assert f"OK   chat model llama3.1:8b is available at {hidden}" in out
