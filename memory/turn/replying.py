"""From a message to its reply: the one preparation step (the story read once, recall, the
prompt's plan) that a turn, another answer and a preview share, and the chat backend's reply,
shown as it streams, cleaned and cut."""

from __future__ import annotations

import logging
from collections.abc import Callable

from memory.backends.chat import ChatBackend, stream_of
from memory.context.budget import ContextPlan
from memory.context.builder import ContextBuilder
from memory.context.story_view import read_story
from memory.context.tokens import counted_messages
from memory.errors import BackendError, BackendResponseError, unexpected
from memory.recall.recaller import Recaller
from memory.text import well_formed
from memory.turn.reply_cap import cap_reply, sure_prefix
from memory.turn.values import MemoryConfig, OnText, Recall

log = logging.getLogger(__name__)


async def prepare(
    recaller: Recaller,
    context: ContextBuilder,
    *,
    user_id: int,
    user_name: str,
    story_id: int,
    origin: str,
    text: str,
    before_id: int | None,
    record: bool = True,
    exchange_id: str = "",
    without: frozenset[int] = frozenset(),
    query: str | None = None,
) -> tuple[Recall, ContextPlan]:
    """Recall for a message and plan its prompt with the character's `context`. The story is
    read once, for the conversation query and the prompt: the history before the message's own
    row `before_id` (None: all stored so far). `record`, `exchange_id` and `without` go to the
    recall (Recaller.recall); `query` is what is recalled for (None: `text`; quick lines
    answered together: all of them)."""
    story = await read_story(
        recaller.store,
        story_id,
        before_id=before_id,
        history_messages=context.config.history_messages,
    )
    recalled = await recaller.recall(
        user_id=user_id,
        story_id=story_id,
        origin=origin,
        text=text if query is None else query,
        record=record,
        earlier=recaller.earlier(user_id, story),
        exchange_id=exchange_id,
        without=without,
    )
    plan = await context.plan(
        user_name=user_name,
        origin=origin,
        text=text,
        selected=recalled.selected,
        story=story,
        window=recalled.window,
    )
    return recalled, plan


def _whole_pairs(text: str) -> str:
    """`text` without a last high surrogate, whose low half may come in the next piece."""
    return text[:-1] if text and "\ud800" <= text[-1] <= "\udbff" else text


class Replier:
    """Asks the chat backend for replies; counts those whose stream broke midway. `chat` and
    `config` are read at each reply: the engine's, which may be replaced while it runs."""

    def __init__(
        self, *, chat: Callable[[], ChatBackend | None], config: Callable[[], MemoryConfig]
    ) -> None:
        self.chat = chat
        self.config = config
        # Replies whose stream broke midway since start-up (kept as far as they had come).
        self.interrupted = 0

    async def reply(
        self,
        source_id: str,
        plan: ContextPlan,
        story_id: int,
        context: ContextBuilder,
        on_text: OnText | None,
    ) -> tuple[str, int, bool]:
        """Ask the chat backend for the reply to a planned prompt (the character's `context`),
        its pieces shown through `on_text` as they stream; return it cleaned and cut, how many
        characters were cut, and whether the stream broke midway (then what had arrived)."""
        content, prompt_tokens, interrupted = await self._streamed(
            source_id, plan, context, on_text
        )
        await context.after_reply(story_id, plan, prompt_tokens)
        answer, cut = cap_reply(well_formed(content).strip(), self.config().max_reply_chars)
        if not answer:
            raise BackendResponseError("the chat backend returned an empty reply")
        return answer, cut, interrupted

    async def _streamed(
        self, source_id: str, plan: ContextPlan, context: ContextBuilder, on_text: OnText | None
    ) -> tuple[str, int | None, bool]:
        """The model's answer (its pieces as they stream, shown through `on_text`), the prompt
        tokens it reported, and whether the stream broke midway (then what had arrived)."""
        chat, config = self.chat(), self.config()
        assert chat is not None
        limit = config.max_reply_chars
        pieces: list[str] = []
        received = shown = ""
        stream = stream_of(
            chat,
            plan.messages,
            deadline=config.chat_deadline,
            max_tokens=plan.budget.response_tokens,
        )
        async with stream:
            try:
                async for piece in stream:
                    pieces.append(piece)
                    # Past the cut nothing more is shown: the text is no longer joined. A
                    # reply answered in one block is not shown before it is returned.
                    if on_text is None or not stream.streamed or len(received) > limit:
                        continue
                    received += piece
                    text = sure_prefix(well_formed(_whole_pairs(received)), limit)
                    if text and text != shown:
                        shown = text
                        on_text = await _shown(source_id, on_text, text)
            except BackendError as exc:
                content = "".join(pieces)
                if not well_formed(content).strip():
                    raise
                self.interrupted += 1
                log.warning(
                    "reply to %s interrupted after %d characters: %s", source_id, len(content), exc
                )
                return content, None, True
        if stream.prompt_tokens is None and stream.counted is not None:
            # The server counted the texts (its stream reported no count): calibrates as well.
            return "".join(pieces), counted_messages(plan.messages, stream.counted), False
        return "".join(pieces), stream.prompt_tokens, False


async def _shown(source_id: str, on_text: OnText, text: str) -> OnText | None:
    """Give the front end the text so far; a bug there stops the showing, not the turn."""
    try:
        await on_text(text)
    except Exception as exc:
        log.error("reply to %s no longer shown as it streams: %s", source_id, unexpected(exc))
        return None
    return on_text
