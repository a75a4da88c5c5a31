"""The pictures posted with a Discord message: its own attachments only, fetched from Discord's
CDN within the size Discord declared and `[images] max_mb`, then read by the memory's intake
(memory.pictures: header checked, decoded, written again small)."""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

import discord
import httpx

from bot.config import ImagesSettings
from memory import Intake, Picture

log = logging.getLogger(__name__)

# Where Discord serves attachments; a URL anywhere else is never fetched.
CDN_HOSTS = frozenset({"cdn.discordapp.com", "media.discordapp.net"})
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".gif")
# Seconds a picture's download may take: Discord's CDN serves 10 MB in well under that.
FETCH_TIMEOUT = 30.0


def posted(message: discord.Message) -> list[discord.Attachment]:
    """The message's attachments that are pictures (by type, or by name when Discord gave no
    type)."""
    return [
        a
        for a in message.attachments
        if (a.content_type or "").split(";")[0] in IMAGE_TYPES
        or (a.content_type is None and a.filename.lower().endswith(IMAGE_EXTENSIONS))
    ]


class Fetcher:
    """Fetches a message's pictures from Discord's CDN and reads them through the intake."""

    def __init__(self, http: httpx.AsyncClient, intake: Intake, settings: ImagesSettings) -> None:
        self.http = http
        self.intake = intake
        self.settings = settings
        # The CDN's hosts and scheme (tests serve one on loopback).
        self.hosts = CDN_HOSTS
        self.schemes = frozenset({"https"})

    @property
    def cap(self) -> int:
        return int(self.settings.max_mb * 1024 * 1024)

    def from_cdn(self, message: discord.Message, attachment: discord.Attachment) -> bool:
        """Whether the attachment's URL is Discord's CDN's, for this message's channel and this
        attachment: `/attachments/<channel id>/<attachment id>/...`."""
        url = urlsplit(attachment.url)
        own = f"/attachments/{message.channel.id}/{attachment.id}/"
        return (
            url.scheme in self.schemes and url.hostname in self.hosts and url.path.startswith(own)
        )

    async def pictures(self, message: discord.Message) -> tuple[Picture, ...]:
        """The message's pictures, each read or named with why it was not; those past
        `[images] per_message` named only."""
        found = posted(message)
        if not found:
            return ()
        if not self.settings.enabled:
            return tuple(Picture(a.filename, a.size) for a in found)
        limit = min(self.settings.per_message, Intake.PER_MESSAGE)
        past = tuple(
            Picture(a.filename, a.size, problem=f"past the {limit} pictures read a message")
            for a in found[limit:]
        )
        async with self.intake.person(message.author.id) as allowed:
            if not allowed:
                busy = "too many pictures of this person being read at once"
                return tuple(Picture(a.filename, a.size, problem=busy) for a in found)
            read = await asyncio.gather(*(self._one(message, a) for a in found[:limit]))
        return (*read, *past)

    async def _one(self, message: discord.Message, attachment: discord.Attachment) -> Picture:
        name, size = attachment.filename, attachment.size
        if size > self.cap:
            return Picture(name, size, problem=f"over the {self.settings.max_mb:g} MB cap")
        if not self.from_cdn(message, attachment):
            return Picture(name, size, problem="not from Discord's CDN")
        try:
            raw = await self._fetch(attachment.url)
        except (httpx.HTTPError, ValueError) as exc:
            why = type(exc).__name__
            log.info("picture %d of message %d not fetched: %s", attachment.id, message.id, why)
            return Picture(name, size, problem="it could not be downloaded")
        return await self.intake.read(name, raw, size=size)

    async def _fetch(self, url: str) -> bytes:
        """The file's bytes; ValueError past the cap, whatever length the server declares."""
        body = bytearray()
        timeout = httpx.Timeout(FETCH_TIMEOUT)
        async with self.http.stream("GET", url, timeout=timeout) as response:
            response.raise_for_status()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.cap:
                    raise ValueError("over the cap")
        return bytes(body)
