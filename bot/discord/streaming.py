"""A reply posted while it is written: posted once the first sentence or so has arrived, edited
as text comes at the pace Discord allows each message, continued in a second message past
2,000 characters, and left exactly as the whole reply is sent (render.reply_chunks)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import discord

from bot import render

log = logging.getLogger(__name__)

# Seconds between two edits of one message: about one a second per message is what Discord
# lets a bot keep up; past its buckets (read from its rate-limit headers) discord.py waits.
EDIT_INTERVAL = 1.0
# The first post waits for a sentence end, or this many characters without one...
FIRST_POST_CHARS = 150
# ...or this many seconds after the first text, with whatever whole words have come: a CPU
# model writing 5 tokens a second has about 40 characters out by then.
FIRST_POST_WAIT = 2.0
_SENTENCE_END = re.compile(r"[.!?…]\s|\n")
_LAST_SPACE = re.compile(r"\s\S*\Z")
_NONE = discord.AllowedMentions.none()


@dataclass(frozen=True, slots=True)
class Pace:
    """How fast a streamed reply is posted and edited; the clock and sleep are parameters."""

    interval: float = EDIT_INTERVAL
    first_wait: float = FIRST_POST_WAIT
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


@dataclass(slots=True)
class StreamCounts:
    """What streamed replies sent since start-up, and what Discord refused of it."""

    posts: int = 0
    edits: int = 0
    # Edits (and posts while streaming) Discord refused: the text went in a new message.
    refused: int = 0


@dataclass(slots=True)
class _Post:
    message: discord.Message
    # What Discord last accepted for it.
    shown: str
    edited_at: float
    # An edit was refused (the message deleted, a 5xx, a 429 past discord.py's retries): it
    # keeps what it shows and is not touched again.
    refused: bool = False


def visible(text: str) -> str:
    """What of the reply so far is shown while it is written: its whole words (the last one
    may still grow), or everything once a word alone passes a message's length."""
    text = text.lstrip()
    cut = _LAST_SPACE.search(text)
    if cut is not None:
        return text[: cut.start()].rstrip()
    return text if len(text) > render.DISCORD_LIMIT else ""


def layout(chunks: Sequence[str], posts: Sequence[tuple[str, bool]]) -> list[str]:
    """What each message says: `chunks` (the text as it is sent whole) laid over the messages
    posted so far, given as (what each shows, whether it can still be edited). One that can no
    longer be edited keeps what it shows, and the rest of its chunk goes in the next message;
    past the posted ones come the messages still to post."""
    out: list[str] = []
    pending = list(chunks)
    for shown, editable in posts:
        if not pending:
            break
        if editable:
            out.append(pending.pop(0))
            continue
        out.append(shown)
        if pending[0].startswith(shown):
            rest = pending[0][len(shown) :].strip()
            if rest:
                pending[0] = rest
            else:
                pending.pop(0)
        # Otherwise what it shows is not that chunk's start: the chunk goes whole in the next.
    return out + pending


class Speaker(Protocol):
    """Whom a reply's parts are said through (bot.discord.faces.FaceSpeaker: a character's
    webhook, or the bot with the character's name): each part at most `limit` characters."""

    limit: int

    async def post(
        self, text: str, *, first: bool, view: discord.ui.View | None = None
    ) -> discord.Message: ...

    async def edit(
        self, message: discord.Message, text: str, *, view: discord.ui.View | None = None
    ) -> None: ...


class AsBot:
    """The bot itself, each part a reply to the message (the Speaker without a face)."""

    limit = render.DISCORD_LIMIT

    def __init__(self, message: discord.Message) -> None:
        self._message = message

    async def post(
        self, text: str, *, first: bool, view: discord.ui.View | None = None
    ) -> discord.Message:
        extra: dict[str, Any] = {} if view is None else {"view": view}
        return await self._message.reply(
            text, mention_author=False, allowed_mentions=_NONE, **extra
        )

    async def edit(
        self, message: discord.Message, text: str, *, view: discord.ui.View | None = None
    ) -> None:
        extra: dict[str, Any] = {} if view is None else {"view": view}
        await message.edit(content=text, allowed_mentions=_NONE, **extra)


class Streamed:
    """One reply to `message`, posted and edited while it is written by a pacing task of its
    own: every post a reply to the message, no post or edit mentioning anyone. `where`: the
    channel "typing…" shows in (the message's, or a thread opened from it)."""

    def __init__(
        self,
        message: discord.Message,
        pace: Pace,
        counts: StreamCounts,
        speaker: Speaker | None = None,
        *,
        where: discord.abc.Messageable | None = None,
    ) -> None:
        self._message = message
        self._where = where or message.channel
        self._speaker: Speaker = speaker or AsBot(message)
        # The buttons the last message carries once the reply is whole (None: none).
        self._view: discord.ui.View | None = None
        self._viewed: discord.Message | None = None
        self._pace = pace
        self._counts = counts
        self._text = ""
        self._final: list[str] | None = None
        self._posts: list[_Post] = []
        self._wake = asyncio.Event()
        self._waited = False
        self._retry_at = 0.0
        self._typing = contextlib.AsyncExitStack()
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Streamed:
        try:
            await self._typing.enter_async_context(self._where.typing())
        except discord.HTTPException as exc:
            # A refused indicator (rate limit, a 5xx) must not cost the reply.
            log.info("typing indicator refused (%s): answering without it", exc.status)
        self._tasks.append(asyncio.create_task(self._run()))
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Reached with the pacing task still running only when the turn failed: it stops here.
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._typing.aclose()

    @property
    def posted(self) -> bool:
        """Whether a part of the reply went out already."""
        return bool(self._posts)

    async def on_text(self, text: str) -> None:
        """Take the reply so far (the engine's on_text): kept, and the pacing task woken."""
        if not self._text and text and not self._posts:
            self._tasks.append(asyncio.create_task(self._first_wait()))
        self._text = text
        self._wake.set()

    async def finish(
        self, chunks: Sequence[str], view: discord.ui.View | None = None
    ) -> list[discord.Message]:
        """Leave the messages saying `chunks` (the whole reply, as render.reply_chunks sends
        it, each part within what the speaker's messages hold), the last carrying `view`, at
        the pace; return the messages that carry the reply."""
        limit = self._speaker.limit
        self._view = view
        self._final = [part for chunk in chunks for part in render.split_message(chunk, limit)]
        self._wake.set()
        await self._tasks[0]
        return [post.message for post in self._posts]

    async def _first_wait(self) -> None:
        await self._pace.sleep(self._pace.first_wait)
        self._waited = True
        self._wake.set()

    def _ready(self) -> bool:
        """Whether the first post can go: a sentence or so has arrived, or time has passed."""
        shown = visible(self._text)
        if not shown:
            return False
        return (
            self._waited
            or len(shown) >= FIRST_POST_CHARS
            or _SENTENCE_END.search(self._text) is not None
        )

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._final is None and not self._posts and not self._ready():
                continue
            if await self._catch_up():
                return

    async def _catch_up(self) -> bool:
        """Post and edit toward the latest text, each message at its own pace; True once the
        messages say the final text."""
        pace = self._pace
        while True:
            final = self._final
            if final is None:
                chunks = render.split_message(
                    render.defang(visible(self._text)), self._speaker.limit
                )
            else:
                chunks = final
            wanted = layout(chunks, [(post.shown, not post.refused) for post in self._posts])
            due: float | None = None
            if len(wanted) > len(self._posts):
                # A new message before any edit: text moving into it never leaves the screen.
                if final is None and pace.clock() < self._retry_at:
                    due = self._retry_at
                elif await self._post(
                    wanted[len(self._posts)],
                    final=final is not None,
                    view=self._view if len(self._posts) == len(wanted) - 1 else None,
                ):
                    continue  # laid out again from what Discord accepted
                else:
                    due = self._retry_at
            refused = False
            last = len(wanted) - 1
            for n, post in enumerate(self._posts[: len(wanted)]):
                text = wanted[n]
                viewing = final is not None and n == last and self._view is not None
                if post.refused or (
                    post.shown == text and (not viewing or self._viewed is post.message)
                ):
                    continue
                at = post.edited_at + pace.interval
                if at > pace.clock():
                    due = at if due is None else min(due, at)
                elif not await self._edit(post, text, view=self._view if viewing else None):
                    refused = True
                    break
            if refused:
                continue
            if final is not None:
                await self._drop_surplus(len(wanted))
            if due is None:
                return final is not None
            await pace.sleep(max(0.0, due - pace.clock()))

    async def _post(self, text: str, *, final: bool, view: discord.ui.View | None = None) -> bool:
        """Post `text` as a reply to the message; True when Discord took it. While streaming a
        refusal is counted and tried again later; in the final state it is raised, as a reply
        sent whole would be."""
        if not self._posts:
            await self._typing.aclose()  # the indicator runs until the first post
        try:
            sent = await self._speaker.post(
                text, first=not self._posts, view=view if final else None
            )
        except discord.HTTPException as exc:
            if final:
                raise
            self._counts.refused += 1
            self._retry_at = self._pace.clock() + self._pace.interval
            log.info("post of the reply to %d refused (%s)", self._message.id, exc.status)
            return False
        self._counts.posts += 1
        self._posts.append(_Post(sent, text, self._pace.clock()))
        if final and view is not None:
            self._viewed = sent
        return True

    async def _edit(self, post: _Post, text: str, *, view: discord.ui.View | None = None) -> bool:
        """Edit a posted message to `text`; False when Discord refused (it is left alone)."""
        try:
            await self._speaker.edit(post.message, text, view=view)
        except discord.HTTPException as exc:
            post.refused = True
            self._counts.refused += 1
            log.info(
                "edit of message %d, a reply to %d, refused (%s): the rest goes in a new message",
                post.message.id,
                self._message.id,
                exc.status,
            )
            return False
        self._counts.edits += 1
        post.shown, post.edited_at = text, self._pace.clock()
        if view is not None:
            self._viewed = post.message
        return True

    async def _drop_surplus(self, keep: int) -> None:
        """Delete the messages past the final text (a reply the cap shortened by a message)."""
        for post in self._posts[keep:]:
            with contextlib.suppress(discord.HTTPException):
                await post.message.delete()
        del self._posts[keep:]
