"""Pictures sent to both dialects: what arrives at the server (base64, within its caps), and
whether the model sees images, learned once per server and model and kept."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from PIL import Image

from memory.backends.chat import OllamaChat, OpenAIChat, _StructuredChat
from memory.backends.structured import Negotiator
from memory.backends.vision import PICTURES
from memory.errors import ImagesRefused
from memory.manage import setup
from memory.pictures import MAX_SIDE, Intake, Picture
from memory.store import Store
from tests.fakes.ollama import FakeOllama, serve_fake_ollama
from tests.fakes.openai import FakeOpenAI, serve_fake_openai

Fake = FakeOllama | FakeOpenAI


def photo(size: tuple[int, int] = (2000, 1500)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, "teal").save(out, "PNG")
    return out.getvalue()


@pytest.fixture(params=["ollama", "openai"])
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[Fake]:
    if request.param == "ollama":
        async with serve_fake_ollama() as ollama:
            yield ollama
    else:
        async with serve_fake_openai() as openai:
            yield openai


def client(fake: Fake, http: httpx.AsyncClient, modes: Negotiator) -> _StructuredChat:
    if isinstance(fake, FakeOllama):
        return OllamaChat(http, fake.url, "llava", modes=modes)
    return OpenAIChat(http, fake.url, "gemma-3-4b-it", modes=modes)


async def _picture() -> Picture:
    return await Intake().read("rex.png", photo(), size=123_456)


def _messages(picture: Picture) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are Écho."},
        {"role": "user", "content": "Léa: voici Rex !", PICTURES: (picture,)},
    ]


def _decoded(sent: str) -> Image.Image:
    data = sent.split(",", 1)[1] if sent.startswith("data:") else sent
    return Image.open(io.BytesIO(base64.b64decode(data)))


async def test_the_picture_arrives_as_base64_within_its_caps(fake: Fake) -> None:
    fake.sees_images = True
    fake.vision_reply = lambda payload: "Quel beau golden retriever !"
    modes = Negotiator()
    async with httpx.AsyncClient() as http:
        chat = client(fake, http, modes)
        reply = await chat.chat(_messages(await _picture()), deadline=10)
        assert reply.content == "Quel beau golden retriever !"
    [sent] = fake.images_sent()
    if isinstance(fake, FakeOpenAI):
        assert sent.startswith("data:image/jpeg;base64,")
    with _decoded(sent) as seen:
        assert seen.format == "JPEG" and max(seen.size) == MAX_SIDE
    assert modes.sees(fake.url, chat.model) is True


async def test_a_model_without_vision_is_learned_once(fake: Fake, store: Store) -> None:
    modes = await setup.negotiator(store, override=None)
    async with httpx.AsyncClient() as http:
        chat = client(fake, http, modes)
        with pytest.raises(ImagesRefused):
            await chat.chat(_messages(await _picture()), deadline=10)
        assert modes.sees(fake.url, chat.model) is False
        # Known from then on, across a restart too: the picture is never sent again.
        again = await setup.negotiator(store, override=None)
        assert again.sees(fake.url, chat.model) is False
        assert await client(fake, http, again).sees_images() is False
    assert len(fake.images_sent()) == 1


async def test_a_refused_stream_is_learned_too(fake: Fake) -> None:
    modes = Negotiator()
    async with httpx.AsyncClient() as http:
        chat = client(fake, http, modes)
        with pytest.raises(ImagesRefused):
            async with chat.stream(_messages(await _picture()), deadline=10) as stream:
                async for _ in stream:
                    pass
    assert modes.sees(fake.url, chat.model) is False


@pytest.mark.parametrize("sees", [True, False])
async def test_the_server_says_whether_its_model_sees(fake: Fake, sees: bool) -> None:
    fake.sees_images = sees
    if isinstance(fake, FakeOpenAI):
        fake.says_vision = True
    modes = Negotiator()
    async with httpx.AsyncClient() as http:
        chat = client(fake, http, modes)
        assert await chat.sees_images() is sees
    assert modes.sees(fake.url, chat.model) is sees
    assert fake.images_sent() == []  # nothing had to be tried


async def test_a_server_that_says_nothing_is_asked_once(fake: Fake) -> None:
    if isinstance(fake, FakeOllama):
        fake.says_capabilities = False  # an Ollama before 0.6
    async with httpx.AsyncClient() as http:
        chat = client(fake, http, Negotiator())
        assert await chat.sees_images() is None
        assert await chat.sees_images() is None
    asked = [path for path, _ in fake.calls if path in ("/api/show", "/props")]
    assert len(asked) == 1


async def test_messages_without_pictures_are_sent_as_before(fake: Fake) -> None:
    async with httpx.AsyncClient() as http:
        chat = client(fake, http, Negotiator())
        await chat.chat([{"role": "user", "content": "salut"}], deadline=10)
    [payload] = [p for path, p in fake.calls if "chat" in path]
    assert payload["messages"] == [{"role": "user", "content": "salut"}]
