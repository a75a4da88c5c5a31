"""Real discord.py objects built from payload dicts, with the HTTP seams recorded.

The REST client (`client.http.request`) and the webhook adapter that interaction responses go
through are replaced by recorders: nothing leaves the process, and tests read what would have
been sent to Discord (content, flags, allowed_mentions, components).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import discord
from discord.http import Route
from discord.webhook.async_ import AsyncWebhookAdapter, async_context

BOT_ID = 999
GUILD_ID = 111
# Who owns the application (Discord's application info): no test person unless a test says so.
OWNER_ID = 7
_ids = itertools.count(10_000)
_CHANNEL_MESSAGE = re.compile(r"/channels/\d+/messages/(\d+)")
EPHEMERAL = 64


def user_payload(user_id: int, name: str = "someone", *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id), "username": name, "global_name": name, "discriminator": "0",
        "avatar": None, "bot": bot,
    }  # fmt: skip


@dataclass
class Sent:
    method: str
    path: str
    payload: dict[str, Any]
    # Attached files, by file name (a multipart request's file parts).
    files: dict[str, bytes] = field(default_factory=dict)
    # When it was sent, on the recorder's clock.
    at: float = 0.0
    # The id of the message it posted, if it posted one.
    made: int = 0
    # The status Discord refused it with, if it did.
    refused: int = 0


@dataclass
class Recorder:
    """Everything the bot tried to send to Discord, in order."""

    sent: list[Sent] = field(default_factory=list)
    # Answer typing indicators with a 503, as Discord does under load.
    refuse_typing: bool = False
    # The application's owner, as Discord's application info says.
    owner_id: int = OWNER_ID
    # Statuses to answer the next message edits (PATCH) with, in order; 0 accepts one.
    refuse_edits: list[int] = field(default_factory=list)
    # The clock `Sent.at` is read from.
    clock: Callable[[], float] = lambda: 0.0

    def messages(self) -> list[dict[str, Any]]:
        """Channel messages and interaction answers (callbacks and followups), in order; a
        channel message as it was left (its edits folded in, gone once deleted)."""
        out: list[dict[str, Any]] = []
        posted: dict[int, dict[str, Any]] = {}
        for s in self.sent:
            body = s.payload.get("data", s.payload) if "/callback" in s.path else s.payload
            if (edited := _CHANNEL_MESSAGE.fullmatch(s.path)) and int(edited[1]) in posted:
                if s.method == "DELETE":
                    out.remove(posted.pop(int(edited[1])))
                elif "content" in body:
                    posted[int(edited[1])]["content"] = body["content"]
            elif s.method in ("POST", "PATCH") and "content" in body:
                out.append(dict(body))
                if s.made:
                    posted[s.made] = out[-1]
        return out

    def contents(self) -> list[str]:
        return [str(m.get("content")) for m in self.messages()]

    def commands_sent(self) -> list[list[dict[str, Any]]]:
        """Each upload of the global command tree, as Discord received it."""
        return [s.payload["commands"] for s in self.sent if s.path.endswith("/commands")]

    async def rest(self, route: Route, **kwargs: Any) -> Any:
        payload = kwargs.get("json") or {}
        if route.method == "PUT" and route.path.endswith("/commands"):
            path = route.url.removeprefix(route.BASE)
            self.sent.append(Sent(route.method, path, {"commands": payload}))
            # Discord answers the commands it now holds, with their ids.
            return [{"description": "", **c, "id": str(next(_ids)), "version": "1",
                     "application_id": str(BOT_ID)} for c in payload]  # fmt: skip
        path = route.url.removeprefix(route.BASE)
        self.sent.append(Sent(route.method, path, payload, at=self.clock()))
        if self.refuse_typing and route.path.endswith("/typing"):
            raise discord.DiscordServerError(_Response(503), "typing refused")  # type: ignore[arg-type]
        if route.method == "POST" and route.path.endswith("/messages"):
            made = _message_payload(int(route.channel_id), payload.get("content", ""))
            self.sent[-1].made = int(made["id"])
            return made
        if route.method == "PATCH" and route.path.endswith("/messages/{message_id}"):
            status = self.refuse_edits.pop(0) if self.refuse_edits else 0
            self.sent[-1].refused = status
            if status == 404:
                raise discord.NotFound(_Response(status), "Unknown Message")  # type: ignore[arg-type]
            if status:
                raise discord.HTTPException(_Response(status), "edit refused")  # type: ignore[arg-type]
            return _message_payload(
                int(route.channel_id), payload.get("content", ""), int(path.rsplit("/", 1)[1])
            )
        if route.path == "/oauth2/applications/@me":
            return _application(self.owner_id)
        return None


def _application(owner_id: int) -> dict[str, Any]:
    return {
        "id": str(BOT_ID), "name": "Echo", "description": "", "icon": None, "bot_public": True,
        "bot_require_code_grant": False, "owner": user_payload(owner_id, "owner"),
        "verify_key": "k", "flags": 0,
    }  # fmt: skip


class _Response:
    """The little of aiohttp's response that discord.HTTPException reads."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "Service Unavailable"


def _message_payload(
    channel_id: int, content: str, message_id: int | None = None
) -> dict[str, Any]:
    return {
        "id": str(message_id or next(_ids)), "channel_id": str(channel_id),
        "author": user_payload(BOT_ID, "Echo", bot=True),
        "content": content, "timestamp": "2026-11-30T00:00:00+00:00", "edited_timestamp": None,
        "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [],
        "attachments": [], "embeds": [], "pinned": False, "type": 0,
    }  # fmt: skip


class RecordingAdapter(AsyncWebhookAdapter):
    """The webhook adapter interaction responses use, recording instead of sending."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    async def request(self, route: Route, session: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        payload = kwargs.get("payload")
        files: dict[str, bytes] = {}
        if payload is None and kwargs.get("multipart"):
            import json

            parts = kwargs["multipart"]
            payload = json.loads(parts[0]["value"])
            for part in parts[1:]:
                files[part["filename"]] = part["value"].read()
        self.recorder.sent.append(Sent(route.method, route.path, payload or {}, files))
        if route.path.endswith("/callback"):
            return {"interaction": {"id": str(next(_ids)), "type": 2}}
        return _message_payload(0, (payload or {}).get("content", ""))


async def install(client: discord.Client, recorder: Recorder) -> None:
    """Route the client's REST calls and interaction responses to the recorder."""
    await client._async_setup_hook()  # binds the running loop, as login() would
    client.http.request = recorder.rest  # type: ignore[method-assign]
    async_context.set(RecordingAdapter(recorder))
    state = client._connection
    state.user = discord.ClientUser(state=state, data=user_payload(BOT_ID, "Echo", bot=True))  # type: ignore[arg-type]
    state.application_id = BOT_ID  # as login() learns it from the application's info


def guild(
    client: discord.Client, *, permissions: int = 0, guild_id: int = GUILD_ID
) -> discord.Guild:
    state = client._connection
    found = state._get_guild(guild_id)
    if found is not None:
        return found
    g = discord.Guild(
        data={
            "id": str(guild_id), "name": "Test", "features": [], "owner_id": "1",
            "roles": [{
                "id": str(guild_id), "name": "@everyone", "permissions": str(permissions),
                "position": 0, "color": 0, "hoist": False, "managed": False, "mentionable": False,
            }],
            "channels": [], "members": [], "emojis": [], "stickers": [],
        },  # type: ignore[typeddict-item]
        state=state,
    )  # fmt: skip
    state._add_guild(g)
    return g


def text_channel(
    client: discord.Client, channel_id: int, *, guild_id: int = GUILD_ID
) -> discord.TextChannel:
    g = guild(client, guild_id=guild_id)
    channel = discord.TextChannel(
        state=client._connection, guild=g,
        data={"id": str(channel_id), "type": 0, "name": f"c{channel_id}", "position": 0,
              "guild_id": str(guild_id), "permission_overwrites": [], "nsfw": False,
              "parent_id": None},  # type: ignore[typeddict-item]
    )  # fmt: skip
    g._add_channel(channel)
    return channel


def dm_channel(client: discord.Client, channel_id: int, user_id: int) -> discord.DMChannel:
    state = client._connection
    assert state.user is not None
    return discord.DMChannel(
        me=state.user, state=state,
        data={"id": str(channel_id), "type": 1, "recipients": [user_payload(user_id)],
              "last_message_id": None},  # type: ignore[typeddict-item]
    )  # fmt: skip


def message(
    client: discord.Client,
    channel: discord.abc.Messageable,
    *,
    author_id: int,
    content: str,
    message_id: int | None = None,
    mentions: list[int] | None = None,
    author_bot: bool = False,
    reply_to: dict[str, Any] | None = None,
    attachments: list[dict[str, Any]] | None = None,
) -> discord.Message:
    data: dict[str, Any] = {
        "id": str(message_id or next(_ids)), "channel_id": str(channel.id),  # type: ignore[attr-defined]
        "author": user_payload(author_id, f"user{author_id}", bot=author_bot),
        "content": content, "timestamp": "2026-11-30T00:00:00+00:00", "edited_timestamp": None,
        "tts": False, "mention_everyone": False,
        "mentions": [user_payload(u, "Echo" if u == BOT_ID else f"user{u}", bot=u == BOT_ID)
                     for u in mentions or []],
        "mention_roles": [], "attachments": attachments or [], "embeds": [], "pinned": False,
        "type": 0 if reply_to is None else 19,
    }  # fmt: skip
    if isinstance(channel, discord.TextChannel):
        data["guild_id"] = str(channel.guild.id)
        data["member"] = {"roles": [], "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False,
                          "mute": False}  # fmt: skip
    if reply_to is not None:
        data["message_reference"] = {"message_id": reply_to["id"], "channel_id": str(channel.id)}  # type: ignore[attr-defined]
        data["referenced_message"] = reply_to
    return discord.Message(state=client._connection, channel=channel, data=data)  # type: ignore[arg-type]


def interaction(
    client: discord.Client,
    name: str,
    *,
    user_id: int,
    channel_id: int,
    in_guild: bool = True,
    options: list[dict[str, Any]] | None = None,
    permissions: int = 0,
    autocomplete: bool = False,
    guild_id: int = GUILD_ID,
) -> discord.Interaction[Any]:
    """A chat-input (or autocomplete) interaction for the command `name`, as Discord sends it."""
    data: dict[str, Any] = {
        "id": str(next(_ids)), "application_id": str(BOT_ID), "type": 4 if autocomplete else 2,
        "token": "token", "version": 1, "channel_id": str(channel_id), "locale": "en-US",
        "app_permissions": "0", "entitlements": [], "authorizing_integration_owners": {},
        "attachment_size_limit": 8_388_608,
        "data": {"id": str(next(_ids)), "name": name, "type": 1, "options": options or []},
    }  # fmt: skip
    if in_guild:
        guild(client, guild_id=guild_id)
        data["guild_id"] = str(guild_id)
        data["guild_locale"] = "en-US"
        data["channel"] = {"id": str(channel_id), "type": 0, "guild_id": str(guild_id),
                           "name": "c", "position": 0, "permission_overwrites": [],
                           "nsfw": False}  # fmt: skip
        data["member"] = {
            "user": user_payload(user_id), "roles": [], "joined_at": "2026-01-01T00:00:00+00:00",
            "deaf": False, "mute": False, "permissions": str(permissions), "flags": 0,
        }  # fmt: skip
    else:
        data["channel"] = {"id": str(channel_id), "type": 1, "recipients": [user_payload(user_id)]}
        data["user"] = user_payload(user_id)
    return discord.Interaction(data=data, state=client._connection)  # type: ignore[arg-type]


def component(
    client: discord.Client, *, user_id: int, channel_id: int, custom_id: str
) -> discord.Interaction[Any]:
    """A button press, as Discord sends it."""
    data: dict[str, Any] = {
        "id": str(next(_ids)), "application_id": str(BOT_ID), "type": 3, "token": "token",
        "version": 1, "channel_id": str(channel_id), "locale": "en-US", "app_permissions": "0",
        "entitlements": [], "authorizing_integration_owners": {}, "guild_id": str(GUILD_ID),
        "attachment_size_limit": 8_388_608,
        "channel": {"id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID), "name": "c",
                    "position": 0, "permission_overwrites": [], "nsfw": False},
        "member": {"user": user_payload(user_id), "roles": [],
                   "joined_at": "2026-01-01T00:00:00+00:00",
                   "deaf": False, "mute": False, "permissions": "0", "flags": 0},
        "data": {"custom_id": custom_id, "component_type": 2},
        "message": _message_payload(channel_id, ""),
    }  # fmt: skip
    return discord.Interaction(data=data, state=client._connection)  # type: ignore[arg-type]


def message_command(
    client: discord.Client,
    name: str,
    *,
    user_id: int,
    channel_id: int,
    target: discord.Message,
    permissions: int = 0,
) -> discord.Interaction[Any]:
    """A message context-menu interaction ("Apps > name" on `target`), as Discord sends it."""
    interaction_ = interaction(
        client, name, user_id=user_id, channel_id=channel_id, permissions=permissions
    )
    payload = payload_of(target)
    interaction_.data = {  # type: ignore[typeddict-item]
        "id": str(next(_ids)), "name": name, "type": 3, "target_id": str(target.id),
        "resolved": {"messages": {str(target.id): payload}},
    }  # fmt: skip
    return interaction_


def payload_of(message_: discord.Message) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": str(message_.id), "channel_id": str(message_.channel.id),
        "author": user_payload(message_.author.id, message_.author.name,
                              bot=message_.author.bot),
        "content": message_.content, "timestamp": "2026-11-30T00:00:00+00:00",
        "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
        "mention_roles": [], "attachments": [], "embeds": [], "pinned": False,
        "type": 0 if message_.reference is None else 19,
    }  # fmt: skip
    if message_.reference is not None:
        data["message_reference"] = {
            "message_id": str(message_.reference.message_id),
            "channel_id": str(message_.channel.id),
        }
    return data
