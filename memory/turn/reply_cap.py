"""The bound on the length of one reply, and the cut that enforces it."""

from __future__ import annotations

# Characters of a reply: two Discord messages. A small model that loops can otherwise fill a
# channel with one answer (seen: a 135M model repeating a line until max_tokens).
MAX_REPLY_CHARS = 4_000


def cap_reply(text: str, limit: int) -> tuple[str, int]:
    """Cut a reply to at most `limit` characters, at a space when one is near the end; return
    the kept text and how many characters were cut."""
    if len(text) <= limit:
        return text, 0
    kept = text[:limit]
    space = kept.rfind(" ", _sure(limit))
    if space > 0:
        kept = kept[:space]
    kept = kept.rstrip()
    return kept, len(text) - len(kept)


def _sure(limit: int) -> int:
    # Where the cut may fall: at a space from here to the limit, or at the limit.
    return int(limit * 0.9)


def sure_prefix(text: str, limit: int) -> str:
    """The part of a reply still arriving (stripped as the reply is) that the cut can no
    longer take back: all of it up to 90% of `limit`; past that, those first 90%, whatever
    follows. Each is a prefix of the next one and of the reply `cap_reply` keeps at the end."""
    text = text.lstrip()
    if len(text) > _sure(limit):
        text = text[: _sure(limit)]
    return text.rstrip()
