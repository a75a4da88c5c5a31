"""Follow-ups on Discord: what the `followups` job (memory.followups.sender) posts through.

A follow-up goes where its memory was said, as the character who learned it. In DMs: the
person's DM, opened for it, while that character is still the one who plays in their DMs; a
person whose DMs are closed to the bot (Discord's 403, code 50007) is tried once, then never
again (the sender counts it). In a server: that channel (or thread), while that character
still plays there and the bot may send there; through the character's webhook where the bot
has one, else as the bot, named in bold when several characters play (bot.discord.faces).
Anything else — the place gone, another character there now, a character for adults in a
channel not marked for it — is unreachable: nothing is posted, and the sender counts it.

Every message pings no one. The sender records the ids posted with the follow-up's line in the
history, as a reply's: /why, "Forget this message" and a deletion on Discord find it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import discord

from bot import render
from bot.discord import adults
from bot.discord.faces import Face, Faces, face_of
from bot.discord.scenes import Scenes
from bot.discord.ui import EchoClient
from memory import DM_ORIGIN, Character
from memory.manage.followups import Delivery, FollowUp, Outcome

log = logging.getLogger(__name__)

# Discord's JSON error code for a person who does not take DMs from the bot.
DMS_CLOSED = 50007
# The places a follow-up may be posted in a server (a forum's posts are threads).
_SPEAKS_IN = (discord.Thread, discord.TextChannel, discord.VoiceChannel, discord.StageChannel)


class DiscordFollowUps:
    """The Discord bot's Deliverer: posts follow-ups and takes them back, through the
    conversation cog's faces (its webhooks) and scenes (who plays where)."""

    def __init__(self, client: EchoClient, faces: Faces, scenes: Scenes) -> None:
        self._client = client
        self._faces = faces
        self._scenes = scenes

    async def post(self, followup: FollowUp) -> Delivery:
        """Post the follow-up where its memory was said, as the character who learned it."""
        character = self._client.runtime.characters.get(followup.character)
        if character is None:  # no longer configured
            return self._unreachable(followup, "its character is gone")
        face = face_of(character, named=self._scenes.several())
        chunks = render.split_message(render.defang(followup.text))
        if followup.origin == DM_ORIGIN:
            return await self._in_dms(followup, character, face, chunks)
        return await self._in_channel(followup, character, face, chunks)

    async def retract(self, followup: FollowUp, message_ids: Sequence[int]) -> None:
        """Delete what was posted of a follow-up forgotten while it was posted."""
        character = self._client.runtime.characters.playing(followup.character)
        face = face_of(character, named=self._scenes.several())
        try:
            channel = await self._place(followup)
            await self._faces.delete_posts(channel, message_ids, face)
        except discord.HTTPException as exc:
            log.warning("follow-up %d not taken back: Discord said %d", followup.id, exc.status)

    async def _in_dms(
        self, followup: FollowUp, character: Character, face: Face, chunks: Sequence[str]
    ) -> Delivery:
        cast = self._client.runtime.characters
        if cast.for_person(followup.user_id).key != character.key:
            return self._unreachable(followup, "another character plays in these DMs")
        in_dms = self._client.runtime.settings.discord.adult_in_dms
        if character.adult and not in_dms:
            return self._unreachable(followup, "no character for adults in DMs")
        try:
            channel = await self._client.create_dm(discord.Object(followup.user_id))
            sent = await self._faces.post(channel, chunks, face)
        except discord.Forbidden as exc:
            if exc.code == DMS_CLOSED:
                log.info("follow-up %d: the person's DMs are closed to the bot", followup.id)
                return Delivery(Outcome.BLOCKED)
            return self._unreachable(followup, f"Discord said {exc.status}")
        except discord.HTTPException as exc:
            return self._unreachable(followup, f"Discord said {exc.status}")
        return Delivery(Outcome.SENT, tuple(m.id for m in sent))

    async def _in_channel(
        self, followup: FollowUp, character: Character, face: Face, chunks: Sequence[str]
    ) -> Delivery:
        channel = self._client.get_channel(followup.channel_id)
        if channel is None:
            # Not in this process's cache: a server another process's shards hold (or the
            # channel is gone, which Discord then says). Said as the bot, whose right to send
            # there Discord checks.
            return await self._uncached(followup, character, face, chunks)
        if not isinstance(channel, _SPEAKS_IN):
            return self._unreachable(followup, "not a channel it speaks in")
        parent = channel.parent_id if isinstance(channel, discord.Thread) else None
        _, here = self._scenes.cast(channel.id, parent)
        if all(c.key != character.key for c in here):
            return self._unreachable(followup, "its character no longer plays there")
        if character.adult and not adults.allowed(channel, in_dms=False):
            return self._unreachable(followup, "not an age-restricted channel")
        if not _may_send(channel):
            return self._unreachable(followup, "the bot may not send there")
        try:
            sent = await self._faces.post(channel, chunks, face)
        except discord.HTTPException as exc:
            return self._unreachable(followup, f"Discord said {exc.status}")
        return Delivery(Outcome.SENT, tuple(m.id for m in sent))

    async def _uncached(
        self, followup: FollowUp, character: Character, face: Face, chunks: Sequence[str]
    ) -> Delivery:
        _, here = self._scenes.cast(followup.channel_id)
        if all(c.key != character.key for c in here):
            return self._unreachable(followup, "its character no longer plays there")
        if character.adult:  # whether the channel is marked for adults is not known here
            return self._unreachable(followup, "a channel not known to be age-restricted")
        channel = self._client.get_partial_messageable(
            followup.channel_id, guild_id=int(followup.origin)
        )
        try:
            sent = await self._faces.post(channel, chunks, face)
        except discord.HTTPException as exc:
            return self._unreachable(followup, f"Discord said {exc.status}")
        return Delivery(Outcome.SENT, tuple(m.id for m in sent))

    async def _place(self, followup: FollowUp) -> discord.abc.Messageable:
        """Where a follow-up was posted."""
        if followup.origin == DM_ORIGIN:
            return await self._client.create_dm(discord.Object(followup.user_id))
        found = self._client.get_channel(followup.channel_id)
        if isinstance(found, discord.abc.Messageable):
            return found
        return self._client.get_partial_messageable(followup.channel_id)

    def _unreachable(self, followup: FollowUp, why: str) -> Delivery:
        log.info("follow-up %d not posted: %s", followup.id, why)
        return Delivery(Outcome.UNREACHABLE)


def _may_send(channel: discord.Thread | discord.abc.GuildChannel) -> bool:
    """Whether the bot may post in this channel (a thread: in threads, and not locked)."""
    # discord.py types it as always there; it is None until the bot's member is cached.
    me: discord.Member | None = getattr(channel.guild, "me", None)
    if me is None:
        return False
    allowed = channel.permissions_for(me)
    if isinstance(channel, discord.Thread):
        return allowed.send_messages_in_threads and not channel.locked
    return allowed.view_channel and allowed.send_messages
