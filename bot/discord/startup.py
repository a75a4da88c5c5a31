"""Starting against Discord: the first login retried while Discord cannot be reached, and the
faults a person meets in their first hour said in one line each.

discord.py reconnects a live session itself; before the first login succeeds it raises instead,
and the process would end with a traceback. Here:

    unreachable (DNS, refused, proxy, 5xx)  -> a warning line, then the login again after a wait
    LoginFailure (token refused)            -> StartupFault, exit code 2
    PrivilegedIntentsRequired               -> StartupFault, exit code 2
    a configured channel not usable         -> a warning line once connected
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.config import DiscordSettings

log = logging.getLogger(__name__)

# The longest wait between two logins: a network that comes up late at boot is caught within
# five minutes, and a long outage costs one line per five minutes.
LOGIN_RETRY_CAP = 300.0

PORTAL = "https://discord.com/developers/applications"
# What a login that never reached Discord raises: aiohttp's DNS, refused and proxy errors are
# OSErrors; a 5xx after discord.py's own retries is a DiscordServerError.
UNREACHABLE = (OSError, aiohttp.ClientError, TimeoutError, discord.DiscordServerError)


class Stoppable(Protocol):
    """What `start` needs of the background work it runs while Discord is unreachable (the
    memory's jobs, memory.jobs.Background)."""

    async def stop(self) -> None: ...


class StartupFault(Exception):
    """Discord refused to start the bot for a reason the operator must fix; the message says how."""


class Client(Protocol):
    """What the start-up needs of EchoBot (discord.Client)."""

    async def login(self, token: str) -> None: ...

    async def connect(self, *, reconnect: bool = True) -> None: ...

    async def close(self) -> None: ...


def point_at(settings: DiscordSettings) -> None:
    """Send discord.py's requests to the configured API and gateway (a proxy, or a test's)."""
    # discord.py reads both from class attributes only; one process talks to one Discord.
    Route.BASE = settings.api_url.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.gateway_url)
    # Écho never joins a voice channel: discord.py's warnings that voice is not supported
    # (PyNaCl, davey missing) are not the operator's to act on.
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False


def retry_delay(attempt: int, first: float, jitter: float) -> float:
    """The wait after the `attempt`-th failed login (0-based), `jitter` in [0, 1)."""
    ceiling = min(LOGIN_RETRY_CAP, first * 2.0**attempt)
    # Half the wait is fixed, half random: restarted bots do not knock all at once.
    return ceiling / 2 + ceiling / 2 * jitter


async def start(
    make_client: Callable[[], Client],
    token: str,
    *,
    token_source: str,
    first_delay: float,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
    background: Callable[[], Stoppable] | None = None,
) -> None:
    """Log in (again while Discord is unreachable), then stay connected until closed.

    While Discord cannot be reached, `background` (the memory's own jobs: reflections,
    re-indexing, erasures) runs anyway; it is stopped before each login, whose client starts
    its own. Raise StartupFault for a refused token or a missing privileged intent."""
    attempt = 0
    waiting: Stoppable | None = None
    while True:
        if waiting is not None:
            await waiting.stop()
            waiting = None
        # A fresh client per try: a failed login leaves discord.py's HTTP session half-made.
        client = make_client()
        try:
            await client.login(token)
        except discord.LoginFailure:
            await client.close()
            raise token_refused(token_source) from None
        except UNREACHABLE as exc:
            await client.close()
            delay = retry_delay(attempt, first_delay, jitter())
            log.warning(
                "cannot reach Discord at %s (%s); trying again in %.1f s",
                Route.BASE,
                _reason(exc),
                delay,
            )
            if background is not None:
                waiting = background()
            try:
                await sleep(delay)
            except BaseException:
                if waiting is not None:
                    await waiting.stop()
                raise
            attempt += 1
            continue
        except BaseException:
            await client.close()
            raise
        break
    try:
        await client.connect()
    except discord.PrivilegedIntentsRequired:
        raise StartupFault(
            "Discord refused the Message Content intent → in the Developer Portal "
            f"({PORTAL}), open the application, Bot → Privileged Gateway Intents → turn on "
            "Message Content Intent, save, and start again"
        ) from None
    finally:
        await client.close()


def token_refused(token_source: str) -> StartupFault:
    """The fault of a token Discord refuses, saying where it was read and how to get another."""
    return StartupFault(
        f"Discord refused the bot token (read from {token_source}) → in the Developer Portal "
        f"({PORTAL}), open the application, Bot → Reset Token, and put the new token in "
        f"{token_source}"
    )


async def login_once(client: discord.Client, token: str, *, token_source: str) -> None:
    """Log in over HTTP only, no gateway session, then close (`echo-bot sync`: the client's
    setup_hook sends the command tree). StartupFault for a refused token or an unreachable
    Discord."""
    try:
        await client.login(token)
    except discord.LoginFailure:
        raise token_refused(token_source) from None
    except UNREACHABLE as exc:
        raise StartupFault(f"cannot reach Discord at {Route.BASE} ({_reason(exc)})") from None
    except discord.HTTPException as exc:
        raise StartupFault(
            f"Discord refused the slash commands ({exc.status}: {exc.text})"
        ) from None
    finally:
        await client.close()


def _reason(exc: BaseException) -> str:
    """A short cause without a traceback: aiohttp's message names the host, never a token."""
    if isinstance(exc, discord.DiscordServerError):
        return f"Discord answered {exc.status}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


def channel_warnings(client: discord.Client, channel_ids: Iterable[int]) -> list[str]:
    """One line per configured channel the bot cannot see or cannot write to."""
    lines = []
    for channel_id in channel_ids:
        channel = client.get_channel(channel_id)
        if channel is None:
            lines.append(
                f"[discord] channels: channel {channel_id} is not visible to the bot (missing "
                "View Channel, or the bot is not in its server) → invite the bot or give it "
                "View Channel there"
            )
            continue
        if not isinstance(channel, discord.abc.GuildChannel | discord.Thread):
            continue
        perms = channel.permissions_for(channel.guild.me)
        writes = (
            perms.send_messages_in_threads
            if isinstance(channel, discord.Thread)
            else perms.send_messages
        )
        missing = "View Channel" if not perms.view_channel else None if writes else "Send Messages"
        if missing is not None:
            lines.append(
                f"[discord] channels: the bot lacks {missing} in channel {channel_id} → give "
                f"its role {missing} there"
            )
    return lines
