"""A character card inside a PNG: its JSON, read from the `ccv3` (V3, preferred) or `chara`
(V2) text chunk, base64-encoded.

The image is never decoded: only its header's declared size is checked, and each chunk read is
checked against its CRC. Apart from memory.character.cards because this is about the container
(bytes,
chunks, compression), while memory.character.cards reads the card's JSON whatever file carried it.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterator

from memory.errors import CardError

# 4096x4096: twice the side of the largest portraits cards carry; decoded as RGBA it would be
# 64 MB at most (the 88-megapixel PNG Pillow let through took 367 MB).
MAX_IMAGE_PIXELS = 4096 * 4096
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CARD_CHUNKS = ("ccv3", "chara")
_TEXT_CHUNKS = frozenset({b"tEXt", b"zTXt", b"iTXt"})


def utf8(raw: bytes) -> tuple[str, bool]:
    """The text of `raw`, invalid UTF-8 replaced by U+FFFD; and whether any was."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), True


def png_payload(raw: bytes, *, max_bytes: int) -> tuple[bytes, str]:
    """The card JSON inside a PNG's text chunks: `ccv3` first, then `chara`; no text chunk
    inflates past `max_bytes`."""
    chunks = _png_text(raw, max_bytes)
    for keyword in _CARD_CHUNKS:
        if keyword in chunks:
            try:
                decoded = base64.b64decode(chunks[keyword], validate=False)
            except ValueError:  # binascii.Error, or a character outside ASCII
                raise CardError(f"the PNG's {keyword!r} chunk is not base64 JSON text") from None
            return decoded, f"PNG chunk {keyword!r}"
    raise CardError("a PNG without a character card (no 'chara' or 'ccv3' text chunk)")


def _png_text(raw: bytes, max_bytes: int) -> dict[str, str]:
    """The card's text chunks (tEXt, zTXt, iTXt), after checking the image's declared size;
    the image data itself is never decoded."""
    found: dict[str, str] = {}
    for index, (kind, data) in enumerate(_png_chunks(raw)):
        if index == 0:
            _check_header(kind, data)
        elif kind in _TEXT_CHUNKS:
            keyword, _, body = data.partition(b"\0")
            name = keyword.decode("latin-1")
            if name in _CARD_CHUNKS and name not in found:
                found[name] = _chunk_text(kind, body, max_bytes)
    return found


def _check_header(kind: bytes, data: bytes) -> None:
    """Refuse a first chunk that is no image header, or declares an image over the cap."""
    if kind != b"IHDR" or len(data) != 13:
        raise CardError("a damaged PNG (no image header)")
    width, height = struct.unpack(">II", data[:8])
    if width * height > MAX_IMAGE_PIXELS:
        raise CardError(
            f"the PNG's image is {width}x{height}, over the {MAX_IMAGE_PIXELS:,}-pixel "
            "cap for a card portrait"
        )


def _png_chunks(raw: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Each chunk's type and data, in order, until IEND (checksums checked on those read)."""
    at = len(PNG_SIGNATURE)
    while at + 8 <= len(raw):
        length, kind = struct.unpack(">I4s", raw[at : at + 8])
        end = at + 8 + length + 4
        if end > len(raw):
            raise CardError("a damaged PNG (cut off in its middle)")
        data = raw[at + 8 : end - 4]
        if (kind == b"IHDR" or kind in _TEXT_CHUNKS) and zlib.crc32(kind + data) != int.from_bytes(
            raw[end - 4 : end], "big"
        ):
            raise CardError(f"a damaged PNG (the {kind.decode('latin-1')} chunk fails its CRC)")
        yield kind, data
        if kind == b"IEND":
            return
        at = end
    if at == len(PNG_SIGNATURE):
        raise CardError("a damaged PNG (nothing after its signature)")


def _chunk_text(kind: bytes, body: bytes, max_bytes: int) -> str:
    """The text of a tEXt (Latin-1), zTXt (compressed Latin-1) or iTXt (UTF-8) chunk's body."""
    if kind == b"tEXt":
        return body.decode("latin-1")
    if kind == b"zTXt":
        return _inflate(body[1:], max_bytes).decode("latin-1")
    # iTXt: compression flag, method, language tag NUL, translated keyword NUL, text.
    flag, rest = body[:1], body[2:]
    text = rest.split(b"\0", 2)[-1] if rest.count(b"\0") >= 2 else b""
    return utf8(_inflate(text, max_bytes) if flag == b"\1" else text)[0]


def _inflate(data: bytes, max_bytes: int) -> bytes:
    """Decompress a text chunk, refusing one that inflates past `max_bytes` (the card cap)."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, max_bytes)
    except zlib.error:
        raise CardError("a damaged PNG (a compressed text chunk is corrupt)") from None
    if inflater.unconsumed_tail:
        raise CardError(
            f"a PNG text chunk inflates past the {max_bytes:,}-byte cap for a character card"
        )
    return out


# What Discord takes as an avatar upload: it refused past 8 MB for years (10 MB now); the
# portrait alone (the card's text taken out) is far under either for the portraits cards carry.
MAX_AVATAR_BYTES = 8 * 1024 * 1024


def portrait(raw: bytes) -> bytes:
    """A PNG card's picture without the card: the same image, its text chunks (the card's JSON,
    which can be megabytes) left out; CardError when it is no PNG or over the caps."""
    if not raw.startswith(PNG_SIGNATURE):
        raise CardError("the card's picture is not a PNG")
    kept = [PNG_SIGNATURE]
    at = len(PNG_SIGNATURE)
    for index, (kind, data) in enumerate(_png_chunks(raw)):
        if index == 0:
            _check_header(kind, data)
        if kind not in _TEXT_CHUNKS:
            kept.append(raw[at : at + 12 + len(data)])
        at += 12 + len(data)
    picture = b"".join(kept)
    if len(picture) > MAX_AVATAR_BYTES:
        raise CardError(
            f"the card's picture is {len(picture):,} bytes, over the {MAX_AVATAR_BYTES:,}-byte "
            "cap for an avatar"
        )
    return picture
