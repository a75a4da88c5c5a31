"""Edits and deletions on Discord, followed. A person's message edited: the history and the
memory follow the new wording (memory.manage.forgetting.follow_edit), and with `[discord]
answer_edits` the character answers it again. Deleted, by its author or a moderator (one by one
or in bulk): forgotten as "Forget this message" forgets it (`[privacy] follow_deletions`). A
reply of the character deleted: it leaves the history.

Raw events, because the message is rarely still in discord.py's cache. They need no intent
beyond the bot's: MESSAGE_UPDATE, MESSAGE_DELETE and MESSAGE_DELETE_BULK come with the guild
messages and direct messages intents of Intents.default(), and an edit's content with the
message content intent on_message already needs.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import discord
from discord.ext import commands

from bot import render
from bot.discord.faces import Face, face_of
from memory import EchoError, manage
from memory.manage import casting, forgetting

if TYPE_CHECKING:
    from discord.abc import MessageableChannel

    from bot.discord.app import EchoBot
    from bot.discord.cogs.conversation import Conversation

log = logging.getLogger(__name__)


@dataclass
class _Edit:
    """An edit waiting to be followed: its message, its latest wording, and whether it was."""

    message: discord.Message
    text: str
    done: asyncio.Future[None]


class Following(commands.Cog):
    """Follows edits and deletions of the messages Écho stored."""

    def __init__(self, bot: EchoBot) -> None:
        self.bot = bot
        # Per author, the edits waiting, in the order they came, one per message (its latest
        # wording: a message edited 100 times at once costs one edit followed and one waiting).
        # Followed one at a time per author, by the first of their edit events still running;
        # nothing is let pass (following an edit is erasure), and nothing is kept here past the
        # gateway events that brought it, each of which waits for its own.
        self._edits: dict[int, dict[int, _Edit]] = {}

    @property
    def edits_waiting(self) -> int:
        """Edits received and not yet followed (one per message)."""
        return sum(len(edits) for edits in self._edits.values())

    @commands.Cog.listener()
    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        # Discord may send only the fields that changed, whatever discord.py's types say.
        content = cast("dict[str, Any]", payload.data).get("content")
        if not isinstance(content, str):
            return  # an embed unfurled, a pin, a flag: not an edit of the text
        message = payload.message
        me = self.bot.user
        if me is None or message.author.bot or message.author.id == me.id:
            return
        before = payload.cached_message
        if before is not None and before.content == content:
            return  # unchanged: no read at all
        text = _without_mention(content, me.id)
        author = message.author.id
        edits = self._edits.get(author)
        if edits is not None:  # another event of theirs follows their edits: it takes this one
            waiting = edits.get(payload.message_id)
            if waiting is not None:
                waiting.text = text
            else:
                waiting = edits[payload.message_id] = _Edit(
                    message, text, asyncio.get_running_loop().create_future()
                )
            await asyncio.shield(waiting.done)
            return
        edits = self._edits[author] = {
            payload.message_id: _Edit(message, text, asyncio.get_running_loop().create_future())
        }
        try:
            while edits:
                message_id = next(iter(edits))
                edit = edits.pop(message_id)
                try:
                    await self._follow_edit(edit.message, edit.text)
                except Exception as exc:  # one edit's failure must not stop the others
                    log.warning(
                        "edit of message %d not followed: %s", message_id, type(exc).__name__
                    )
                edit.done.set_result(None)
        finally:
            del self._edits[author]
            for left in edits.values():  # cancelled (the bot stops): their events end too
                left.done.cancel()

    async def _follow_edit(self, message: discord.Message, text: str) -> None:
        runtime = self.bot.runtime
        engine = runtime.engine
        source_id = f"discord:{message.id}"
        if not engine.claimed(source_id):
            followed = await forgetting.follow_edit(
                runtime.store, source_id, text, now=engine.clock()
            )
        else:
            # Its turn may still run here: the edit waits in the person's line behind the turns
            # already in it, so it finds the exchange written. It takes no turn's place and is
            # never refused: a full line would have let 26 of 30 edits at once pass.
            async with engine.settled(message.author.id, _answered_in(message).id):
                followed = await forgetting.follow_edit(
                    runtime.store, source_id, text, now=engine.clock()
                )
        if followed is not None and followed.requeued and runtime.settings.discord.answer_edits:
            await self._answer_again(message, source_id)

    async def _answer_again(self, message: discord.Message, exchange_id: str) -> None:
        """Answer the edited message again: the reply's posts are edited to the new answer
        (the greeting's stay), a longer one continues in new posts, a shorter one deletes the
        posts it no longer needs; in the thread the message opened, when it opened one."""
        store = self.bot.runtime.store
        try:
            reply = await self.bot.runtime.engine.regenerate(exchange_id)
        except EchoError as exc:
            log.info("edited message %d not answered again: %s", message.id, type(exc).__name__)
            return
        chunks = render.reply_chunks(reply)
        greeting = await manage.greeting_of(store, exchange_id)
        skip = len(render.split_message(render.defang(greeting))) if greeting else 0
        posts = (await manage.posts_of(store, exchange_id))[skip:]
        face = await self._face_of(exchange_id)
        faces = cast("Conversation", self.bot.get_cog("Conversation")).faces
        where = _answered_in(message)
        more, surplus = await faces.edit_posts(where, message, posts, chunks, face)
        await manage.record_sent(store, exchange_id, [m.id for m in more])
        if surplus:  # forgotten first: their deletion is not a moderator's
            await manage.forget_posts(store, surplus)
            await faces.delete_posts(where, surplus, face)

    async def _face_of(self, exchange_id: str) -> Face:
        """Who answered an exchange: the character whose story it is stored in."""
        runtime = self.bot.runtime
        held = await forgetting.resolve(runtime.store, exchange_id)
        key = (await casting.story_owner(runtime.store, held.story_id))[1] if held else None
        character = runtime.characters.playing(key or runtime.characters.home)
        return face_of(character, named=len(runtime.characters) > 1)

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        await self._deleted([payload.message_id], payload.channel_id, payload.cached_message)

    @commands.Cog.listener()
    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        cached = {m.id: m for m in payload.cached_messages}
        for message_id in sorted(payload.message_ids):
            if message_id in cached:  # the cache knows its author: a racing turn is found
                await self._deleted([message_id], payload.channel_id, cached[message_id])
        rest = sorted(payload.message_ids - set(cached))
        if rest:
            await self._deleted(rest, payload.channel_id, None)

    async def _deleted(
        self, message_ids: list[int], channel_id: int, cached: discord.Message | None
    ) -> None:
        runtime = self.bot.runtime
        if not runtime.settings.privacy.follow_deletions:
            return
        engine = runtime.engine
        sources = [f"discord:{i}" for i in message_ids]
        racing = [s for s in sources if engine.claimed(s)]
        for source_id in racing:
            # Its turn may be under way: the exchange is erased and remembered as erased,
            # stored or not yet, so the turn keeps nothing of it nor of its reply.
            author = cached.author.id if cached is not None else 0
            await forgetting.forget_exchange(
                runtime.store, source_id, user_id=author, story_id=channel_id, engine=engine
            )
        rest = [s for s in sources if s not in racing]
        await forgetting.forget_deleted(runtime.store, rest, message_ids, engine=engine)


def _answered_in(message: discord.Message) -> MessageableChannel:
    """Where the message was answered: the thread opened from it (in a `thread` channel; the
    thread's id is the message's, and its story), else its channel."""
    thread = message.guild.get_thread(message.id) if message.guild is not None else None
    return thread if thread is not None else message.channel


def _without_mention(text: str, me: int) -> str:
    """The text as on_message stores it: without the mention that summoned the character."""
    return re.sub(rf"<@!?{me}>", "", text).strip()


async def setup(bot: EchoBot) -> None:
    await bot.add_cog(Following(bot))
