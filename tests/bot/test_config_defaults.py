"""The defaults live in one place: the engine's configs. The settings take theirs from them, build
exactly them when left alone, and config.example.toml states the same values for every key."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel

from bot import runtime
from bot.config import Settings, load_settings
from memory import MemoryConfig, Rewrite
from memory.context.builder import ContextConfig
from memory.manage.followups import Policy
from memory.turn import admission
from memory.vectors import indexer
from memory.write import worker

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config.example.toml"

# Settings read outside the engine's two configs, and who reads them. A new setting that reaches
# neither config must be added here, with its reader, or the walk below fails.
ELSEWHERE = {
    "discord": {
        "token", "channels", "api_url", "gateway_url", "login_retry",  # bot.discord.startup
        "shard_count", "shard_ids",  # bot.discord.app.make_bot
        "answer_edits",  # bot.discord.cogs.following
        "scene_chain",  # bot.discord.scenes
        "user_install",  # bot.discord.installs
        "adult_in_dms",  # bot.discord.adults, the conversation cog
        "edit_interval",  # the conversation cog's streaming pace
        "quick_pause",  # the conversation cog's quick lines
    },
    "character": {
        "name", "persona", "rules", "card", "timezone", "language", "adult", "followups",
    },  # runtime.character()
    "llm": {
        "backend", "base_url", "chat_model", "embedding_base_url", "embedding_model",
        "query_prefix", "document_prefix", "api_key", "reflection_timeout", "structured_output",
    },  # runtime.backends(), the reflection worker
    "storage": {"path", "url", "password"},  # open_store, the heartbeat and log files
    "characters": {
        "name", "persona", "rules", "card", "timezone", "language", "adult", "key", "channels",
        "default", "followups",
    },  # runtime.cast()
    "memory": {"reindex_interval", "shared_between_characters"},  # the indexer, runtime.cast()
    "limits": {"max_concurrent_chats"},  # BoundedChat
    "privacy": {
        "history_days", "follow_deletions",  # the retention job; cogs.following
        "rewrite_mb", "rewrite_hours",  # the store (memory.store.db.Rewrite)
    },
    "web": {"enabled", "host", "port", "token"},  # bot.web, the operator's page
    "conversation": {"settle_seconds"},  # runtime: the Engine's settle
    "followups": {
        "enabled", "on_by_default", "servers_on", "quiet_from", "quiet_until",
    },  # runtime.options(): the follow-ups sender's Policy
    "terminal": {"language"},  # bot.terminal.chat: the dates its commands show
    "images": {"enabled", "max_mb", "per_message"},  # memory.open; bot.discord.pictures
}  # fmt: skip
# Engine fields no setting sets: the card's lorebook budgets come from the card.
ENGINE_ONLY = {"source_budgets"}


@pytest.fixture(autouse=True)
def _no_echo_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.upper().startswith("ECHO_"):
            monkeypatch.delenv(name)


def _configs(settings: Settings) -> dict[str, Any]:
    memory, context = settings.memory_config(), settings.context.engine_config()
    return {
        **{f"MemoryConfig.{f.name}": getattr(memory, f.name) for f in dataclasses.fields(memory)},
        **{
            f"ContextConfig.{f.name}": getattr(context, f.name) for f in dataclasses.fields(context)
        },
    }


def test_the_default_settings_build_exactly_the_engines_default_configs() -> None:
    built = _configs(Settings())
    engine = {
        **{f"MemoryConfig.{f.name}": getattr(MemoryConfig(), f.name)
           for f in dataclasses.fields(MemoryConfig)},
        **{f"ContextConfig.{f.name}": getattr(ContextConfig(), f.name)
           for f in dataclasses.fields(ContextConfig)},
    }  # fmt: skip
    assert built == engine
    assert Settings().memory_config() == MemoryConfig()
    assert Settings().context.engine_config() == ContextConfig()


def test_the_defaults_read_outside_the_engine_configs_are_the_engines_constants() -> None:
    settings = Settings()
    assert settings.limits.max_concurrent_chats == admission.MAX_CHATS
    assert settings.memory.reindex_interval == indexer.REINDEX_INTERVAL
    assert settings.llm.reflection_timeout == worker.REFLECTION_DEADLINE
    assert settings.followups.policy() == Policy()
    assert settings.privacy.rewrite() == Rewrite()


def _another(default: Any, annotation: Any) -> Any:
    """A valid value different from `default`."""
    if get_origin(annotation) is Literal:
        return next(choice for choice in get_args(annotation) if choice != default)
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default / 2 if default else 1.0
    if isinstance(default, str):
        return default + "x"
    if isinstance(default, dict):
        key = next(iter(default))
        return {**default, key: default[key] + 1}
    raise AssertionError(f"no other value for {default!r}")


def _sections() -> list[tuple[str, type[BaseModel]]]:
    return [
        (name, get_args(info.annotation)[0] if get_args(info.annotation) else info.annotation)
        for name, info in Settings.model_fields.items()
    ]


def test_every_setting_reaches_the_engine_configs_or_is_read_elsewhere() -> None:
    defaults = _configs(Settings())
    reached: set[str] = set()
    for section, model in _sections():
        for key, info in model.model_fields.items():
            if key in ELSEWHERE.get(section, set()):
                continue
            default = getattr(getattr(Settings(), section), key)
            changed = _configs(Settings(**{section: {key: _another(default, info.annotation)}}))
            moved = {name for name in defaults if changed[name] != defaults[name]}
            assert moved, f"[{section}] {key} reaches no engine config: list it in ELSEWHERE"
            reached |= moved
    names = {name.split(".")[1] for name in defaults} - ENGINE_ONLY
    assert {name.split(".")[1] for name in reached} == names


def test_elsewhere_lists_only_real_settings() -> None:
    fields = {section: set(model.model_fields) for section, model in _sections()}
    for section, keys in ELSEWHERE.items():
        assert keys <= fields[section], keys - fields[section]


def test_the_example_loads_to_the_default_settings() -> None:
    example = load_settings(EXAMPLE).model_dump()
    defaults = Settings().model_dump()
    assert example["storage"]["path"] == EXAMPLE.parent / defaults["storage"]["path"]
    example["storage"]["path"] = defaults["storage"]["path"]
    assert example == defaults


def test_every_key_the_example_sets_states_its_default() -> None:
    stated = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    defaults = Settings().model_dump()
    for section, keys in stated.items():
        for key, value in keys.items():
            default = defaults[section][key]
            expected = str(default) if isinstance(default, Path) else default
            assert value == expected, f"[{section}] {key} = {value!r}, the default is {default!r}"


# `key = value` or `# key = value` at the start of a line: a key set, or shown commented out.
_KEY_LINE = re.compile(r"^(?:# )?(\w+) = ", re.M)
_SECTION = re.compile(r"^(?:# )?\[\[?(\w+)\]\]?$", re.M)


def test_every_setting_appears_in_the_example_set_or_commented_out() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    headers = list(_SECTION.finditer(text))
    shown: dict[str, set[str]] = {}
    for header, after in zip(headers, [*headers[1:], None], strict=True):
        body = text[header.end() : after.start() if after else len(text)]
        shown[header[1]] = set(_KEY_LINE.findall(body))
    expected = {section: set(model.model_fields) for section, model in _sections()}
    assert shown == expected


def test_the_followups_section_and_a_characters_rule_reach_the_sender() -> None:
    """What the operator writes is what the sender obeys: a server on by default, other quiet
    hours, one character that never follows up."""
    settings = Settings(
        followups={"servers_on": [42], "quiet_from": 22, "quiet_until": 7},  # type: ignore[arg-type]
        characters=[{"key": "nyx", "followups": False}, {"key": "lou"}],  # type: ignore[list-item]
    )
    options = runtime.options(settings)
    policy = options.followups
    assert (policy.quiet_from, policy.quiet_until) == (22, 7)
    assert policy.wanted(None, "42") and not policy.wanted(None, "43")
    assert not policy.wanted(None, "dm") and policy.wanted(True, "dm")
    assert not Settings(followups={"enabled": False}).followups.policy().wanted(True, "dm")  # type: ignore[arg-type]
    assert [(c.key, c.followups) for c in options.characters] == [("nyx", False), ("lou", True)]
