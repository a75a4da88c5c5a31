"""on_message: decide whether to answer, call the engine once, post the reply safely as it is
written (bot.discord.streaming)."""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from bot import render
from bot.discord import adults, faces, streaming
from bot.discord.cogs import answers
from bot.discord.faces import Faces, Playing, face_of
from bot.discord.places import Places, thread_name
from bot.discord.scenes import Scenes
from memory import (
    Answer,
    AnswerSet,
    EchoError,
    Incoming,
    Overloaded,
    Reply,
    guild_origin,
    manage,
    unexpected,
)
from memory.manage.casting import ChannelMode

if TYPE_CHECKING:
    from bot.discord.app import EchoBot

log = logging.getLogger(__name__)

UNAVAILABLE = (
    "I can't reach my language model right now — press *Try again* once it is back, no need "
    "to write your message again."
)
SLOW_DOWN = (
    "You're writing faster than I can answer: I'm still on your earlier messages, so I'll let "
    "the newest ones pass. Give me a moment."
)


# Quick lines: a person's lines here that come while the answer to the one before has not
# begun to show are answered as one turn, once `[discord] quick_pause` seconds pass with no
# other line (a lone message waits for nothing); at most QUICK_LINES lines, and no line waits
# once QUICK_WAIT seconds have passed since the second.
QUICK_LINES = 6
QUICK_WAIT = 10.0


async def _stopped(task: asyncio.Task[Any]) -> None:
    """Wait until the stopped answer has ended, asking again while it runs: a cancellation
    can be lost in a wait that ends at the same moment it comes (seen about once in ten runs of
    eight people's quick lines at once, the answer then going on to its end behind the line
    that stopped it); asked again, it stops at its next wait."""
    while not task.done():
        await asyncio.wait({task}, timeout=0.05)
        if not task.done():
            task.cancel()


@dataclass(slots=True)
class _Burst:
    """A person's quick lines in one place: those not answered yet, and the answer running."""

    lines: list[Incoming]
    task: asyncio.Task[Any] | None = None
    # Stopped by a quick line after it (its answer is then given with that line's).
    stopped: bool = False
    streamed: streaming.Streamed | None = None
    # When the second line came (None: one line so far): the wait is bounded from there.
    joined_at: float | None = None
    # The model's answer is whole (Engine.turn's on_answer): past this, it is stored and shown.
    answered: bool = False

    def shown(self) -> bool:
        """Whether the running answer is whole or began to show (then it is not stopped)."""
        return self.answered or (self.streamed is not None and self.streamed.posted)

    def done(self) -> None:
        self.answered = True


class Conversation(commands.Cog):
    """Answers in DMs, where it is mentioned or replied to, and every message in the channels
    whose mode is `open` (bot.discord.places); in a `thread` channel, in a thread it opens."""

    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot
        # Open by default ([discord] channels); a mode set per channel wins (Places).
        self.channels = set(bot.runtime.settings.discord.channels)
        self.places = Places(bot, self.channels)
        self._background: set[asyncio.Task[object]] = set()
        self.faces = Faces(bot)
        self.scenes = Scenes(
            bot, bot.runtime, self.faces, chain=bot.runtime.settings.discord.scene_chain
        )
        self.pace = streaming.Pace(interval=bot.runtime.settings.discord.edit_interval)
        self.streams = streaming.StreamCounts()
        # By (author, channel): the quick lines being answered.
        self._bursts: dict[tuple[int, int], _Burst] = {}

    def should_answer(self, message: discord.Message) -> bool:
        """Tell whether this message is for the character."""
        me = self.bot.user
        if me is None or message.author.bot or message.author.id == me.id:
            return False
        if message.guild is None:
            return True
        if self.places.mode_of(message.channel) is ChannelMode.OPEN:
            return True
        if any(user.id == me.id for user in message.mentions):
            return True
        resolved = message.reference.resolved if message.reference else None
        if not isinstance(resolved, discord.Message):
            return False
        ours = self.faces.speaker_of(resolved) is not None or self.faces.made_by_us(resolved)
        return resolved.author.id == me.id or ours

    def text_of(self, message: discord.Message) -> str:
        """The message text without the mention that summoned the character."""
        me = self.bot.user
        text = message.content
        if me is not None:
            text = re.sub(rf"<@!?{me.id}>", "", text)
        return text.strip()

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        text = self.text_of(message)
        character = self.scenes.answerer(message, text, for_us=self.should_answer(message))
        if character is None:
            return
        if message.author.bot:  # a character's, in a scene's chain: without the bot's first line
            text = faces.body(text).strip()
        if not text:
            return  # empty or attachment-only: nothing to say, no LLM call
        in_dms = self.bot.runtime.settings.discord.adult_in_dms
        if character.adult and not adults.allowed(message.channel, in_dms=in_dms):
            if not message.author.bot:  # declined before anything is stored
                await message.reply(adults.DECLINE, mention_author=False, allowed_mentions=_NONE)
            return
        # In a `thread` channel the story is the thread's, whose id is the message's.
        threaded = self.places.opens_thread(message)
        incoming = Incoming(
            source_id=f"discord:{message.id}",
            user_id=message.author.id,
            user_name=message.author.display_name,
            story_id=message.id if threaded else message.channel.id,
            origin=guild_origin(message.guild.id if message.guild else None),
            text=text,
            character=character.key,
        )
        if message.author.bot or threaded:
            # A scene's chain (one character answering another), or a mention that opens a
            # thread (its own story): answered alone, as always.
            await self._respond(message, incoming, character, wait=False, threaded=threaded)
            return
        key = (message.author.id, message.channel.id)
        burst = self._bursts.get(key)
        stopping: asyncio.Task[Any] | None = None
        now = self.pace.clock()
        wait = False
        pause = self.bot.runtime.settings.discord.quick_pause
        if (
            pause > 0
            and burst is not None
            and not burst.shown()
            and len(burst.lines) < QUICK_LINES
            and burst.lines[-1].character == character.key
        ):
            # A quick line: the answer to the lines before stops before a word of it shows,
            # and this turn answers them all.
            stopping = burst.task
            if stopping is not None:
                burst.stopped = True
                stopping.cancel()
            log.info("message %d answered with %d line(s) before it", message.id, len(burst.lines))
            burst.joined_at = burst.joined_at if burst.joined_at is not None else now
            incoming = replace(incoming, joined=tuple(burst.lines))
            line = replace(incoming, joined=())
            # A mention or a reply to the character is answered at once; otherwise the next
            # line may still come, within the bound.
            wait = not self._summoned(message) and now - burst.joined_at < QUICK_WAIT
            burst = _Burst([*burst.lines, line], joined_at=burst.joined_at)
        else:
            burst = _Burst([incoming])
        self._bursts[key] = burst
        # The handler's own task is the one a quick line after this one stops (no task of its
        # own: the turn runs where it always ran).
        burst.task = asyncio.current_task()
        try:
            if stopping is not None:
                await _stopped(stopping)
            await self._respond(message, incoming, character, wait, burst)
        except asyncio.CancelledError:
            if not burst.stopped or burst.task is None:
                raise  # not stopped for a quick line: the bot is closing
            burst.task.uncancel()
        finally:
            if self._bursts.get(key) is burst:
                del self._bursts[key]

    def _summoned(self, message: discord.Message) -> bool:
        """Whether the message names the character or replies to it: answered without a wait."""
        me = self.bot.user
        if me is not None and any(user.id == me.id for user in message.mentions):
            return True
        return message.reference is not None

    async def _respond(
        self,
        message: discord.Message,
        incoming: Incoming,
        character: Playing,
        wait: bool,
        burst: _Burst | None = None,
        *,
        threaded: bool = False,
    ) -> None:
        """Answer the message (after the quick lines' pause when `wait`), as one turn with the
        lines it joined; `threaded`: in a thread opened from it."""
        try:
            # Admitted first (a refusal is decided before any await): a flood shows no
            # "typing…" for the messages turned away, which would spend the bot's rate limit.
            async with self.bot.runtime.engine.admit(incoming) as fresh:
                if not fresh:
                    return  # a replay of a message already answered, or waiting in line
                if wait:
                    # In the person's line: a deletion or an edit of the lines comes after.
                    await self.pace.sleep(self.bot.runtime.settings.discord.quick_pause)
                # Posted before the line is released: this person's next message is answered
                # after this one, on Discord as in the history. The last part carries the
                # buttons for another answer (bot.discord.cogs.answers).
                face = face_of(character, named=self.scenes.several())
                where: discord.abc.Messageable = message.channel
                if threaded:
                    name = thread_name(incoming.text, fallback=character.name)
                    where = await self.places.open_thread(message, name) or message.channel
                    incoming = replace(incoming, story_id=getattr(where, "id", 0))
                sent, reply = await self._answer(message, incoming, face, where, burst)
                if reply is not None and sent:
                    answers.posted(self.bot, incoming.source_id, sent[-1])
                    exchange, ids = reply.exchange_id, [m.id for m in sent]
                    await manage.record_sent(self.bot.runtime.store, exchange, ids)
        except Overloaded as exc:
            # Counted by the engine; the notice itself is rate-limited per person.
            if exc.notify:
                await message.reply(SLOW_DOWN, mention_author=False, allowed_mentions=_NONE)
            return
        # The reflection runs after the reply is out, in the background.
        task = asyncio.create_task(self.bot.after_turns())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _answer(
        self,
        message: discord.Message,
        incoming: Incoming,
        face: faces.Face,
        where: discord.abc.Messageable,
        burst: _Burst | None = None,
    ) -> tuple[list[discord.Message], Reply | None]:
        """Post the reply in `where` (the message's channel, or the thread opened from it) as
        it is written, as `face` (its webhook, or the bot), left as the whole reply is sent
        (the greeting, the cut line) with its buttons; the unavailable line when the turn
        failed; nothing for a message with nothing to answer. Return the messages posted, and
        the reply (None: none)."""
        speaker = await self.faces.speaker(where, message, face)
        streamed_reply = streaming.Streamed(message, self.pace, self.streams, speaker, where=where)
        async with streamed_reply as streamed:
            if burst is not None:
                burst.streamed = streamed
            try:
                reply = await self.bot.runtime.engine.turn(
                    incoming,
                    admitted=True,
                    on_text=streamed.on_text,
                    on_answer=burst.done if burst is not None else None,
                )
            except EchoError as exc:
                log.warning("no reply to message %d: %s", message.id, type(exc).__name__)
            except Exception as exc:
                # A bug: the person still hears back, the traceback goes to the log.
                log.error("turn for message %d raised %s", message.id, unexpected(exc))
            else:
                if reply is None:
                    return await streamed.finish([]), None
                # Each message posted is recorded with the exchange: "Exclude from context" on
                # any of them finds the stored reply, a webhook's too (it cannot be a reply).
                first = Answer(0, reply.text, reply.recall.turn_id, cut=reply.cut)
                view = answers.reply_view(
                    AnswerSet(reply.exchange_id, (first,), 0, incoming.user_id)
                )
                return await streamed.finish(render.reply_chunks(reply), view), reply
        # What was posted of a failed turn stays; the pacing task stopped with the block. The
        # line's button answers the message once the server is back (no need to type it again).
        view = answers.retry_view(incoming.source_id)
        return [await speaker.post(UNAVAILABLE, first=not streamed.posted, view=view)], None


_NONE = discord.AllowedMentions.none()


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(Conversation(bot))
