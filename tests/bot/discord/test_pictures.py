"""Pictures posted on Discord: real discord.Message objects whose attachments are served by a
loopback CDN, the fake Ollama playing a vision model. A message of a picture alone is answered;
only the message's own attachments on the CDN are fetched, within the declared size; many
people posting at once are read under the global bound; deleting the message forgets what was
learned from its picture (on the `database` fixture's backend)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from PIL import Image

from bot.discord.app import EchoBot
from memory import manage
from memory.pictures import MAX_DECODES
from tests.bot import discord_fakes as fakes
from tests.bot.discord.test_answers import ALICE, BOB, SETTLING, _buttons, _edits, _posted, _press
from tests.bot.discord.test_discord import CHANNEL, _bot_with, _say
from tests.bot.discord.test_following import _delete, _edit
from tests.bot.terminal.test_image import CODE, vision
from tests.fakes import canary
from tests.fakes.loopback import serve
from tests.fakes.ollama import FakeOllama


class FakeCDN:
    """Discord's CDN on loopback: /attachments/<channel>/<id>/<name>, and what was fetched."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.fetched: list[str] = []
        self.url = ""

    async def get(self, request: web.Request) -> web.StreamResponse:
        self.fetched.append(request.path)
        body = self.files.get(request.path)
        if body is None:
            return web.Response(status=404)
        return web.Response(body=body, content_type="image/png")

    def attachment(
        self, attachment_id: int, raw: bytes, *, channel: int = CHANNEL, size: int | None = None
    ) -> dict[str, Any]:
        path = f"/attachments/{channel}/{attachment_id}/rex.png"
        self.files[path] = raw
        return {
            "id": str(attachment_id), "filename": "rex.png", "size": size or len(raw),
            "url": self.url + path, "proxy_url": self.url + path, "content_type": "image/png",
        }  # fmt: skip


@pytest.fixture
async def cdn() -> AsyncIterator[FakeCDN]:
    fake = FakeCDN()
    app = web.Application()
    app.router.add_get("/attachments/{tail:.*}", fake.get)
    async with serve(app) as fake.url:
        yield fake


def _photo(colour: tuple[int, int, int] = (218, 165, 32)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1600, 1200), colour).save(out, "PNG")
    return out.getvalue()


def _on_loopback(echo: EchoBot) -> None:
    fetcher = echo.get_cog("Conversation").pictures  # type: ignore[union-attr]
    fetcher.hosts, fetcher.schemes = frozenset({"127.0.0.1"}), frozenset({"http"})


async def test_a_picture_alone_is_answered_with_what_the_model_sees(
    tmp_path: Path, ollama: FakeOllama, cdn: FakeCDN
) -> None:
    ollama.sees_images, ollama.vision_reply = True, vision
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        _on_loopback(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, 1001, "", attachments=[cdn.attachment(5, _photo())])
    [sent] = rec.messages()
    assert sent["content"].startswith("Je vois ta photo (JPEG 1024x768")
    assert sent["allowed_mentions"]["parse"] == []


async def test_only_the_messages_own_attachments_on_the_cdn_are_fetched(
    tmp_path: Path, ollama: FakeOllama, cdn: FakeCDN
) -> None:
    ollama.sees_images = True
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        _on_loopback(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        elsewhere = cdn.attachment(6, _photo(), channel=CHANNEL + 1)  # another channel's
        too_big = cdn.attachment(7, _photo(), size=11 * 1024 * 1024)  # declared over 10 MB
        await _say(echo, channel, 1001, "regarde", attachments=[elsewhere, too_big])
    assert cdn.fetched == [] and ollama.images_sent() == []
    [turn] = [p for path, p in ollama.calls if path == "/api/chat" and "format" not in p]
    said = turn["messages"][-1]["content"]
    assert "not read: not from Discord's CDN" in said and "not read: over the 10 MB cap" in said
    assert rec.messages()


async def test_many_people_posting_pictures_at_once_are_all_answered_under_the_bound(
    tmp_path: Path, ollama: FakeOllama, cdn: FakeCDN
) -> None:
    ollama.sees_images, ollama.vision_reply = True, vision
    async with _bot_with(tmp_path, ollama) as (echo, rec):
        _on_loopback(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        people = range(2001, 2009)
        await asyncio.gather(
            *(
                _say(echo, channel, person, f"de {person}",
                     attachments=[cdn.attachment(person, _photo((person % 256, 90, 40)))])
                for person in people
            )
        )  # fmt: skip
        intake = echo.runtime.intake
    answers = [m["content"] for m in rec.messages()]
    assert len(answers) == len(people) and all(a.startswith("Je vois ta photo") for a in answers)
    assert intake.most <= MAX_DECODES and intake.running == 0
    assert len(cdn.fetched) == len(people)


async def test_deleting_the_message_forgets_what_its_picture_taught(
    database: Path | str, tmp_path: Path, ollama: FakeOllama, cdn: FakeCDN
) -> None:
    ollama.sees_images, ollama.vision_reply = True, vision
    async with _bot_with(tmp_path, ollama, database=database) as (echo, _):
        _on_loopback(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        message = await _say(echo, channel, 1001, "Voici Rex !",
                             attachments=[cdn.attachment(8, _photo())])  # fmt: skip
        await echo.after_turns()
        store = echo.runtime.store
        assert await canary.stored(store, tmp_path, CODE) > 0  # learned from the picture
        assert await manage.from_pictures(store, 1001, await manage.list_memories(store, 1001))
        await _delete(echo, message.id)
        assert await canary.stored(store, tmp_path, CODE) == 0
        assert await manage.list_memories(store, 1001) == []


async def test_another_answer_and_try_again_show_the_model_the_picture_again(
    tmp_path: Path, ollama: FakeOllama, cdn: FakeCDN
) -> None:
    """While the exchange waits for its reflection, *Another answer* asks the model again with
    the picture (it answered from the picture the first time, and does again); a turn that
    failed keeps its picture for *Try again*. Both at once, for two people."""
    ollama.sees_images, ollama.vision_reply = True, vision
    async with _bot_with(tmp_path, ollama, **SETTLING) as (echo, rec):
        _on_loopback(echo)
        channel = fakes.text_channel(echo, CHANNEL)
        await _say(echo, channel, ALICE, "regarde", attachments=[cdn.attachment(5, _photo())])
        reply = _posted(rec)
        assert reply["content"].startswith("Je vois ta photo (JPEG 1024x768")
        ollama.set("/api/chat", "500")
        blue = cdn.attachment(6, _photo((16, 64, 200)))
        await _say(echo, channel, BOB, "et celle-ci ?", attachments=[blue])
        failed = _posted(rec)
        assert [b["label"] for b in _buttons(failed)] == ["Try again"]
        ollama.set("/api/chat", "ok")
        mark = len(rec.sent)
        await asyncio.gather(
            _press(echo, reply, "Another answer", ALICE), _press(echo, failed, "Try again", BOB)
        )
        edits = sorted(edit["content"] for edit in _edits(rec, mark))
    assert edits == [
        "Je vois ta photo (JPEG 1024x768, rgb(16, 64, 200)) : quel beau chien doré !",
        "Je vois ta photo (JPEG 1024x768, rgb(216, 160, 32)) : quel beau chien doré !",
    ]


async def test_an_edited_message_is_answered_again_with_its_picture(
    tmp_path: Path, ollama: FakeOllama, cdn: FakeCDN
) -> None:
    """With `answer_edits`, a message whose text is edited before its reflection ran is
    answered again from its picture too: the picture is still attached on Discord, and still
    kept for the reflection."""
    ollama.sees_images, ollama.vision_reply = True, vision
    async with _bot_with(tmp_path, ollama, **SETTLING) as (echo, rec):
        _on_loopback(echo)
        settings = echo.runtime.settings
        settings.discord = settings.discord.model_copy(update={"answer_edits": True})
        channel = fakes.text_channel(echo, CHANNEL)
        photo = cdn.attachment(5, _photo((200, 40, 40)))
        message = await _say(echo, channel, ALICE, "regarde", attachments=[photo])
        await _edit(echo, message, "regarde mon chien")
        edited = rec.sent[-1]
    assert edited.method == "PATCH"
    assert edited.payload["content"].startswith("Je vois ta photo (JPEG 1024x768, rgb(200, 40")
    assert len(ollama.images_sent()) == 2
