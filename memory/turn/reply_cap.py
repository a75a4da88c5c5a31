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
    space = kept.rfind(" ", int(limit * 0.9))
    if space > 0:
        kept = kept[:space]
    kept = kept.rstrip()
    return kept, len(text) - len(kept)
