"""A character card through the config, the CLI and Discord."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load_settings
from bot.runtime import open_runtime
from memory.store import history
from memory.store import lore as lore_store
from memory.store.db import Store
from tests.bot import discord_fakes as fakes
from tests.bot.test_discord import ALICE, CHANNEL, _bot_with
from tests.fakes.ollama import FakeOllama
from tests.memory.test_cards import png, v2, v3


def _config(tmp_path: Path, url: str, character: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{url}"\n[storage]\npath = "echo.sqlite3"\n[character]\n{character}\n',
        encoding="utf-8",
    )
    return path


async def test_the_card_fills_what_the_config_leaves_unset(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    png(tmp_path / "nyx.png", {"ccv3": v3()})
    settings = load_settings(_config(tmp_path, ollama.url, 'card = "nyx.png"'))
    async with open_runtime(settings) as runtime:
        character = runtime.engine.character
        assert character.name == "Nyx" and "Nyx keeps the night lighthouse" in character.persona
        assert len(character.greetings) == 2 and runtime.worker.character_name == "Nyx"
        entries = await lore_store.applicable(runtime.store, None)
        assert len(entries) == 3 and {e.source for e in entries} == {"card:nyx"}
        assert runtime.engine.context.config.source_budgets == {"card:nyx": 256}
    named = load_settings(
        _config(tmp_path, ollama.url, 'card = "nyx.png"\nname = "Lune"\npersona = "Tu es Lune."')
    )
    async with open_runtime(named) as runtime:
        character = runtime.engine.character
        assert (character.name, character.persona) == ("Lune", "Tu es Lune.")
        assert character.greetings[0].startswith("*Lune opens the door.*")
        entries = await lore_store.applicable(runtime.store, None)
        assert len(entries) == 3 and {e.character for e in entries} == {"lune"}


async def test_a_broken_card_in_the_config_stops_the_runtime(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    (tmp_path / "nyx.json").write_text(json.dumps(v2(name="")), encoding="utf-8")
    config = _config(tmp_path, ollama.url, 'card = "nyx.json"')
    with pytest.raises(ConfigError, match=r"character\.card: .*nyx\.json: the card has no name"):
        async with open_runtime(load_settings(config)):
            pass
    async with await Store.open(tmp_path / "echo.sqlite3") as store:
        assert await lore_store.applicable(store, None) == []  # nothing half-imported


def test_a_broken_card_in_the_config_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nyx.json").write_text(json.dumps(v2(name="")), encoding="utf-8")
    config = _config(tmp_path, "http://127.0.0.1:9", 'card = "nyx.json"')
    assert main(["--config", str(config), "chat", "--user", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the card has no name" in err


def test_card_show_and_import(
    tmp_path: Path, ollama: FakeOllama, capsys: pytest.CaptureFixture[str]
) -> None:
    card = png(tmp_path / "nyx.png", {"chara": v2()})
    config = str(_config(tmp_path, ollama.url))
    assert main(["--config", config, "card", "show", str(card)]) == 0
    shown = capsys.readouterr().out
    assert "Card: Nyx (chara_card_v2, PNG chunk 'chara')" in shown
    assert "Lore entries: 3 (1 always active), lorebook budget 256 tokens" in shown
    assert "skipped entry 4: disabled" in shown and "skipped entry 5: regex keys" in shown
    assert "Unknown fields kept but ignored: 1 (data.character_book.entries[1]" in shown
    assert "Warning: system_prompt's {{original}} removed" in shown
    assert main(["--config", config, "card", "import", str(card)]) == 0
    imported = capsys.readouterr().out
    assert "Lore: 3 entries stored" in imported and '[character] card = "' in imported
    assert main(["--config", config, "card", "import", str(card)]) == 0
    assert "Lore: already up to date" in capsys.readouterr().out
    plain = png(tmp_path / "plain.png", {"Title": "a photo"})
    assert main(["--config", config, "card", "import", str(plain)]) == 1
    err = capsys.readouterr().err
    assert err.strip().endswith("a PNG without a character card (no 'chara' or 'ccv3' text chunk)")
    assert main(["--config", config, "card", "show"]) == 2
    assert "no card given" in capsys.readouterr().err


async def test_discord_sends_the_greeting_then_the_reply(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    card = png(tmp_path / "nyx.png", {"chara": v2()})
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, recorder):
        channel = fakes.text_channel(echo, CHANNEL)
        first = fakes.message(echo, channel, author_id=ALICE, content="Bonsoir")
        await echo.get_cog("Conversation").on_message(first)  # type: ignore[union-attr]
        sent = recorder.contents()
        greetings = {
            "*Nyx opens the door.* Come in, user1001, before the wind does.",
            "Again at my door, user1001?",
        }
        assert len(sent) == 2 and sent[0] in greetings
        assert sent[1] == "D'accord."
        again = fakes.message(echo, channel, author_id=ALICE, content="Encore")
        await echo.get_cog("Conversation").on_message(again)  # type: ignore[union-attr]
        assert recorder.contents()[2:] == ["D'accord."]
        # "Exclude from context" on the greeting's Discord message excludes the greeting only.
        said = fakes.message(echo, channel, author_id=fakes.BOT_ID, author_bot=True,
                             content=sent[0], reply_to=fakes.payload_of(first))  # fmt: skip
        await echo.tree._call(fakes.message_command(
            echo, "Exclude from context", user_id=ALICE, channel_id=CHANNEL, target=said
        ))  # fmt: skip
        rows = await history.recent(echo.runtime.store, CHANNEL, limit=9, include_excluded=True)
        assert [(m.content == sent[0], m.excluded) for m in rows][:3] == [
            (True, True),
            (False, False),
            (False, False),
        ]
