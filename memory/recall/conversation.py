"""The recent conversation as a second, weaker query: what the person said just before.

People refer back to what they said a moment ago: "I'm nervous about my race" two messages after
"did 18 km this morning". The message alone shares neither a rare word nor much meaning with
"Is training for a half marathon in April" (multilingual-e5-small ranks it 3,015th of 10,000 for
the message alone, bench/results/recall-notes.md); the message read after the person's previous
messages does. That text (earlier messages, then the message) is embedded with the message, in the
same request, and scored against the same matrix. It is the weaker query: only a memory it points
at far above the rest (CONVERSATION_SD) may take a place, one of recall's (selection.py), shown in
/why as recalled by what the person said just before. Only the person's own messages in this
story are read, never someone else's nor the character's replies (which repeat the memories
already served), and never a message a person excluded from the context.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from memory.backends.chat import Embedder
from memory.errors import EchoError
from memory.recall.semantic import MAX_QUERY_CHARS, TURN_EMBEDDING_TIMEOUT
from memory.store.tables.history import HistoryMessage
from memory.vectors.prefixes import prefixes_of

log = logging.getLogger(__name__)

# The person's own messages before this one that make the conversation query: the bench's
# conversations hold 2 or 3 (bench/corpora/conversations.py).
CONVERSATION_MESSAGES = 3
# Read among the story's last messages: in a busy channel other people's turns come between, and
# a person's message older than this is no longer the conversation this message continues.
CONVERSATION_WINDOW = 12
# A memory the conversation query recalls scores at least this many standard deviations above the
# mean of that query's scores. Measured with 1 place on the bench's conversations (replaying
# select() on its scores, bench/results/recall-changes.md): at 3.0 an unrelated conversation
# changed no row; 2 or 3 places, or the earlier messages alone as the query, cost MiniLM up to 3
# points at 234 memories when the conversation was unrelated.
CONVERSATION_SD = 3.0


def recent_messages(window: Sequence[HistoryMessage], user_id: int) -> tuple[str, ...]:
    """Return the person's last messages in `window` (the story's last CONVERSATION_WINDOW
    messages nobody excluded, oldest first: StorySnapshot.conversation), oldest first."""
    own = [m.content for m in window if m.role == "user" and m.user_id == user_id]
    return tuple(own[-CONVERSATION_MESSAGES:])


def query_text(earlier: Sequence[str], text: str) -> str:
    """Return the conversation query: the earlier messages, then the message, joined; the end
    kept when too long. Empty without earlier messages (the message's own query is enough)."""
    said = [m.strip() for m in earlier if m.strip()]
    if not said:
        return ""
    return "\n".join([*said, text.strip()])[-MAX_QUERY_CHARS:].strip()


async def embed_with_conversation(
    embedder: Embedder,
    text: str,
    conversation: str,
    *,
    timeout: float = TURN_EMBEDDING_TIMEOUT,
) -> tuple[list[float], list[float] | None] | None:
    """Embed the message and the conversation in one request, after the model's query prefix;
    None on failure (a degraded turn, as for the message alone)."""
    query = text.strip()[:MAX_QUERY_CHARS]
    if not query:
        return None
    prefix = prefixes_of(embedder).query
    texts = [prefix + query] + ([prefix + conversation] if conversation else [])
    try:
        # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result when the
        # embedding ends as the turn is cancelled, and the cancellation is lost (a stopped
        # quick line's answer then runs to its end).
        async with asyncio.timeout(timeout):
            embedded = await embedder.embed(texts, deadline=timeout)
    except TimeoutError:
        log.warning("turn embedding timed out after %.1f s: degraded turn", timeout)
        return None
    except EchoError as exc:
        log.warning("turn embedding failed (%s): degraded turn", type(exc).__name__)
        return None
    if len(embedded) != len(texts):
        log.warning("turn embedding answered %d vectors for %d texts", len(embedded), len(texts))
        return None
    return embedded[0], embedded[1] if conversation else None
