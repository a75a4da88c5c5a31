"""A character's own name and face on Discord: a reply goes out through a channel webhook the
bot owns, under the character's name and with its card's picture; where that cannot be (a DM,
no Manage Webhooks permission, a webhook call refused), the bot says it itself, the character's
name in bold on the reply's first line when several characters play.

One webhook per channel and character, not one per channel: a message may set its own
`username`, but its avatar only as a URL (`avatar_url`), and a self-hosted bot has no public
address for a card's picture (Discord's attachment links expire). A webhook's own avatar is
uploaded as bytes and Discord hosts it. A scene holds a few characters, well under Discord's
15 webhooks a channel. Each webhook is named `Écho · <key> · <digest of the picture>`: found
again after a restart among the channel's webhooks the bot created, its picture uploaded again
when the card's changed. A thread speaks through its parent channel's webhooks.

A webhook message cannot be a Discord reply: its first line links to the message it answers
(a link, no mention). Every part is at most 2,000 characters and pings no one, as the bot's own.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import discord
from discord.utils import MISSING

from bot.render import DISCORD_LIMIT, split_message
from memory import CardError, portrait, valid_name

log = logging.getLogger(__name__)

_PREFIX = "Écho · "
# After a refused creation (the channel holds 15 webhooks, the permission was just taken): the
# bot speaks itself there this long before trying again, not one refused call per message.
RETRY_AFTER = 600.0
# After a message through a character's webhook was refused as malformed (400: Discord refuses
# the character's name as a username, its rules changed): the bot speaks itself for that
# character in that channel RETRY_AFTER, then twice as long after each refusal again, up to this.
LONGEST_BACK_OFF = 24 * 3600.0
MUTED = "webhook refused its messages earlier"
# The first line of a webhook message: the message it answers (Discord shows a link to it).
REPLY_MARK = "-# ↪ "
_HEADER = re.compile(r"\A(?:-# ↪ \S+|\*\*[^\n]+\*\*)\n")
_NONE = discord.AllowedMentions.none()
_HOOKABLE = (discord.TextChannel, discord.ForumChannel, discord.VoiceChannel, discord.StageChannel)


class Playing(Protocol):
    """A character as a front end shows it (C3's Character)."""

    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def avatar(self) -> bytes | None: ...
    @property
    def adult(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Face:
    """Who speaks: the character's key, its name, its card's picture (PNG bytes or None), and
    whether the bot says the name when it speaks itself (several characters play)."""

    key: str
    name: str
    avatar: bytes | None = None
    named: bool = False


def face_of(character: Playing, *, named: bool) -> Face:
    return Face(character.key, character.name, character.avatar, named)


def safe_name(name: str) -> str:
    """A name Discord takes for a webhook or a message's username (memory/character/names.py
    says how a name is adjusted; a character's is already, since it was built)."""
    return valid_name(name)


def name_heading(face: Face) -> str:
    """The first line of a reply the bot says itself for a character: its name in bold, at
    most 2 × 80 + 4 characters (a valid name, its markdown escaped)."""
    return f"**{discord.utils.escape_markdown(safe_name(face.name))}**"


def body(content: str) -> str:
    """A sent message's text without the first line this module adds (the link to the message
    answered, or the character's name)."""
    return _HEADER.sub("", content, count=1)


def name_line(content: str) -> str | None:
    """The character's name on the first line of a message the bot said for it, if any."""
    found = re.match(r"\*\*([^\n]+)\*\*\n", content)
    return discord.utils.remove_markdown(found.group(1)) if found else None


class Faces:
    """The channel webhooks the bot speaks through, created once and found again after a restart;
    owned by the conversation cog. Safe at every await: a channel's webhooks are looked up and
    made under that channel's lock."""

    def __init__(self, client: discord.Client, *, clock: Callable[[], float] = time.monotonic):
        self._client = client
        # What the back-offs are read on (a test's virtual clock).
        self.clock = clock
        self._hooks: dict[tuple[int, str], discord.Webhook] = {}
        self._owned: dict[int, list[discord.Webhook]] = {}
        self._refused: dict[tuple[int, str], float] = {}
        # Per channel and character whose webhook messages Discord refused (400): until when
        # the bot speaks itself instead, and how long the last back-off was.
        self._muted: dict[tuple[int, str], tuple[float, float]] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._pictures: dict[str, bytes | None] = {}
        self._told: set[tuple[int, str]] = set()
        # Which character each of the bot's webhooks speaks for, by webhook id.
        self.speakers: dict[int, str] = {}
        # Replies the bot said itself instead of a character's webhook, by reason.
        self.fallbacks: Counter[str] = Counter()

    async def send_reply(
        self,
        channel: discord.abc.Messageable,
        reply_to: discord.Message,
        chunks: Sequence[str],
        face: Face,
        *,
        continued: bool = False,
        view: discord.ui.View | None = None,
    ) -> list[discord.Message]:
        """Post a reply's chunks as `face`: through its webhook where the bot may, else as a
        Discord reply from the bot; return the messages posted, in order. The first chunk gets
        the line saying what it answers (or who speaks), unless it `continued` a reply already
        begun; the last carries `view` (the reply's buttons). A refused webhook call loses
        nothing: what it did not post goes out as the bot."""
        if not chunks:
            return []
        hook, why = await self._webhook(channel, face, posting=True)
        sent: list[discord.Message] = []
        if hook is not None:
            parts = list(chunks)
            if not continued:
                parts = _headed(chunks, f"{REPLY_MARK}{reply_to.jump_url}")
            thread = channel if isinstance(channel, discord.Thread) else MISSING
            for n, part in enumerate(parts):
                extra: dict[str, Any] = {}
                if view is not None and n == len(parts) - 1:
                    extra["view"] = view
                try:
                    posted = await hook.send(
                        part,
                        username=safe_name(face.name),
                        wait=True,
                        allowed_mentions=_NONE,
                        thread=thread,
                        **extra,
                    )
                    sent.append(posted)
                except discord.HTTPException as exc:
                    why = f"webhook refused ({exc.status})"
                    self._refused_post(channel, hook, face, exc)
                    break
            if sent:
                self._took(channel, face)
            if len(sent) == len(parts):
                return sent
            chunks = parts[len(sent) :] if sent else chunks
        named = not sent and not continued
        return sent + await self._as_bot(
            channel, reply_to, chunks, face, why, named=named, view=view
        )

    async def speaker(
        self, channel: discord.abc.Messageable, reply_to: discord.Message, face: Face
    ) -> FaceSpeaker:
        """What a streamed reply posts and edits through: `face`'s webhook where the bot may
        (found or made now), else the bot itself (bot.discord.streaming)."""
        hook, why = await self._webhook(channel, face, posting=True)
        return FaceSpeaker(self, channel, reply_to, face, hook, why)

    async def _as_bot(
        self,
        channel: discord.abc.Messageable,
        reply_to: discord.Message,
        chunks: Sequence[str],
        face: Face,
        why: str,
        *,
        named: bool,
        view: discord.ui.View | None = None,
    ) -> list[discord.Message]:
        self.fallbacks[why] += 1
        where = getattr(channel, "id", 0)
        if why != "dm" and (where, why) not in self._told:
            self._told.add((where, why))
            log.info(
                "channel %d: %s; the characters speak as the bot there, named in bold "
                "(give the bot Manage Webhooks there for their own names and faces)",
                where,
                why,
            )
        if named and face.named:
            chunks = _headed(chunks, name_heading(face))
        # In a thread opened from the message, the thread itself begins with it: no reply.
        beside = getattr(channel, "id", None) != reply_to.channel.id
        sent = []
        for n, part in enumerate(chunks):
            extra: dict[str, Any] = {}
            if view is not None and n == len(chunks) - 1:
                extra["view"] = view
            if beside:
                sent.append(await channel.send(part, allowed_mentions=_NONE, **extra))
                continue
            sent.append(
                await reply_to.reply(part, mention_author=False, allowed_mentions=_NONE, **extra)
            )
        return sent

    async def _webhook(
        self, channel: discord.abc.Messageable, face: Face, *, posting: bool = False
    ) -> tuple[discord.Webhook | None, str]:
        """The webhook `face` speaks through here, or None and why not; to post a new message
        (`posting`), None while its messages here are in a back-off after a refusal."""
        guild = getattr(channel, "guild", None)
        if guild is None:
            return None, "dm"
        home = channel.parent if isinstance(channel, discord.Thread) else channel
        if not isinstance(home, _HOOKABLE):
            return None, "no webhooks in this kind of channel"
        me = guild.me
        if me is None or not home.permissions_for(me).manage_webhooks:
            return None, "no Manage Webhooks permission"
        key = (home.id, face.key)
        if posting and self._mutes(key):
            return None, MUTED
        if (hook := self._hooks.get(key)) is not None:
            return hook, ""
        if self.clock() < self._refused.get(key, -math.inf):
            return None, "webhook refused earlier"
        async with self._locks.setdefault(home.id, asyncio.Lock()):
            if (hook := self._hooks.get(key)) is not None:
                return hook, ""
            try:
                hook = await self._find_or_make(home, me.id, face)
            except discord.HTTPException as exc:
                self._refused[key] = self.clock() + RETRY_AFTER
                return None, f"webhook refused ({exc.status})"
            self._hooks[key] = hook
            self.speakers[hook.id] = face.key
            return hook, ""

    async def _find_or_make(
        self, home: discord.abc.GuildChannel, me: int, face: Face
    ) -> discord.Webhook:
        assert isinstance(home, _HOOKABLE)
        picture = self._picture(face)
        digest = hashlib.sha256(picture or b"").hexdigest()[:8]
        tag = safe_name(f"{_PREFIX}{face.key[:48]} · ")
        name = f"{tag} {digest}"
        owned = self._owned.get(home.id)
        if owned is None:
            listed = await home.webhooks()
            owned = [w for w in listed if w.user is not None and w.user.id == me and w.token]
            self._owned[home.id] = owned
        found = next((w for w in owned if (w.name or "").startswith(tag)), None)
        if found is None:
            found = await home.create_webhook(
                name=name, avatar=picture, reason=f"Écho: the character {face.key} speaks here"
            )
            owned.append(found)
            log.info(
                "channel %d: webhook %d made for the character %s", home.id, found.id, face.key
            )
        elif found.name != name:  # the card's picture changed since it was made
            found = await found.edit(name=name, avatar=picture)
        return found

    def _picture(self, face: Face) -> bytes | None:
        """The card's picture as an avatar (its text taken out), once per character."""
        if face.key not in self._pictures:
            picture = None
            if face.avatar is not None:
                try:
                    picture = portrait(face.avatar)
                except CardError as exc:
                    log.warning("character %s speaks without its picture: %s", face.key, exc)
            self._pictures[face.key] = picture
        return self._pictures[face.key]

    def _refused_post(
        self,
        channel: discord.abc.Messageable,
        hook: discord.Webhook,
        face: Face,
        error: discord.HTTPException,
    ) -> None:
        """A message through `face`'s webhook was refused: a webhook Discord no longer knows
        is forgotten (404); a malformed one (400, the name as a username) starts a back-off,
        doubled at each refusal again, in which the bot speaks itself for `face` here."""
        self._forget(hook, error)
        if error.status != 400:
            return
        key = _place(channel, face)
        if self._mutes(key):
            return  # a call in flight together with the one that started the back-off
        _, last = self._muted.get(key, (0.0, 0.0))
        wait = min(LONGEST_BACK_OFF, last * 2 if last else RETRY_AFTER)
        self._muted[key] = (self.clock() + wait, wait)
        log.info(
            "channel %d: Discord refused the character %s's message through its webhook "
            "(400): the bot says its replies there for %.0f s",
            key[0],
            face.key,
            wait,
        )

    def _mutes(self, place: tuple[int, str]) -> bool:
        """Whether the bot speaks itself for this channel and character (a back-off)."""
        return self.clock() < self._muted.get(place, (-math.inf, 0.0))[0]

    def _took(self, channel: discord.abc.Messageable, face: Face) -> None:
        """A message through `face`'s webhook went out: a back-off starts afresh next time."""
        if self._muted:
            self._muted.pop(_place(channel, face), None)

    def _forget(self, hook: discord.Webhook, error: discord.HTTPException) -> None:
        """Drop a webhook Discord no longer knows (deleted from the channel's settings): the
        next reply makes another."""
        if error.status != 404:
            return
        for key, held in list(self._hooks.items()):
            if held.id == hook.id:
                del self._hooks[key]
                owned = self._owned.get(key[0], [])
                self._owned[key[0]] = [w for w in owned if w.id != hook.id]

    async def edit_posts(
        self,
        channel: discord.abc.Messageable,
        reply_to: discord.Message,
        posts: Sequence[int],
        chunks: Sequence[str],
        face: Face,
    ) -> tuple[list[discord.Message], list[int]]:
        """Edit a reply's posts to say `chunks` as `send_reply` would have posted them (through
        `face`'s webhook where it speaks: the bot may not edit a webhook's message), and post
        what they cannot hold after them; return the new posts and the posts left over."""
        hook, _ = await self._webhook(channel, face)
        header = f"{REPLY_MARK}{reply_to.jump_url}" if hook is not None else ""
        if hook is None and face.named:
            header = name_heading(face)
        parts = _headed(chunks, header) if header and chunks else list(chunks)
        thread = channel if isinstance(channel, discord.Thread) else MISSING
        for post, part in zip(posts, parts, strict=False):
            if hook is not None:
                try:
                    await hook.edit_message(
                        post, content=part, allowed_mentions=_NONE, thread=thread
                    )
                    continue
                except discord.HTTPException:  # said by the bot itself (no webhook then)
                    pass
            partial = channel.get_partial_message(post)  # type: ignore[attr-defined]
            await partial.edit(content=part, allowed_mentions=_NONE)
        extra = parts[len(posts) :]
        more = await self.send_reply(channel, reply_to, extra, face, continued=True)
        return more, list(posts[len(parts) :])

    async def delete_posts(
        self, channel: discord.abc.Messageable, posts: Sequence[int], face: Face
    ) -> None:
        """Delete posts of a reply: through `face`'s webhook where it speaks (the bot may delete
        a webhook's message only with Manage Messages), else as the bot."""
        hook, _ = await self._webhook(channel, face)
        thread = channel if isinstance(channel, discord.Thread) else MISSING
        for post in posts:
            if hook is not None:
                try:
                    await hook.delete_message(post, thread=thread)
                    continue
                except discord.HTTPException:  # said by the bot itself (no webhook then)
                    pass
            await channel.get_partial_message(post).delete()  # type: ignore[attr-defined]

    def made_by_us(self, message: discord.Message) -> bool:
        """Whether a message came from a webhook the bot made, known or not since a restart:
        Discord marks an application's webhook messages with its id."""
        app = self._client.application_id
        return message.webhook_id is not None and app is not None and message.application_id == app

    def speaker_of(self, message: discord.Message) -> str | None:
        """The key of the character a message of one of the bot's webhooks speaks for."""
        if message.webhook_id is None:
            return None
        return self.speakers.get(message.webhook_id)


def _place(channel: discord.abc.Messageable, face: Face) -> tuple[int, str]:
    """The channel whose webhooks `face` speaks through here (a thread's parent), and its key."""
    home = channel.parent if isinstance(channel, discord.Thread) else channel
    return getattr(home, "id", 0), face.key


def header_of(content: str) -> str:
    """The first line this module put on a part of a reply (with its newline), or ""."""
    header = _HEADER.match(content)
    return header.group(0) if header else ""


def room(message: discord.Message) -> int:
    """How many characters of text an edit of this part of a reply may hold: 2,000 less the
    first line it keeps (what it answers, or who speaks)."""
    header = _HEADER.match(message.content)
    return DISCORD_LIMIT - (len(header.group(0)) if header else 0)


async def edit_reply(message: discord.Message, text: str) -> discord.Message:
    """Edit a part of a reply (the bot's or a webhook's message) to say `text` (at most
    `room(message)` characters), keeping its first line, pinging no one."""
    if len(text) > room(message):
        raise ValueError(f"{len(text)} characters, over the {room(message)} this part holds")
    header = _HEADER.match(message.content)
    content = (header.group(0) if header else "") + text
    return await message.edit(content=content, allowed_mentions=_NONE)


def _headed(chunks: Sequence[str], header: str) -> list[str]:
    """The chunks with `header` as the first line of the first, still each under the limit."""
    first, *rest = chunks
    pieces = split_message(first, DISCORD_LIMIT - len(header) - 1)
    return [f"{header}\n{pieces[0]}", *pieces[1:], *rest]


class FaceSpeaker:
    """One reply's parts as a character says them (bot.discord.streaming's Speaker): each part
    at most `limit` characters, the first headed by the line saying what it answers (a webhook)
    or who speaks (the bot, with several characters); every post and edit pinging no one. A
    webhook refused midway: the rest is said by the bot."""

    def __init__(
        self,
        faces: Faces,
        channel: discord.abc.Messageable,
        reply_to: discord.Message,
        face: Face,
        hook: discord.Webhook | None,
        why: str,
    ) -> None:
        self._faces, self._channel, self._reply_to, self._face = faces, channel, reply_to, face
        self._hook, self._why = hook, why
        if hook is not None:
            self._header = f"{REPLY_MARK}{reply_to.jump_url}"
        elif face.named:
            self._header = name_heading(face)
        else:
            self._header = ""
        self.limit = DISCORD_LIMIT - (len(self._header) + 1 if self._header else 0)

    async def post(
        self, text: str, *, first: bool, view: discord.ui.View | None = None
    ) -> discord.Message:
        content = f"{self._header}\n{text}" if first and self._header else text
        extra: dict[str, Any] = {} if view is None else {"view": view}
        if self._hook is not None and self._faces._mutes(_place(self._channel, self._face)):
            self._hook, self._why = None, MUTED  # refused since this reply began
        if self._hook is not None:
            thread = self._channel if isinstance(self._channel, discord.Thread) else MISSING
            try:
                posted = await self._hook.send(
                    content,
                    username=safe_name(self._face.name),
                    wait=True,
                    allowed_mentions=_NONE,
                    thread=thread,
                    **extra,
                )
                self._faces._took(self._channel, self._face)
                return posted
            except discord.HTTPException as exc:
                self._why = f"webhook refused ({exc.status})"
                self._faces._refused_post(self._channel, self._hook, self._face, exc)
                self._hook = None
        # The bot says it: a reply to the message (no link), named when several play.
        sent = await self._faces._as_bot(
            self._channel,
            self._reply_to,
            [text],
            self._face,
            self._why,
            named=first,
            view=view,
        )
        return sent[-1]  # one part (a name longer than the link it replaces: two)

    async def edit(
        self, message: discord.Message, text: str, *, view: discord.ui.View | None = None
    ) -> None:
        extra: dict[str, Any] = {} if view is None else {"view": view}
        content = header_of(message.content) + text
        await message.edit(content=content, allowed_mentions=_NONE, **extra)
