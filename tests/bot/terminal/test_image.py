"""`/image PATH [TEXT]` in `echo-bot chat`, against the loopback fake Ollama playing a vision
model: the picture reaches the model within its caps, the reflection learns from it, /why marks
what it learned, and forgetting the message erases it (on the `database` fixture's backend). A
model that does not see images is told the picture's name and size instead."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

from memory.pictures import MAX_SIDE
from tests.bot.terminal.test_erasure import _config, _run, _stored
from tests.fakes import canary
from tests.fakes.ollama import FakeOllama
from tests.memory.test_pictures import bomb as pixel_bomb

CODE = "GLDCANARY7312"
LEARNED = f"A un chien, Rex, un golden retriever ({CODE})"


def _photo(tmp_path: Path) -> Path:
    path = tmp_path / "rex.png"
    Image.new("RGB", (3000, 2000), (218, 165, 32)).save(path)  # goldenrod
    return path


def _seen(payload: dict[str, Any]) -> str:
    """What the fake vision model says of the picture it received: its size and colour."""
    [picture] = [i for m in payload["messages"] for i in m.get("images", [])]
    with Image.open(io.BytesIO(base64.b64decode(picture))) as image:
        rgb = image.convert("RGB").getpixel((0, 0))
        assert isinstance(rgb, tuple)
        shade = ", ".join(str(c // 8 * 8) for c in rgb)
        return f"{image.format} {image.width}x{image.height}, rgb({shade})"


def vision(payload: dict[str, Any]) -> str:
    """A fake vision model: it describes the picture it was sent; asked for a reflection, it
    keeps what the person showed."""
    asked = canary.reflection_request(payload)
    if asked is None:
        return f"Je vois ta photo ({_seen(payload)}) : quel beau chien doré !"
    memory = {"text": LEARNED, "kind": "fact", "scope": "global", "confidence": 0.9}
    return json.dumps({"memories": [memory], "summary": "Marie a montré son chien."})


async def test_a_picture_goes_to_the_model_and_is_remembered_in_words(
    database: Path | str, tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.sees_images, ollama.vision_reply = True, vision
    config = _config(database, tmp_path, ollama.url)
    photo = _photo(tmp_path)
    out, _ = await _run(
        config, [f"/image {photo} Voici Rex !", "/memories", "Tu te souviens de Rex ?", "/why"]
    )
    assert "Je vois ta photo (JPEG 1024x683, rgb(216, 160, 32)) : quel beau chien doré !" in out
    assert LEARNED in out
    # /why, after the next message recalled it: marked as learned from a picture.
    [why] = [line for line in out.splitlines() if "📷" in line]
    assert CODE in why and why.endswith("📷 learned from a picture")
    [sent] = ollama.images_sent()[:1]
    with Image.open(io.BytesIO(base64.b64decode(sent))) as image:
        assert max(image.size) == MAX_SIDE
    # Forgetting the message forgets what was learned from its picture, everywhere.
    out, _ = await _run(config, ["/forget-message 1", "/memories"])
    assert "1 memory" in out
    assert await _stored(database, tmp_path, CODE) == 0


async def test_a_model_that_cannot_see_is_told_the_picture_is_there(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    ollama.chat_reply = lambda payload: "Je ne peux pas voir les images, désolée."
    config = _config(tmp_path / "echo.sqlite3", tmp_path, ollama.url)
    out, _ = await _run(
        config, [f"/image {_photo(tmp_path)}", f"/image {_photo(tmp_path)} Et là ?"]
    )
    assert out.count("Je ne peux pas voir les images") == 2
    assert ollama.images_sent() == []  # its capabilities say it cannot: none was ever sent
    turns = [p for path, p in ollama.calls if path == "/api/chat" and "format" not in p]
    for payload in turns:
        assert "[image attached: rex.png, " in payload["messages"][-1]["content"]
        assert "you are not shown" in payload["messages"][0]["content"]


async def test_a_pixel_bomb_is_named_not_read(tmp_path: Path, ollama: FakeOllama) -> None:
    ollama.sees_images = True
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(pixel_bomb(12_000))
    config = _config(tmp_path / "echo.sqlite3", tmp_path, ollama.url)
    await _run(config, [f"/image {bomb} regarde"])
    assert ollama.images_sent() == []
    [turn] = [p for path, p in ollama.calls if path == "/api/chat" and "format" not in p]
    assert "not read: 12000x12000 pixels, over the" in turn["messages"][-1]["content"]
