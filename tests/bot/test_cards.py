"""A character card through the config, the CLI and Discord."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.cli import main
from bot.config import ConfigError, load_settings
from bot.discord.cogs.conversation import UNAVAILABLE
from bot.runtime import character, configured_card, open_runtime
from memory.context.lore import activate
from memory.context.prompt import lore_blocks
from memory.model import LoreScope
from memory.store import open_store
from memory.store.tables import history
from memory.store.tables import lore_entries as lore_store
from tests.bot import discord_fakes as fakes
from tests.bot.cli_runner import echo_bot
from tests.bot.discord.test_discord import ALICE, CHANNEL, _bot_with
from tests.fakes.ollama import FakeOllama
from tests.memory.character.test_cards import png, v2, v3
from tests.reliability.test_concurrency import _answers


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
    async with await open_store(tmp_path / "echo.sqlite3") as store:
        assert await lore_store.applicable(store, None) == []  # nothing half-imported


def test_a_broken_card_in_the_config_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nyx.json").write_text(json.dumps(v2(name="")), encoding="utf-8")
    config = _config(tmp_path, "http://127.0.0.1:9", 'card = "nyx.json"')
    assert main(["--config", str(config), "chat", "--user", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the card has no name" in err


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("missing.json", None, "cannot be read (No such file or directory)"),
        ("nyx.json", json.dumps(v2(name="")), "the card has no name"),
        ("notes.json", '{"title": "not a card"}', 'not a character card (no "spec"'),
        ("notes.txt", "Nyx keeps the lighthouse.", "not valid JSON"),
    ],
)
async def test_check_config_says_only_what_is_wrong_with_the_card(
    tmp_path: Path, name: str, content: str | None, why: str
) -> None:
    if content is not None:
        (tmp_path / name).write_text(content, encoding="utf-8")
    config = _config(tmp_path, "http://127.0.0.1:9", f'card = "{name}"')
    code, out, err = await echo_bot("--config", str(config), "check-config")
    assert (code, out) == (2, "")  # no "OK" before the error
    [line] = err.splitlines()
    assert line.startswith(f"echo-bot: {config}: character.card: {tmp_path / name}: "), line
    assert why in line


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


def _greetings(name: str) -> set[str]:
    return {
        f"*Nyx opens the door.* Come in, {name}, before the wind does.",
        f"Again at my door, {name}?",
    }


def _input(payload: dict[str, Any]) -> str:
    """The message a chat request answers (the card's post-history instructions come after)."""
    return str([m for m in payload["messages"] if m["role"] == "user"][-1]["content"])


def _replies(payload: dict[str, Any]) -> str:
    """The LLM answers the speaker by name; a message saying "(panne)" finds it down (503)."""
    said = _input(payload)
    if "(panne)" in said:
        raise web.HTTPServiceUnavailable(text="loading model")
    return f"Réponse à {said.split(':')[0]}."


async def test_a_greeting_stored_before_a_failed_turn_goes_out_with_the_next_reply(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    card = png(tmp_path / "nyx.png", {"chara": v2()})
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, recorder):
        channel = fakes.text_channel(echo, CHANNEL)
        cog: Any = echo.get_cog("Conversation")
        ollama.set("/api/chat", "500")
        first = fakes.message(echo, channel, author_id=ALICE, content="Bonsoir")
        await cog.on_message(first)
        assert recorder.contents() == [UNAVAILABLE]
        ollama.behaviours.clear()
        second = fakes.message(echo, channel, author_id=ALICE, content="Il y a quelqu'un ?")
        await cog.on_message(second)
        greeting, reply = recorder.contents()[1:]
        assert greeting in _greetings("user1001") and reply == "D'accord."
        assert _answers(recorder)[second.id] == [greeting, reply]
        # The model saw it too: the greeting, then the message that went unanswered.
        prompt = [p for path, p in ollama.calls if path == "/api/chat"][-1]["messages"]
        said = [m["content"] for m in prompt if m["role"] != "system"]
        assert said == [greeting, "user1001: Bonsoir", "user1001: Il y a quelqu'un ?"]
        await cog.on_message(fakes.message(echo, channel, author_id=ALICE, content="Encore"))
        assert recorder.contents()[3:] == ["D'accord."]
        # "Exclude from context" on the greeting, sent as an answer to the second message,
        # excludes the greeting (not the reply next to it).
        shown = fakes.message(echo, channel, author_id=fakes.BOT_ID, author_bot=True,
                              content=greeting, reply_to=fakes.payload_of(second))  # fmt: skip
        await echo.tree._call(fakes.message_command(
            echo, "Exclude from context", user_id=ALICE, channel_id=CHANNEL, target=shown
        ))  # fmt: skip
        rows = await history.recent(echo.runtime.store, CHANNEL, limit=9, include_excluded=True)
        assert [m.content for m in rows if m.excluded] == [greeting]


async def test_people_meeting_the_character_at_once_each_get_their_greeting_once(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.set("/api/chat", "slow", delay=0.02)
    ollama.chat_reply = _replies
    people = [3000 + n for n in range(12)]
    # Person n finds the LLM down for their first n % 4 messages (all three, for n % 4 == 3).
    failing = {user: n % 4 for n, user in enumerate(people)}
    card = png(tmp_path / "nyx.png", {"chara": v2()})
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, recorder):
        channel = fakes.text_channel(echo, CHANNEL)
        cog: Any = echo.get_cog("Conversation")
        sent: dict[int, list[int]] = {user: [] for user in people}

        async def talk(user: int, messages: int) -> None:
            for _ in range(messages):
                down = len(sent[user]) < failing[user]
                msg = fakes.message(echo, channel, author_id=user,
                                    content="Bonsoir (panne)" if down else "Bonsoir")  # fmt: skip
                sent[user].append(msg.id)
                await cog.on_message(msg)

        await asyncio.gather(*(talk(user, 3) for user in people))
        # Those who never got a reply write again once the LLM answers them.
        await asyncio.gather(*(talk(user, 1) for user in people if failing[user] == 3))
        answers = _answers(recorder)
        for user in people:
            name, down = f"user{user}", failing[user]
            said = [answers[m] for m in sent[user]]
            assert said[:down] == [[UNAVAILABLE]] * down
            greeting, reply = said[down]
            assert greeting in _greetings(name) and reply == f"Réponse à {name}."
            assert said[down + 1 :] == [[f"Réponse à {name}."]] * (len(said) - down - 1)
        # One greeting stored per person, kept under the message it was sent with.
        rows = await echo.runtime.store.fetchall(
            "SELECT source_id FROM messages WHERE source_id LIKE '%:greeting'"
        )
        first_replied = {f"discord:{sent[u][failing[u]]}:greeting" for u in people}
        assert sorted(str(r[0]) for r in rows) == sorted(first_replied)


async def test_lore_entries_name_whoever_is_speaking(tmp_path: Path, ollama: FakeOllama) -> None:
    book = {"entries": [
        {"keys": [], "content": "{{user}} may climb the tower; {{char}} keeps the key.",
         "extensions": {}, "enabled": True, "insertion_order": 1, "constant": True},
        {"keys": ["lamp"], "content": "<USER> once saw the lamp fail.",
         "extensions": {}, "enabled": True, "insertion_order": 2},
    ]}  # fmt: skip
    card = png(tmp_path / "nyx.png", {"chara": v2(character_book=book)})
    ollama.set("/api/chat", "slow", delay=0.02)
    people = [4000 + n for n in range(6)]
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, _):
        channel = fakes.text_channel(echo, CHANNEL)
        cog: Any = echo.get_cog("Conversation")
        await asyncio.gather(*(
            cog.on_message(fakes.message(echo, channel, author_id=u, content="The lamp?"))
            for u in people
        ))  # fmt: skip
    prompts = [p for path, p in ollama.calls if path == "/api/chat" and "format" not in p]
    assert len(prompts) == len(people)
    for payload in prompts:
        speaker = _input(payload).split(":")[0]
        system = payload["messages"][0]["content"]
        assert f"- {speaker} may climb the tower; Nyx keeps the key." in system
        assert f"- {speaker} once saw the lamp fail." in system
        assert "{{user}}" not in json.dumps(payload) and "<USER>" not in json.dumps(payload)


def test_card_show_does_not_call_the_v1_copies_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = v2()
    card.update({k: card["data"][k] for k in ("name", "description", "personality", "scenario",
                                               "first_mes", "mes_example")})  # fmt: skip
    del card["data"]["character_book"]["entries"][1]["extensions"]["probability"]
    path = tmp_path / "nyx.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    config = str(_config(tmp_path, "http://127.0.0.1:9"))
    assert main(["--config", config, "card", "show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "Card: Nyx (chara_card_v2, JSON file)" in shown and "Unknown fields" not in shown


def test_a_card_set_in_the_config_copied_from_the_example_plays_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nyx.json").write_text(json.dumps(v2()), encoding="utf-8")
    example = (Path(__file__).parents[2] / "config.example.toml").read_text(encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(example.replace('# card = "characters/nyx.png"', 'card = "nyx.json"'),
                      encoding="utf-8")  # fmt: skip
    settings = load_settings(config)
    played = character(settings, configured_card(settings))
    assert played.name == "Nyx" and played.persona.startswith("Nyx keeps the night lighthouse")
    assert played.greetings[0].startswith("*Nyx opens the door.*")
    assert main(["--config", str(config), "check-config"]) == 0
    said = capsys.readouterr().out
    assert "Character 'Nyx': name from the card nyx.json, persona from the card nyx.json" in said
    # The doctor says it too (port 9: no server needed to say it).
    config.write_text(config.read_text(encoding="utf-8").replace("127.0.0.1:11434", "127.0.0.1:9"),
                      encoding="utf-8")  # fmt: skip
    main(["--config", str(config), "doctor"])
    assert "OK   Character 'Nyx': name from the card nyx.json" in capsys.readouterr().out


def _stored_lore(database: Path) -> list[Any]:
    async def read() -> list[Any]:
        async with await open_store(database) as store:
            return list(await lore_store.applicable(store, None))

    return asyncio.run(read())


def test_importing_another_card_binds_its_lore_to_its_own_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = png(tmp_path / "nyx.png", {"chara": v2()})
    # The config plays Écho, by name, as the example used to set it.
    config = str(_config(tmp_path, "http://127.0.0.1:9", 'name = "Écho"'))
    assert main(["--config", config, "card", "import", str(card)]) == 0
    said = capsys.readouterr().out
    assert "Lore: 3 entries stored for Nyx" in said and "only while Nyx plays" in said
    entries = _stored_lore(tmp_path / "echo.sqlite3")
    assert {e.character for e in entries} == {"nyx"}
    assert "{{char}} became keeper at nineteen." in [e.content for e in entries]


def _world_info() -> dict[str, Any]:
    """A lorebook as SillyTavern exports its world info (written for these tests)."""
    return {"entries": {
        "0": {"uid": 0, "key": ["Eldoria"], "keysecondary": [], "comment": "the realm",
              "content": "Eldoria is a realm of floating isles.", "constant": False,
              "selective": False, "order": 100, "position": 0, "disable": False},
        "1": {"uid": 1, "key": ["Sky Spire"], "keysecondary": [], "comment": "the spire",
              "content": "{{char}} was born under the Sky Spire.", "constant": False,
              "selective": False, "order": 90, "position": 0, "disable": False},
        "2": {"uid": 2, "key": ["old"], "content": "Switched off.", "disable": True},
    }}  # fmt: skip


async def test_lore_import_of_a_card_says_to_import_the_card(tmp_path: Path) -> None:
    config = str(_config(tmp_path, "http://127.0.0.1:9"))
    card = png(tmp_path / "nyx.png", {"chara": v2()})
    code, out, err = await echo_bot("--config", config, "lore", "import", str(card))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"echo-bot: {card}: a PNG (a character card's picture), not a lorebook: its lorebook "
        f"is imported with `echo-bot card import {card}`"
    ]
    assert not (tmp_path / "echo.sqlite3").exists()  # nothing stored


def test_a_lorebook_is_named_as_one_and_imported_on_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = tmp_path / "Eldoria.json"
    book.write_text(json.dumps(_world_info()), encoding="utf-8")
    config = str(_config(tmp_path, "http://127.0.0.1:9"))
    assert main(["--config", config, "card", "import", str(book)]) == 1
    err = capsys.readouterr().err
    assert "a lorebook (world info), not a character card" in err
    assert "`echo-bot lore import FILE`" in err and "spec None" not in err
    assert main(["--config", config, "lore", "import", str(book)]) == 0
    said = capsys.readouterr().out
    assert (
        "Lorebook 'Eldoria' (SillyTavern world info): 2 entries stored, for every character" in said
    )
    assert "skipped entry 3 'Switched off.'" not in said and "skipped entry 3: disabled" in said
    assert main(["--config", config, "lore", "import", str(book)]) == 0
    assert "already up to date" in capsys.readouterr().out
    everyone = _stored_lore(tmp_path / "echo.sqlite3")
    assert len(everyone) == 2 and {e.scope for e in everyone} == {LoreScope.GLOBAL}
    fired = activate(everyone, ["Where is the Sky Spire?"], depth=4, character="Écho")
    [shown] = lore_blocks(fired, user_name="Marie", character="Écho")
    assert shown.text.endswith("Écho was born under the Sky Spire.")
    # Écho alone, key "default": its name works as well as its key.
    assert main(["--config", config, "lore", "import", str(book), "--character", "écho"]) == 0
    assert "2 entries stored, only while 'Écho' plays" in capsys.readouterr().out
    echo = _stored_lore(tmp_path / "echo.sqlite3")
    assert len(echo) == 2 and {e.character for e in echo} == {"echo"}  # replaced, not added
    assert activate(echo, ["Eldoria"], depth=4, character="Nyx") == []
    assert len(activate(echo, ["Eldoria"], depth=4, character="Écho")) == 1


CAST = """
[[characters]]
key = "nyx"
name = "Nyx"
persona = "Tu es Nyx."
[[characters]]
key = "lune"
name = "Lune"
persona = "Tu es Lune."
"""


async def test_lore_import_for_a_character_nobody_plays_is_refused(tmp_path: Path) -> None:
    book = tmp_path / "Eldoria.json"
    book.write_text(json.dumps(_world_info()), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "echo.sqlite3"\n{CAST}', encoding="utf-8")
    code, out, err = await echo_bot(
        "--config", str(config), "lore", "import", str(book), "--character", "Bogus"
    )
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"echo-bot: lore import --character 'Bogus': no such character in {config}; give one "
        "of its keys: nyx (Nyx), lune (Lune); nothing imported"
    ]
    assert not (tmp_path / "echo.sqlite3").exists()  # nothing stored
    for given, name in (("lune", "Lune"), ("Nyx", "Nyx")):
        code, out, err = await echo_bot(
            "--config", str(config), "lore", "import", str(book), "--character", given
        )
        assert code == 0, err
        assert f"only while '{name}' plays" in out
    entries = await asyncio.to_thread(_stored_lore, tmp_path / "echo.sqlite3")
    assert {e.character for e in entries} == {"nyx"}  # the last import replaced the first
