"""The lock files, the Docker image and compose.yaml agree with pyproject.toml and the code."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bot import heartbeat
from bot.config import Settings, StorageSettings, load_settings

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# `name==version \` followed by its `--hash=sha256:...` lines.
_PIN = re.compile(
    r"^([A-Za-z0-9._-]+)==(\S+) \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", re.M
)


def _pins(lock: str) -> dict[str, str]:
    text = (ROOT / lock).read_text(encoding="utf-8")
    pins = {canonicalize_name(name): version for name, version, _ in _PIN.findall(text)}
    # Every requirement line of the file is a hashed pin (pip refuses the file otherwise).
    assert len(pins) == len(re.findall(r"^[A-Za-z0-9]", text, re.M))
    return pins


@pytest.mark.parametrize(
    ("lock", "groups"),
    [("requirements.lock", ["runtime"]), ("requirements-test.lock", ["runtime", "test"])],
)
def test_every_dependency_is_pinned_in_the_lock_within_its_bounds(
    lock: str, groups: list[str]
) -> None:
    declared = {
        "runtime": PROJECT["dependencies"],
        "test": PROJECT["optional-dependencies"]["test"],
    }
    pins = _pins(lock)
    for group in groups:
        for line in declared[group]:
            requirement = Requirement(line)
            name = canonicalize_name(requirement.name)
            assert name in pins, f"{requirement.name} is not in {lock}: run `make lock`"
            assert requirement.specifier.contains(pins[name], prereleases=True), (lock, line)


def test_the_test_lock_pins_the_bot_as_the_image_does() -> None:
    runtime, test = _pins("requirements.lock"), _pins("requirements-test.lock")
    assert {name: test[name] for name in runtime} == runtime


def _dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_the_image_installs_the_lock_before_it_copies_the_code() -> None:
    text = _dockerfile()
    locked = text.index("pip install --require-hashes -r requirements.lock")
    assert text.index("COPY requirements.lock") < locked < text.index("COPY memory")
    assert "pip install --no-deps ." in text


def test_the_image_health_check_reads_the_heartbeat_of_its_database() -> None:
    text = _dockerfile()
    database = re.search(r"^ENV ECHO_STORAGE__PATH=(\S+)$", text, re.M)
    probe = re.search(r'CMD \["python", "-m", "bot\.heartbeat", "([^"]+)"\]', text)
    assert database is not None and probe is not None
    assert probe[1] == str(heartbeat.path_for(Path(database[1])))


def _compose() -> dict[str, dict[str, dict[str, object]]]:
    loaded = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_compose_uses_tagged_images_and_waits_for_a_healthy_ollama() -> None:
    services = _compose()["services"]
    for name, service in services.items():
        image = str(service["image"])
        assert re.fullmatch(r"[\w./-]+:[\w.-]+", image) and not image.endswith(":latest"), name
    assert services["echo"]["depends_on"] == {"ollama": {"condition": "service_healthy"}}
    assert services["ollama"]["healthcheck"]["test"] == ["CMD", "ollama", "list"]  # type: ignore[index]
    assert str(services["echo"]["image"]).endswith(":" + PROJECT["version"])


def test_the_settings_compose_gives_are_real_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    environment = _compose()["services"]["echo"]["environment"]
    assert isinstance(environment, dict) and environment
    empty = tmp_path / "config.toml"  # what the image provides when no config is mounted
    empty.write_text("")
    for name, value in environment.items():
        monkeypatch.setenv(name, str(value))
    settings = load_settings(empty)
    for name, value in environment.items():
        section, key = name.removeprefix("ECHO_").lower().split("__")
        assert str(getattr(getattr(settings, section), key)) == str(value)
    assert settings != Settings()


# The profile that runs the bot as several processes on one PostgreSQL.
_BOTS = ("echo-shard-0", "echo-shard-1")


def _profile(name: str) -> dict[str, dict[str, object]]:
    return {
        service: spec
        for service, spec in _compose()["services"].items()
        if name in spec.get("profiles", [])  # type: ignore[operator]
    }


def test_the_postgres_profile_runs_pgvector_and_two_bots_that_wait_for_it() -> None:
    services = _profile("postgres")
    assert set(services) == {"postgres", *_BOTS}
    image = str(services["postgres"]["image"])
    assert re.fullmatch(r"pgvector/pgvector:\d+\.\d+\.\d+-pg\d+", image), image
    for bot in _BOTS:
        assert services[bot]["image"] == _compose()["services"]["echo"]["image"]
        assert services[bot]["depends_on"] == {
            "postgres": {"condition": "service_healthy"},
            "ollama": {"condition": "service_healthy"},
        }
    # The SQLite bot stays the default: it has no profile.
    assert "profiles" not in _compose()["services"]["echo"]


def _bot_settings(
    service: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Settings, dict[str, str]]:
    """The settings a bot service of the profile starts with (no config file mounted)."""
    environment = _compose()["services"][service]["environment"]
    assert isinstance(environment, dict)
    empty = tmp_path / "config.toml"
    empty.write_text("")
    for name, value in environment.items():
        section, key = name.removeprefix("ECHO_").lower().split("__")
        # [storage] url comes with the PostgreSQL backend; until it is there, it is not read.
        if (section, key) == ("storage", "url") and "url" not in StorageSettings.model_fields:
            continue
        monkeypatch.setenv(name, str(value))
    return load_settings(empty), {str(k): str(v) for k, v in environment.items()}


def test_the_two_bots_split_the_shards_between_them_on_one_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    counts, urls, senders = set(), set(), 0
    for bot in _BOTS:
        with monkeypatch.context() as m:
            settings, environment = _bot_settings(bot, tmp_path, m)
        shards = settings.discord.shards
        assert shards is not None and shards.ids is not None
        seen += shards.ids
        counts.add(shards.count)
        urls.add(environment["ECHO_STORAGE__URL"])
        senders += shards.sends_commands
    [count] = counts
    assert sorted(seen) == list(range(count)) and count == len(_BOTS)  # disjoint, covering
    assert senders == 1  # one process sends the slash commands
    [url] = urls
    assert url.startswith("postgresql://") and "@postgres:" in url


def test_no_password_is_written_in_the_compose_file() -> None:
    text = (ROOT / "compose.yaml").read_text(encoding="utf-8")
    # A user:password@ in a URL, or a password given as a value.
    assert not re.search(r"://[^/@\s:]+:[^/@\s]+@", text)
    assert not re.search(r"^\s*(POSTGRES_PASSWORD|PGPASSWORD)\s*:", text, re.M)
    services = _profile("postgres")
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD_FILE"] == (  # type: ignore[index]
        "/run/secrets/postgres_password"
    )
    assert "postgres_password" in services["postgres"]["secrets"]  # type: ignore[operator]
    assert _compose()["secrets"]["postgres_password"] == {"file": "./secrets/postgres_password"}
    for bot in _BOTS:
        # The bots read the same secret as [storage] password (secret files are section__key).
        assert {"source": "postgres_password", "target": "storage__password"} in services[bot][
            "secrets"
        ]  # type: ignore[operator]


def test_each_bot_health_check_reads_its_own_heartbeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = re.search(r"^ENV ECHO_STORAGE__PATH=(\S+)$", _dockerfile(), re.M)
    assert database is not None
    probes = set()
    for bot in _BOTS:
        with monkeypatch.context() as m:
            settings, _ = _bot_settings(bot, tmp_path, m)
        probe = _compose()["services"][bot]["healthcheck"]["test"]  # type: ignore[index]
        expected = heartbeat.path_for(Path(database[1]), settings.discord.file_tag)
        assert probe == ["CMD", "python", "-m", "bot.heartbeat", str(expected)]
        probes.add(str(expected))
    assert len(probes) == len(_BOTS)  # one folder, two heartbeats


def test_every_service_of_the_bot_image_can_build_it() -> None:
    # An image only another service builds would be pulled from a registry, where it is not.
    services = _compose()["services"]
    for name in ("echo", *_BOTS):
        assert (
            services[name]["build"] == "." and services[name]["image"] == services["echo"]["image"]
        )
