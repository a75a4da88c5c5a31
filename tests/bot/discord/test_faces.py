"""A character speaks with its own name and face: through a channel webhook the bot owns where it
may manage webhooks, else as the bot; every rule on outgoing text holds either way. Real
discord.py objects, the webhooks kept by the recorder as Discord keeps them."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from bot.discord.app import EchoBot
from bot.discord.faces import RETRY_AFTER, edit_reply, face_of, room, safe_name
from memory.store.tables import history
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_discord import CHANNEL, _bot_with, _say
from tests.fakes.ollama import FakeOllama
from tests.memory.character.test_cards import png, v2
from tests.memory.character.test_names import discord_takes

ALICE, BOB = 1001, 1002
THREAD = 55


def _card(tmp_path: Path) -> Path:
    return png(tmp_path / "nyx.png", {"chara": v2()})


def _lines(post: fakes.Sent) -> list[str]:
    return str(post.payload["content"]).split("\n")


async def test_a_character_speaks_through_a_webhook_with_its_name_and_face(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_replies = ["Come in, @everyone."]
    card = _card(tmp_path)
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, rec):
        fakes.allow_webhooks(echo)
        asked = await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Hello Nyx")
    [made] = rec.webhook_creations()
    assert made.path == f"/channels/{CHANNEL}/webhooks"
    # The avatar is the card's picture, the card's JSON left out of it.
    picture = made.files["avatar"]
    assert Image.open(io.BytesIO(picture)).size == (8, 8)
    assert b"chara" not in picture and b"chara" in card.read_bytes()
    # The card's greeting, then the reply, each under the card's name, pinging no one.
    greeting, post = rec.webhook_posts()
    assert [p.payload["username"] for p in (greeting, post)] == ["Nyx", "Nyx"]
    assert all(p.payload["allowed_mentions"]["parse"] == [] for p in (greeting, post))
    link, text = _lines(greeting)
    assert link == f"-# ↪ https://discord.com/channels/{fakes.GUILD_ID}/{CHANNEL}/{asked.id}"
    card_said = [v2()["data"]["first_mes"], *v2()["data"]["alternate_greetings"]]
    assert text.replace("user1001", "{{user}}") in [g.replace("{{char}}", "Nyx") for g in card_said]
    assert post.payload["content"] == "Come in, @\u200beveryone."
    # Nothing went out as the bot itself.
    assert not [s for s in rec.sent if s.path.endswith(f"/channels/{CHANNEL}/messages")]


async def test_the_webhook_is_made_once_per_channel_and_found_again_after_a_restart(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    card = _card(tmp_path)
    rec = fakes.Recorder()
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, first):
        first.webhooks = rec.webhooks  # Discord's webhooks outlive the bot
        fakes.allow_webhooks(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        for n in range(3):
            await _say(echo, channel, ALICE + n, "Hello")
    assert len(first.webhook_creations()) == 1
    hook = next(iter(rec.webhooks))
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, again):
        again.webhooks = rec.webhooks
        fakes.allow_webhooks(echo)
        await _say(echo, fakes.text_channel(echo, CHANNEL), BOB, "Back?")
    assert again.webhook_creations() == []
    assert [s.method for s in again.sent if s.path.endswith("/webhooks")] == ["GET"]
    [post] = again.webhook_posts()
    assert post.path.startswith(f"/webhooks/{hook}/")


async def test_a_new_card_picture_is_uploaded_to_the_same_webhook(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    card = _card(tmp_path)
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, rec):
        fakes.allow_webhooks(echo)
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Hello")
    Image.new("RGB", (4, 4), (200, 0, 0)).save(card, pnginfo=_info(v2()))
    async with _bot_with(tmp_path, ollama, character={"card": card}) as (echo, again):
        again.webhooks = rec.webhooks
        fakes.allow_webhooks(echo)
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Hello")
    assert again.webhook_creations() == []
    [hook] = rec.webhooks
    assert Image.open(io.BytesIO(again.avatars.get(hook) or b"")).size == (4, 4)


def _info(card: dict[str, Any]) -> Any:
    import base64

    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("chara", base64.b64encode(json.dumps(card).encode()).decode())
    return info


async def test_a_long_webhook_reply_is_split_under_2000_with_the_link_first(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    said = " ".join(f"Phrase numéro {n} du récit." for n in range(300))
    ollama.chat_replies = [said]
    async with _bot_with(tmp_path, ollama, limits={"max_reply_chars": 20_000}) as (echo, rec):
        fakes.allow_webhooks(echo)
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Raconte")
    posts = rec.webhook_posts()
    assert len(posts) >= 4
    contents = [str(p.payload["content"]) for p in posts]
    assert all(len(c) <= 2000 for c in contents)
    assert all(p.payload["allowed_mentions"]["parse"] == [] for p in posts)
    assert contents[0].startswith("-# ↪ ") and not contents[1].startswith("-# ↪ ")
    assert " ".join(c.split("\n", 1)[-1] if i == 0 else c for i, c in enumerate(contents)) == said


async def test_without_manage_webhooks_the_bot_replies_itself_and_says_it_once(
    tmp_path: Path, ollama: FakeOllama, caplog: pytest.LogCaptureFixture
) -> None:
    ollama.chat_replies = ["Bonjour !"]
    caplog.set_level(logging.INFO, logger="bot.discord.faces")
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Salut")
        await _say(echo, channel, BOB, "Salut")
        faces = echo.get_cog("Conversation").faces  # type: ignore[union-attr]
    assert rec.webhook_creations() == [] and rec.webhook_posts() == []
    replies = [s for s in rec.sent if s.path == f"/channels/{CHANNEL}/messages"]
    assert len(replies) == 2 and replies[0].payload["content"] == "Bonjour !"
    assert all("message_reference" in r.payload for r in replies)
    told = [r for r in caplog.records if "Manage Webhooks" in r.getMessage()]
    assert len(told) == 1
    assert faces.fallbacks["no Manage Webhooks permission"] == 2


@pytest.mark.parametrize("refusal", ["execute", "creation"])
async def test_a_refused_webhook_call_loses_nothing(
    tmp_path: Path, ollama: FakeOllama, refusal: str
) -> None:
    ollama.chat_replies = ["Je suis là."]
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        fakes.allow_webhooks(echo)
        if refusal == "execute":
            rec.refuse_executes = 404  # deleted from the channel's settings meanwhile
        else:
            rec.refuse_creations = 400  # the channel holds 15 webhooks
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Tu es là ?")
        replies = [s for s in rec.sent if s.path == f"/channels/{CHANNEL}/messages"]
        assert [r.payload["content"] for r in replies] == ["Je suis là."]
        if refusal == "execute":
            # A webhook Discord no longer knows is made again at the next reply.
            rec.refuse_executes = None
            rec.webhooks.clear()
            await _say(echo, channel, BOB, "Et maintenant ?")
            assert len(rec.webhook_creations()) == 2
            assert len(rec.webhook_posts()) == 1


async def test_a_webhook_message_refused_as_malformed_is_not_tried_again_until_its_back_off_ends(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """Discord answers 400 to the character's messages through its webhook (its rules for a
    username changed): one refused call, then the bot speaks itself for that character in that
    channel until the back-off ends (a virtual clock), then tries again."""
    ollama.chat_reply = lambda payload: "Je suis là."
    now = [1000.0]
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        fakes.allow_webhooks(echo)
        echo.get_cog("Conversation").faces.clock = lambda: now[0]  # type: ignore[union-attr]
        channel = fakes.text_channel(echo, CHANNEL)
        rec.refuse_executes = 400
        for n in range(4):
            await _say(echo, channel, ALICE + n, f"Tu es là ? {n}")
            now[0] += 60
        assert len(rec.webhook_posts()) == 1  # one refused call, not one per reply
        as_bot = [s for s in rec.sent if s.path == f"/channels/{CHANNEL}/messages"]
        assert [s.payload["content"] for s in as_bot] == ["Je suis là."] * 4
        # Elsewhere the same character still speaks through its own webhook.
        await _say(echo, fakes.text_channel(echo, 77), BOB, "Et ici ?", mentions=[fakes.BOT_ID])
        assert len(rec.webhook_posts()) == 2
        rec.refuse_executes = None
        now[0] = 1000.0 + RETRY_AFTER + 1
        await _say(echo, channel, BOB, "Et maintenant ?")
    taken = [p for p in rec.webhook_posts() if p.answer is not None]
    assert len(rec.webhook_posts()) == 3 and len(taken) == 1
    assert str(taken[0].payload["content"]).endswith("\nJe suis là.")


async def test_refusals_back_off_longer_each_time_and_many_channels_at_once_keep_apart(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = lambda payload: "Oui."
    now = [0.0]
    channels = [CHANNEL, 71, 72, 73]
    async with _bot_with(tmp_path, ollama, discord={"channels": channels}) as (echo, rec):
        fakes.allow_webhooks(echo)
        faces = echo.get_cog("Conversation").faces  # type: ignore[union-attr]
        faces.clock = lambda: now[0]
        places = [fakes.text_channel(echo, c) for c in channels]
        rec.refuse_executes = 400
        await asyncio.gather(*(
            _say(echo, places[n % 4], ALICE + n, f"Allô {n}") for n in range(16)
        ))  # fmt: skip
        tried = {p.path.split("/")[2] for p in rec.webhook_posts()}
        # One refused call per channel's webhook (a reply begun before the refusal does not
        # try it either), and every message answered by the bot itself.
        assert len(rec.webhook_posts()) == 4 and len(tried) == 4
        first = len(rec.webhook_posts())
        answered = [s for s in rec.sent if s.path.endswith("/messages") and s.method == "POST"]
        assert len(answered) == 16
        now[0] = RETRY_AFTER + 1  # the back-off ends: one more refused call, a longer back-off
        await _say(echo, places[0], BOB, "Encore ?")
        assert len(rec.webhook_posts()) == first + 1
        now[0] = 2 * RETRY_AFTER + 2  # past the first back-off's length, within the second's
        await _say(echo, places[0], BOB, "Et là ?")
        assert len(rec.webhook_posts()) == first + 1


async def test_a_webhook_refused_midway_lets_the_bot_say_the_rest(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    said = " ".join(f"Phrase numéro {n} du récit." for n in range(200))
    ollama.chat_replies = [said]
    async with _bot_with(tmp_path, ollama, limits={"max_reply_chars": 20_000}) as (echo, rec):
        fakes.allow_webhooks(echo)
        rec.refuse_executes, rec.refuse_executes_after = 500, 1
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Raconte")
    [first] = [s for s in rec.webhook_posts() if s.answer is not None]
    rest = [s for s in rec.sent if s.path == f"/channels/{CHANNEL}/messages"]
    assert rest and all(len(str(s.payload["content"])) <= 2000 for s in rest)
    # The bot's part continues the webhook's: no name line, nothing lost, nothing twice.
    words = str(first.payload["content"]).split("\n", 1)[1].split() + [
        w for s in rest for w in str(s.payload["content"]).split()
    ]
    assert words == said.split()


async def test_in_a_thread_the_parent_channels_webhook_posts_into_the_thread(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        fakes.allow_webhooks(echo)
        await _say(echo, fakes.thread(echo, THREAD, CHANNEL), ALICE, "Dans le fil")
    [made] = rec.webhook_creations()
    assert made.path == f"/channels/{CHANNEL}/webhooks"
    [post] = rec.webhook_posts()
    assert post.params["thread_id"] == THREAD
    assert f"/{CHANNEL}/" not in _lines(post)[0] and f"/{THREAD}/" in _lines(post)[0]


async def test_an_edit_of_a_webhook_message_pings_no_one(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        fakes.allow_webhooks(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Salut")
        faces = echo.get_cog("Conversation").faces  # type: ignore[union-attr]
        asked = fakes.message(echo, channel, author_id=BOB, content="x")
        [sent] = await faces.send_reply(channel, asked, ["<@1001> first"], faces_face(echo))
        await edit_reply(sent, "<@1001> then @here")
        with pytest.raises(ValueError, match="over the"):
            await edit_reply(sent, "x" * room(sent) + "x")
        [more] = await faces.send_reply(channel, asked, ["and more"], faces_face(echo),
                                        continued=True)  # fmt: skip
    [edit] = rec.webhook_edits()
    assert edit.payload["allowed_mentions"]["parse"] == []
    # The edit keeps the line linking to the message answered; a continued part has none.
    assert edit.payload["content"] == f"-# ↪ {asked.jump_url}\n<@1001> then @here"
    assert more.content == "and more"


def faces_face(echo: EchoBot) -> Any:
    return face_of(echo.runtime.characters.default, named=False)


async def test_a_name_discord_refuses_is_sent_as_one_it_takes(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    name = "Clyde of the Discord\nserver: @everyone #1 " + "x" * 80
    async with _bot_with(tmp_path, ollama, character={"name": name[:80]}) as (echo, rec):
        fakes.allow_webhooks(echo)
        await _say(echo, fakes.text_channel(echo, CHANNEL), ALICE, "Salut")
    # The loopback Discord refuses (400) a username its rules refuse: this one went out.
    [post] = rec.webhook_posts()
    [made] = rec.webhook_creations()
    assert post.answer is not None
    for sent in (post.payload["username"], made.payload["name"]):
        assert discord_takes(sent)
    assert (
        post.payload["username"]
        .replace("\u200a", "")
        .startswith("Clyde of the Discord server\ua789 \uff20everyone \uff031")
    )


@given(st.text(max_size=200))
def test_any_name_becomes_one_discord_takes(name: str) -> None:
    made = safe_name(name)
    assert discord_takes(made) and "\n" not in made


# --- the message menus on a webhook's message ---------------------------------------------


async def _menu(echo: EchoBot, name: str, user: int, target: Any) -> None:
    await echo.tree._call(
        fakes.message_command(echo, name, user_id=user, channel_id=CHANNEL, target=target)
    )


async def test_forget_and_exclude_work_on_a_webhook_message(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_replies = ["Noté.", "Oui ?"]
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        fakes.allow_webhooks(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "Mon code est 4512.")
        said = fakes.received(echo, channel, rec.webhook_posts()[-1])
        assert said.webhook_id is not None and said.reference is None
        await _menu(echo, "Exclude from context", ALICE, said)
        assert rec.contents()[-1].startswith("Excluded from the context")
        stored = await history.recent(echo.runtime.store, CHANNEL, limit=10, include_excluded=True)
        assert [(m.content, m.excluded) for m in stored][-1] == ("Noté.", True)
        await _say(echo, channel, ALICE, "Autre chose.")
        later = fakes.received(echo, channel, rec.webhook_posts()[-1])
        await _menu(echo, "Forget this message", ALICE, later)
        assert rec.contents()[-1].startswith("Forgotten")
        stored = await history.recent(echo.runtime.store, CHANNEL, limit=10, include_excluded=True)
        assert "Oui ?" not in [m.content for m in stored]
        assert "Autre chose." not in [m.content for m in stored]
