"""Posted pictures: read within their caps, written again small; bombs refused from their
header, in milliseconds, without their pixels ever allocated."""

from __future__ import annotations

import asyncio
import io
import struct
import time
import tracemalloc
import zlib

import pytest
from PIL import Image

from memory.errors import PictureError
from memory.pictures import (
    MAX_DECODES,
    MAX_PICTURE_BYTES,
    MAX_SIDE,
    Intake,
    Picture,
    check,
    decode,
    dimensions,
)


def encoded(fmt: str, size: tuple[int, int], color: str = "orange", mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, color).save(out, fmt)
    return out.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_declaring(width: int, height: int, idat: bytes) -> bytes:
    """A PNG whose header says width x height, 1-bit grey, with this compressed image data."""
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", idat)
        + _chunk(b"IEND", b"")
    )


def bomb(side: int) -> bytes:
    """A real decompression bomb: a side x side black 1-bit PNG, every row present, a few
    hundred kilobytes that inflate to side * side / 8 bytes (and side * side pixels)."""
    row = b"\0" * (1 + side // 8)
    squeeze = zlib.compressobj(9)
    data = b"".join(squeeze.compress(row) for _ in range(side)) + squeeze.flush()
    return png_declaring(side, side, data)


def test_each_format_is_written_again_as_a_bounded_jpeg() -> None:
    for fmt in ("PNG", "JPEG", "WEBP", "GIF"):
        out = decode(encoded(fmt, (MAX_SIDE + 100, (MAX_SIDE + 100) // 2)))
        with Image.open(io.BytesIO(out)) as seen:
            assert seen.format == "JPEG"
            assert seen.size == (MAX_SIDE, MAX_SIDE // 2), fmt


def test_a_small_picture_keeps_its_size_and_its_colour() -> None:
    out = decode(encoded("PNG", (40, 30), "red"))
    with Image.open(io.BytesIO(out)) as seen:
        assert seen.size == (40, 30)
        red, green, blue = seen.convert("RGB").getpixel((20, 15))  # type: ignore[misc]
        assert red > 240 and green < 20 and blue < 20


def test_a_gif_is_shown_by_its_first_frame() -> None:
    frames = [Image.new("RGB", (20, 20), c) for c in ("blue", "yellow", "yellow")]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    with Image.open(io.BytesIO(decode(out.getvalue()))) as seen:
        red, _, blue = seen.convert("RGB").getpixel((10, 10))  # type: ignore[misc]
        assert blue > 200 and red < 50


def test_transparency_is_laid_on_white() -> None:
    out = decode(encoded("PNG", (10, 10), (0, 0, 0, 0), mode="RGBA"))
    with Image.open(io.BytesIO(out)) as seen:
        assert min(seen.convert("RGB").getpixel((5, 5))) > 240  # type: ignore[type-var]


def test_headers_are_read_without_decoding() -> None:
    assert dimensions(encoded("PNG", (7, 9))) == ("PNG", 7, 9)
    assert dimensions(encoded("JPEG", (70, 90))) == ("JPEG", 70, 90)
    assert dimensions(encoded("GIF", (17, 19))) == ("GIF", 17, 19)
    assert dimensions(encoded("WEBP", (33, 44))) == ("WEBP", 33, 44)
    lossless = io.BytesIO()
    Image.new("RGB", (300, 200)).save(lossless, "WEBP", lossless=True)
    assert dimensions(lossless.getvalue()) == ("WEBP", 300, 200)


@pytest.mark.parametrize("kind", ["50000x50000", "decompression-bomb"])
def test_a_pixel_bomb_is_refused_in_milliseconds_without_its_pixels(kind: str) -> None:
    if kind == "50000x50000":
        raw = png_declaring(50_000, 50_000, zlib.compress(b"\0" * 64))
    else:
        raw = bomb(12_000)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(PictureError, match="over the"):
            decode(raw)
        took = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Pillow decodes 1-bit grey a byte a pixel: 12,000 x 12,000 is 144 MB, 50,000 x 50,000 2.5 GB.
    assert took < 0.05
    assert peak < 256 * 1024


def test_a_jpeg_declaring_a_huge_frame_is_refused() -> None:
    raw = bytearray(encoded("JPEG", (8, 8)))
    at = raw.index(b"\xff\xc0")
    raw[at + 5 : at + 9] = struct.pack(">HH", 60_000, 60_000)
    with pytest.raises(PictureError, match="60000x60000 pixels, over the"):
        check(bytes(raw))


def test_what_is_no_image_or_too_large_is_refused() -> None:
    with pytest.raises(PictureError, match="not an image"):
        check(b"%PDF-1.7 not a picture")
    with pytest.raises(PictureError, match="MB cap"):
        check(b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_PICTURE_BYTES)
    with pytest.raises(PictureError, match="cannot read"):
        decode(encoded("PNG", (50, 50))[:60])


async def test_a_refused_picture_keeps_its_name_and_size_for_the_model() -> None:
    picture = await Intake().read("plan.png", png_declaring(50_000, 50_000, b""), size=2_400_000)
    assert picture == Picture("plan.png", 2_400_000, problem=picture.problem)
    assert not picture.seen and "over the" in picture.problem
    assert picture.note().startswith("[image attached: plan.png, 2.3 MB; not read: 50000x50000")


async def test_many_people_posting_at_once_stay_under_the_global_bound() -> None:
    intake = Intake()
    raws = [encoded("PNG", (MAX_SIDE + 10 + i, 600), "green") for i in range(8)]

    async def post(person: int, raw: bytes) -> Picture:
        async with intake.person(person) as allowed:
            assert allowed
            return await intake.read(f"p{person}.png", raw)

    seen = await asyncio.gather(*(post(i, raw) for i, raw in enumerate(raws)))
    assert all(p.seen for p in seen)
    assert intake.most == MAX_DECODES and intake.running == 0


async def test_one_person_is_read_within_their_own_bound() -> None:
    intake = Intake(per_person=2)
    async with (
        intake.person(1) as first,
        intake.person(1) as second,
        intake.person(1) as third,
        intake.person(2) as other,
    ):
        assert (first, second, third, other) == (True, True, False, True)
    async with intake.person(1) as again:
        assert again
