"""A picture someone posted with a message: read from its bytes within caps, decoded with
Pillow and written again small, for a chat model that sees images. Never stored: only what the
reflection writes of it in words.

The caps come before any decoding. The file's size is bounded by its reader (`MAX_PICTURE_BYTES`);
the image's width and height are read from its header here, without Pillow (as the card reader
reads a PNG's), and an image over the pixel caps is refused before a pixel is allocated: a
50,000 x 50,000 PNG, or a "decompression bomb" of a few kilobytes that would inflate into
gigabytes, costs a header's read. Pillow then decodes only the formats named (PNG, JPEG, WebP,
GIF's first frame), a JPEG at a reduced scale (its "draft" mode), and the result is written
again as a JPEG at most `MAX_SIDE` pixels on its longest side.

`Intake` holds the bound on decodes at once (one thread each) for every person together, and on
pictures being read for one person at once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.errors import PictureError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

# Discord's upload limit for a server without boosts and a person without Nitro (10 MiB since
# 2024); a larger attachment is refused by its declared size before it is fetched.
MAX_PICTURE_BYTES = 10 * 1024 * 1024
# Pictures a message may bring to the model: vision models read each as hundreds of tokens
# (llava: 576 a picture, Qwen2.5-VL about 1,000 at 1024 px), so a few fill a small context.
MAX_PICTURES = 4
# Decoded whole (PNG, WebP, GIF): 4096 x 4096 is 64 MB as RGBA, the card portrait's cap.
MAX_PIXELS = 4096 * 4096
# A JPEG is decoded at 1/2 to 1/8 of its size (draft mode): a 36-megapixel photo (a full-frame
# camera's) decodes at a quarter of its side, 2.3 megapixels.
MAX_JPEG_PIXELS = 36_000_000
# The longest side sent: what vision models take in (llava tiles 336 or 672 px; Qwen2.5-VL and
# Gemma 3 resize to about 900) without a photo's details shrinking into noise.
MAX_SIDE = 1024
JPEG_QUALITY = 85
# Decodes at once, every person together: each holds up to 64 MB for a moment.
MAX_DECODES = 2
# Messages whose pictures one person may have being read at once (their turns wait in line
# after it, as Admission's queue bounds them).
PER_PERSON = 2

_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_NO_LENGTH = frozenset(range(0xD0, 0xDA)) | {0x01}


@dataclass(frozen=True, slots=True)
class Picture:
    """A picture as the model is shown it: its file name and size as posted (what a model that
    cannot see is told), and the image written again as a bounded JPEG (`data`, empty when it
    could not be read: `problem` says why, in words for the model and the person)."""

    name: str
    size: int
    data: bytes = b""
    problem: str = ""

    @property
    def seen(self) -> bool:
        """Whether the picture can be shown to a model (read and decoded)."""
        return bool(self.data)

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def note(self) -> str:
        """The line the stored message keeps of it: its file name and size (and why it could not
        be read), never its pixels."""
        why = f"; not read: {self.problem}" if self.problem else ""
        return f"[image attached: {self.name or 'image'}, {_size(self.size)}{why}]"


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{max(1, round(size / 1024))} KB"


def dimensions(raw: bytes) -> tuple[str, int, int]:
    """The format (Pillow's name) and the width and height an image's header declares, read
    without decoding it; PictureError for a file that is none of PNG, JPEG, WebP or GIF."""
    if raw.startswith(_PNG):
        if len(raw) < 24 or raw[12:16] != b"IHDR":
            raise PictureError("a damaged PNG (no image header)")
        width, height = struct.unpack(">II", raw[16:24])
        return "PNG", width, height
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        width, height = struct.unpack("<HH", raw[6:10])
        return "GIF", width, height
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return ("WEBP", *_webp_size(raw))
    if raw[:2] == b"\xff\xd8":
        return ("JPEG", *_jpeg_size(raw))
    raise PictureError("not an image this reads (PNG, JPEG, WebP or GIF)")


def _webp_size(raw: bytes) -> tuple[int, int]:
    kind = raw[12:16]
    if kind == b"VP8X" and len(raw) >= 30:
        width = int.from_bytes(raw[24:27], "little") + 1
        height = int.from_bytes(raw[27:30], "little") + 1
        return width, height
    if kind == b"VP8L" and len(raw) >= 25 and raw[20] == 0x2F:
        bits = int.from_bytes(raw[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8 " and len(raw) >= 30 and raw[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", raw[26:30])
        return width & 0x3FFF, height & 0x3FFF
    raise PictureError("a damaged WebP (no image header)")


def _jpeg_size(raw: bytes) -> tuple[int, int]:
    """The size in a JPEG's first start-of-frame segment, walking the segments before it."""
    at = 2
    while at + 4 <= len(raw):
        if raw[at] != 0xFF:
            raise PictureError("a damaged JPEG (no marker where one was due)")
        marker = raw[at + 1]
        if marker == 0xFF:  # fill bytes before a marker
            at += 1
            continue
        if marker in _JPEG_NO_LENGTH:
            at += 2
            continue
        (length,) = struct.unpack(">H", raw[at + 2 : at + 4])
        if marker in _JPEG_SOF:
            if at + 9 > len(raw):
                break
            height, width = struct.unpack(">HH", raw[at + 5 : at + 9])
            return width, height
        at += 2 + length
    raise PictureError("a damaged JPEG (no frame header)")


def check(raw: bytes) -> str:
    """The image's format, once its declared size is within the caps; PictureError otherwise.
    Nothing is decoded: this reads a few bytes of its header."""
    if len(raw) > MAX_PICTURE_BYTES:
        raise PictureError(f"over the {MAX_PICTURE_BYTES // (1024 * 1024)} MB cap")
    kind, width, height = dimensions(raw)
    cap = MAX_JPEG_PIXELS if kind == "JPEG" else MAX_PIXELS
    if width <= 0 or height <= 0:
        raise PictureError("an image of no size")
    if width * height > cap:
        raise PictureError(f"{width}x{height} pixels, over the {cap:,}-pixel cap")
    return kind


def decode(raw: bytes) -> bytes:
    """The image written again as a JPEG at most MAX_SIDE pixels a side (a GIF's first frame,
    transparency on white); PictureError for one over the caps or that Pillow cannot read."""
    kind = check(raw)
    # Imported here: Pillow and its plugins load in the first decode's thread, not at start-up.
    from PIL import Image

    try:
        with Image.open(io.BytesIO(raw), formats=[kind]) as image:
            if image.width * image.height > (MAX_JPEG_PIXELS if kind == "JPEG" else MAX_PIXELS):
                raise PictureError("the image is larger than its header said")
            image.draft("RGB", (MAX_SIDE, MAX_SIDE))  # a JPEG: decoded at a reduced scale
            image.thumbnail((MAX_SIDE, MAX_SIDE))
            flat = _on_white(image)
            out = io.BytesIO()
            flat.save(out, "JPEG", quality=JPEG_QUALITY)
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, Image.DecompressionBombError):
        raise PictureError("an image Pillow cannot read (damaged or cut short)") from None
    return out.getvalue()


def _on_white(image: PILImage) -> PILImage:
    from PIL import Image

    if image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        white = Image.new("RGB", rgba.size, (255, 255, 255))
        white.paste(rgba, mask=rgba.getchannel("A"))
        return white
    return image.convert("RGB")


class Intake:
    """Reads posted pictures within the bounds: MAX_DECODES decodes at once for everyone
    (each in a thread, the event loop free), `per_person` messages' pictures at once for one
    person (the next are refused, said to the model as not read)."""

    # The caps a front end's settings stay within.
    MAX_BYTES = MAX_PICTURE_BYTES
    PER_MESSAGE = MAX_PICTURES

    def __init__(self, *, decodes: int = MAX_DECODES, per_person: int = PER_PERSON) -> None:
        self._decodes = asyncio.Semaphore(decodes)
        self.per_person = per_person
        self._reading: dict[int, int] = {}
        # Decodes running and the most seen at once (for tests and /stats).
        self.running = 0
        self.most = 0

    @contextlib.asynccontextmanager
    async def person(self, user_id: int) -> AsyncIterator[bool]:
        """Hold one of this person's places for reading a message's pictures; yield False
        when they have `per_person` messages' pictures being read already."""
        held = self._reading.get(user_id, 0)
        if held >= self.per_person:
            yield False
            return
        self._reading[user_id] = held + 1
        try:
            yield True
        finally:
            left = self._reading[user_id] - 1
            if left:
                self._reading[user_id] = left
            else:
                del self._reading[user_id]

    async def read(self, name: str, raw: bytes, *, size: int | None = None) -> Picture:
        """The picture of these bytes (`size`: as posted, when known), decoded in a thread
        within the bound; one that cannot be read has its problem and no data."""
        posted = len(raw) if size is None else size
        try:
            check(raw)  # at once, in the loop: a refused bomb never waits for a thread
            async with self._decodes:
                self.running += 1
                self.most = max(self.most, self.running)
                try:
                    data = await asyncio.to_thread(decode, raw)
                finally:
                    self.running -= 1
        except PictureError as exc:
            return Picture(name, posted, problem=str(exc))
        return Picture(name, posted, data)


# Bytes of pictures kept for the reflections still to come, every person together: a few dozen
# pictures of a busy evening (a re-encoded photo is 100-300 KB); past it the oldest go, and
# their reflection is told only that a picture was there.
SHELF_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Shelved:
    user_id: int
    origin: str
    pictures: tuple[Picture, ...]


class Shelf:
    """The pictures of the exchanges not reflected yet, in memory only (never the database):
    the reflection is shown them, then they are gone. Bounded by `limit` bytes, the oldest
    dropped first; an erasure drops those it covers."""

    def __init__(self, limit: int = SHELF_BYTES) -> None:
        self.limit = limit
        self._kept: dict[str, _Shelved] = {}
        self._bytes = 0

    def keep(
        self, exchange_id: str, user_id: int, origin: str, pictures: tuple[Picture, ...]
    ) -> None:
        """Keep an exchange's pictures for its reflection."""
        shown = tuple(p for p in pictures if p.seen)
        if not shown or not exchange_id:
            return
        self.take(exchange_id)
        self._kept[exchange_id] = _Shelved(user_id, origin, shown)
        self._bytes += sum(len(p.data) for p in shown)
        while self._bytes > self.limit and self._kept:
            self.take(next(iter(self._kept)))

    def get(self, exchange_id: str) -> tuple[Picture, ...]:
        """The exchange's pictures, still kept (none: never kept, or dropped)."""
        shelved = self._kept.get(exchange_id)
        return shelved.pictures if shelved is not None else ()

    def take(self, exchange_id: str) -> tuple[Picture, ...]:
        """The exchange's pictures, no longer kept (none: never kept, or dropped)."""
        shelved = self._kept.pop(exchange_id, None)
        if shelved is None:
            return ()
        self._bytes -= sum(len(p.data) for p in shelved.pictures)
        return shelved.pictures

    def drop(self, *, user_id: int | None = None, origin: str | None = None) -> int:
        """Drop the pictures of a person's exchanges (everywhere, or in one origin)."""
        gone = [
            key
            for key, s in self._kept.items()
            if s.user_id == user_id and (origin is None or s.origin == origin)
        ]
        for key in gone:
            self.take(key)
        return len(gone)

    @property
    def held(self) -> int:
        """Bytes held."""
        return self._bytes
