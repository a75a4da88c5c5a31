"""Character cards past the caps are refused in one line naming the cap; the PNG's image is never
decoded; text that is not well-formed (invalid UTF-8, lone surrogates) is cleaned, not a crash."""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from memory.character.cards import (
    MAX_CARD_BYTES,
    MAX_LORE_ENTRIES,
    MAX_PERSONA_CHARS,
    load_card,
    parse_card,
)
from memory.character.png import MAX_AVATAR_BYTES, MAX_IMAGE_PIXELS, PNG_SIGNATURE, portrait
from memory.errors import CardError
from memory.manage import context
from memory.store import Store
from memory.store.tables import lore_entries as lore_store
from tests.memory.character.test_cards import v2


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(path: Path, *chunks: bytes, size: tuple[int, int] = (8, 8), idat: bytes = b"") -> Path:
    """A PNG written byte by byte: any header, any image data, the given chunks after it."""
    header = struct.pack(">IIBBBBB", *size, 8, 2, 0, 0, 0)
    image = idat or zlib.compress(b"\0" * (size[1] * (1 + 3 * size[0])))
    path.write_bytes(
        PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", image) + b"".join(chunks)
        + _chunk(b"IEND", b"")
    )  # fmt: skip
    return path


def _chara(card: dict[str, Any] | bytes) -> bytes:
    raw = card if isinstance(card, bytes) else json.dumps(card).encode()
    return _chunk(b"tEXt", b"chara\0" + base64.b64encode(raw))


def _refused(path: Path) -> str:
    with pytest.raises(CardError) as caught:
        load_card(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def _entries(n: int) -> dict[str, Any]:
    entry = {"keys": ["phare"], "content": "Le phare.", "extensions": {}, "enabled": True,
             "insertion_order": 1}  # fmt: skip
    return {"entries": [entry] * n}


@pytest.mark.parametrize("side", [20000, 9400])  # 9400x9400: the 88 MP that took 367 MB
def test_an_image_too_large_is_refused_from_its_header(tmp_path: Path, side: int) -> None:
    # The size declared, a few bytes of image data: only the header is read.
    path = _png(tmp_path / "huge.png", _chara(v2()), size=(side, side), idat=b"x" * 64)
    assert _refused(path).endswith(
        f"the PNG's image is {side}x{side}, over the {MAX_IMAGE_PIXELS:,}-pixel cap for a card "
        "portrait"
    )


def test_the_image_is_never_decoded(tmp_path: Path) -> None:
    # Image data no decoder would accept, the card after it: the card still reads.
    card = load_card(_png(tmp_path / "nyx.png", _chara(v2()), idat=b"not an image at all"))
    assert card.name == "Nyx" and len(card.lore) == 3


def test_a_file_over_the_byte_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.png"
    with path.open("wb") as sparse:
        sparse.truncate(MAX_CARD_BYTES + 1)
    assert _refused(path).endswith(
        f"{MAX_CARD_BYTES + 1:,} bytes, over the {MAX_CARD_BYTES:,}-byte cap for a character card"
    )


def test_compressed_and_international_text_chunks_written_by_pillow_are_read(
    tmp_path: Path,
) -> None:
    for name, add in (
        ("ztxt", lambda info, text: info.add_text("chara", text, zip=True)),
        ("itxt", lambda info, text: info.add_itxt("chara", text)),
        ("itxt-zip", lambda info, text: info.add_itxt("chara", text, zip=True)),
    ):
        info = PngInfo()
        add(info, base64.b64encode(json.dumps(v2(name="Éole")).encode()).decode())
        path = tmp_path / f"{name}.png"
        Image.new("RGB", (8, 8)).save(path, pnginfo=info)
        assert load_card(path).name == "Éole", name


def test_a_text_chunk_that_inflates_past_the_cap_is_refused(tmp_path: Path) -> None:
    bomb = _chunk(b"zTXt", b"chara\0\0" + zlib.compress(b"A" * (MAX_CARD_BYTES + 1), 9))
    assert "inflates past the" in _refused(_png(tmp_path / "bomb.png", bomb))


def test_a_damaged_text_chunk_is_refused(tmp_path: Path) -> None:
    broken = bytearray(_chara(v2()))
    broken[-5] ^= 0xFF  # a flipped byte: the checksum no longer matches
    assert _refused(_png(tmp_path / "crc.png", bytes(broken))).endswith(
        "a damaged PNG (the tEXt chunk fails its CRC)"
    )


def test_too_many_lore_entries_is_refused_naming_the_cap() -> None:
    card = parse_card(json.dumps(v2(character_book=_entries(MAX_LORE_ENTRIES))))
    assert len(card.lore) == MAX_LORE_ENTRIES
    with pytest.raises(CardError) as caught:
        parse_card(json.dumps(v2(character_book=_entries(100_000))))
    assert str(caught.value) == (
        f"the lorebook has 100,000 entries, over the {MAX_LORE_ENTRIES:,}-entry cap (each is "
        "matched against every message)"
    )


def test_too_long_a_persona_is_refused_naming_the_cap(tmp_path: Path) -> None:
    fits = v2(description="x" * (MAX_PERSONA_CHARS // 2), system_prompt="")
    assert parse_card(json.dumps(fits)).persona.startswith("xxx")
    path = tmp_path / "long.json"
    path.write_text(json.dumps(v2(description="x" * MAX_PERSONA_CHARS)), encoding="utf-8")
    assert f"over the {MAX_PERSONA_CHARS:,}-character cap" in _refused(path)


def test_invalid_utf8_in_a_png_card_is_replaced_and_said(tmp_path: Path) -> None:
    raw = json.dumps(v2(description="CAFE")).encode().replace(b"CAFE", b"caf\xe9 cr\xe8me")
    card = load_card(_png(tmp_path / "latin1.png", _chara(raw)))
    assert card.persona.startswith("caf\ufffd cr\ufffdme")
    assert "invalid UTF-8 replaced by \ufffd" in card.report.warnings


def test_deep_nesting_is_a_card_error_not_a_crash() -> None:
    with pytest.raises(CardError, match="nested too deeply"):
        parse_card("[" * 100_000 + "]" * 100_000)


async def test_lone_surrogates_in_a_card_are_cleaned_before_the_database(
    store: Store,
) -> None:
    entry = {"keys": ["phare\ud800"], "content": "Le phare\udfff.", "enabled": True,
             "extensions": {"note\ud800": "\udc00"}, "comment": "x\ud800"}  # fmt: skip
    text = json.dumps(v2(name="Nyx\ud800", character_book={"entries": [entry]}))
    assert "\\ud800" in text  # JSON escapes, as a card file carries them
    card = parse_card(text)
    assert card.name == "Nyx\ufffd" and card.lore[0].content == "Le phare\ufffd."
    assert await context.sync_card_lore(store, card)
    [stored] = await lore_store.applicable(store, None)
    assert stored.keywords == ("phare\ufffd",)
    assert stored.extra["extensions"] == {"note\ufffd": "\ufffd"}


def test_a_cards_portrait_is_its_picture_without_the_card(tmp_path: Path) -> None:
    note = _chunk(b"zTXt", b"note\0\0" + zlib.compress(b"x"))
    picture = portrait(_png(tmp_path / "c.png", _chara(v2()), note).read_bytes())
    assert picture.startswith(PNG_SIGNATURE) and b"chara" not in picture and b"note" not in picture
    assert picture == _png(tmp_path / "bare.png").read_bytes()  # the same image, chunk by chunk
    assert portrait(picture) == picture


def test_a_portrait_over_the_caps_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(CardError, match="over the 16,777,216-pixel cap"):
        portrait(_png(tmp_path / "wide.png", size=(5000, 5000), idat=b"x").read_bytes())
    heavy = _png(tmp_path / "heavy.png", idat=os.urandom(MAX_AVATAR_BYTES))
    with pytest.raises(CardError, match=r"over the 8,388,608-byte cap for an avatar"):
        portrait(heavy.read_bytes())
    with pytest.raises(CardError, match="not a PNG"):
        portrait(b"GIF89a")
