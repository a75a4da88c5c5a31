"""/context, /strategy, /lore and the message menu commands, with real discord.py interactions."""

from __future__ import annotations

from typing import Any

from bot.discord.app import EchoBot
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import ALICE, BOB, CHANNEL, MANAGE_GUILD, _command, _opt, _say
from tests.fakes.ollama import FakeOllama

MANAGE_CHANNELS = 1 << 4
MANAGE_MESSAGES = 1 << 13

Bot = tuple[EchoBot, fakes.Recorder]


def _sub(name: str, *options: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": name, "type": 1, "options": list(options)}]


async def _menu(echo: EchoBot, name: str, user: int, target: Any, permissions: int = 0) -> None:
    await echo.tree._call(
        fakes.message_command(
            echo, name, user_id=user, channel_id=CHANNEL, target=target, permissions=permissions
        )
    )


async def test_context_previews_the_next_prompt_without_recording_a_turn(bot: Bot) -> None:
    echo, rec = bot
    channel = fakes.text_channel(echo, CHANNEL)
    await _command(echo, "context", ALICE)
    assert "not calibrated yet: llama3.1:8b has reported no counts" in rec.contents()[-1]
    await _say(echo, channel, ALICE, "Bonjour, je m'appelle Alice.")
    await _command(echo, "context", ALICE, options=[_opt("message", "et mon jardin ?", 3)])
    preview = "\n".join(rec.contents()[-2:])
    assert "strategy `summarize`" in preview and "prompt budget 7,168" in preview
    assert "✓ persona" in preview and "✓ history #1–#2 (2)" in preview
    assert "not calibrated yet" not in preview  # the first turn's reported count calibrated it
    assert rec.messages()[-1]["flags"] == fakes.EPHEMERAL
    await _command(echo, "context", ALICE, options=[_opt("full", True, 5)])
    full = "\n".join(rec.contents()[-2:])
    assert "✓ history user1001 #1 “user1001: Bonjour, je m'appelle Alice.”" in full
    assert "✓ history Écho #2 “D'accord.”" in full
    why_turns = await echo.runtime.store.fetchone("SELECT count(*) FROM turns")
    assert why_turns is not None and why_turns[0] == 1  # the preview recorded nothing


async def test_strategy_is_per_channel_and_needs_manage_channels(bot: Bot) -> None:
    echo, rec = bot
    await _command(echo, "strategy", ALICE, options=[_opt("name", "truncate", 3)])
    assert "Manage Channels" in rec.contents()[-1]
    await _command(echo, "strategy", ALICE, options=[_opt("name", "nope", 3)],
                   permissions=MANAGE_CHANNELS)  # fmt: skip
    assert "no context strategy 'nope'" in rec.contents()[-1]
    await _command(echo, "strategy", ALICE, options=[_opt("name", "truncate", 3)],
                   permissions=MANAGE_CHANNELS)  # fmt: skip
    assert rec.contents()[-1] == "Strategy here is now `truncate`."
    await _command(echo, "strategy", BOB)
    assert rec.contents()[-1].startswith("Strategy here: `truncate`")


async def test_lore_add_list_remove_for_managers_only(bot: Bot, ollama: FakeOllama) -> None:
    echo, rec = bot
    add = _sub("add", _opt("keywords", "phare, lighthouse", 3),
               _opt("content", "Le phare est hanté.", 3))  # fmt: skip
    await _command(echo, "lore", ALICE, options=add)
    assert "Manage Server" in rec.contents()[-1]
    await _command(echo, "lore", ALICE, options=add, permissions=MANAGE_GUILD)
    assert rec.contents()[-1] == "Lore entry #1 added."
    await _command(echo, "lore", ALICE, options=_sub("list"), permissions=MANAGE_GUILD)
    assert "`#1` this server · any character · keys: phare, lighthouse" in rec.contents()[-1]
    await _say(echo, fakes.text_channel(echo, CHANNEL), BOB, "Tu as vu le Phare ?")
    system = [p for path, p in ollama.calls if path == "/api/chat"][-1]["messages"][0]
    assert "Le phare est hanté." in system["content"]
    empty = _sub("add", _opt("keywords", " , ", 3), _opt("content", "x", 3))
    await _command(echo, "lore", ALICE, options=empty, permissions=MANAGE_GUILD)
    assert "at least one keyword" in rec.contents()[-1]
    remove = _sub("remove", _opt("entry", 1))
    await _command(echo, "lore", ALICE, options=remove, permissions=MANAGE_GUILD)
    assert rec.contents()[-1] == "Lore entry #1 removed."
    await _command(echo, "lore", ALICE, options=remove, permissions=MANAGE_GUILD)
    assert rec.contents()[-1] == "No lore entry #1 that you can remove here."


async def test_exclude_and_include_from_the_message_menu(bot: Bot, ollama: FakeOllama) -> None:
    echo, rec = bot
    channel = fakes.text_channel(echo, CHANNEL)
    secret = await _say(echo, channel, ALICE, "Mon code est 4512.")
    await _menu(echo, "Exclude from context", BOB, secret)
    assert rec.contents()[-1].startswith("You can exclude only your own messages")
    await _menu(echo, "Exclude from context", ALICE, secret)
    assert rec.contents()[-1].startswith("Excluded from the context")
    # The bot's reply to it: the person it answered may exclude it too.
    reply = fakes.message(echo, channel, author_id=fakes.BOT_ID, author_bot=True,
                          content="D'accord.", reply_to=fakes.payload_of(secret))  # fmt: skip
    await _menu(echo, "Exclude from context", ALICE, reply)
    await _say(echo, channel, ALICE, "On continue ?")
    prompt = [p for path, p in ollama.calls if path == "/api/chat"][-1]["messages"]
    assert all("4512" not in m["content"] and m["content"] != "D'accord." for m in prompt[1:-1])
    stored = await history.recent(echo.runtime.store, CHANNEL, limit=10, include_excluded=True)
    assert [m.excluded for m in stored][:2] == [True, True]
    # A moderator may restore anyone's message.
    await _menu(echo, "Include in context", BOB, secret, permissions=MANAGE_MESSAGES)
    assert rec.contents()[-1] == "Included in the context again."
    unknown = fakes.message(echo, channel, author_id=ALICE, content="never stored")
    await _menu(echo, "Exclude from context", ALICE, unknown)
    assert rec.contents()[-1] == "That message is not in my conversation history."
