"""Real discord.py objects built from payload dicts, with the HTTP seams recorded.

The REST client (`client.http.request`) and the webhook adapter that interaction responses go
through are replaced by recorders: nothing leaves the process, and tests read what would have
been sent to Discord (content, flags, allowed_mentions, components).

Channel webhooks are kept as Discord keeps them, in the recorder (a bot started again with the
same recorder finds them): created (POST /channels/{id}/webhooks, the avatar's bytes recorded as
a file), listed (GET), edited (PATCH /webhooks/{id}), executed and their messages edited
(POST /webhooks/{id}/{token}, PATCH .../messages/{id}), each call recorded with its payload.
Threads opened from a message (POST /channels/{id}/messages/{id}/threads) are answered as Discord
answers them: a public thread with the message's id, owned by the bot, kept in `threads`.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import random
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
MANAGE_WEBHOOKS = 1 << 29
# View Channel and Send Messages: without them Discord grants nothing else in a channel.
VIEW_AND_SEND = (1 << 10) | (1 << 11)
# What opening a thread from a message and speaking in it take.
THREADS = (1 << 35) | (1 << 38)


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
    # The query string (a webhook post's thread_id), and the message Discord answered.
    params: dict[str, Any] = field(default_factory=dict)
    answer: dict[str, Any] | None = None
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
    # The channel webhooks Discord holds, by id.
    webhooks: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Answer webhook executes with this HTTP status (404: the webhook was deleted), and
    # webhook creations with this one (400: the channel holds 15 already).
    refuse_executes: int | None = None
    # ... only after this many posts went through.
    refuse_executes_after: int = 0
    refuse_creations: int | None = None
    # Random latency (up to 10 ms) on every webhook call, from this generator: calls that
    # overlap at Discord overlap here too.
    jitter: random.Random | None = None
    # Each webhook's avatar as it was last uploaded (None: Discord's default one).
    avatars: dict[int, bytes | None] = field(default_factory=dict)
    # Statuses to answer the next message edits (PATCH) with, in order; 0 accepts one.
    refuse_edits: list[int] = field(default_factory=list)
    # The clock `Sent.at` is read from.
    clock: Callable[[], float] = lambda: 0.0
    # The threads opened from messages, by id (the message's), as Discord answered them.
    threads: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Answer thread openings with this HTTP status (403: the permission was taken).
    refuse_threads: int | None = None
    # People whose DMs are closed to the bot (a message there: 403, code 50007), and the DM
    # channels opened so far, by channel id: whose they are.
    closed_dms: set[int] = field(default_factory=set)
    dms: dict[int, int] = field(default_factory=dict)

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

    def webhook_posts(self) -> list[Sent]:
        """Messages posted through the channel webhooks (not interaction followups)."""
        return [s for s in self.sent if s.method == "POST" and _webhook_id(s.path) in self.webhooks]

    def webhook_creations(self) -> list[Sent]:
        return [s for s in self.sent if s.method == "POST" and s.path.endswith("/webhooks")]

    def webhook_edits(self) -> list[Sent]:
        """Edits of a webhook's messages (not of the webhook itself)."""
        return [s for s in self.sent if s.method == "PATCH" and "/messages/" in s.path
                and _webhook_id(s.path) in self.webhooks]  # fmt: skip

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
        try:
            path = route.path.format_map(route.__dict__)
        except KeyError:  # a parameter Route does not keep (a message id): the whole URL's
            path = route.url.removeprefix(route.BASE)
        self.sent.append(Sent(route.method, path, payload, at=self.clock()))
        if self.refuse_typing and route.path.endswith("/typing"):
            raise discord.DiscordServerError(_Response(503), "typing refused")  # type: ignore[arg-type]
        if route.path == "/channels/{channel_id}/webhooks":
            await self.lag()
            return self._channel_webhooks(route, payload)
        if route.method == "POST" and route.path.endswith("/messages/{message_id}/threads"):
            return self._open_thread(int(route.channel_id or 0), route.url, payload)
        if route.path == "/users/@me/channels":
            channel_id = next(_ids)
            self.dms[channel_id] = int(payload["recipient_id"])
            return {"id": str(channel_id), "type": 1, "last_message_id": None,
                    "recipients": [user_payload(self.dms[channel_id])]}  # fmt: skip
        if route.method == "POST" and self.dms.get(int(route.channel_id or 0)) in self.closed_dms:
            refusal = {"code": 50007, "message": "Cannot send messages to this user"}
            self.sent[-1].refused = 403
            raise discord.Forbidden(_Response(403), refusal)  # type: ignore[arg-type]
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
                int(route.channel_id), payload.get("content", ""), int(route.url.rpartition("/")[2])
            )
        if route.path == "/oauth2/applications/@me":
            return _application(self.owner_id)
        return None

    def _open_thread(self, channel: int, url: str, payload: dict[str, Any]) -> Any:
        if self.refuse_threads is not None:
            refusal = {"code": 50013, "message": "Missing Permissions"}
            raise discord.Forbidden(_Response(self.refuse_threads), refusal)  # type: ignore[arg-type]
        message_id = int(url.rstrip("/").split("/")[-2])
        made = thread_payload(message_id, channel, owner_id=BOT_ID, name=payload["name"])
        self.threads[message_id] = made
        return made

    async def lag(self) -> None:
        if self.jitter is not None:
            await asyncio.sleep(self.jitter.uniform(0, 0.01))

    def _channel_webhooks(self, route: Route, payload: dict[str, Any]) -> Any:
        channel = int(route.channel_id or 0)
        if route.method == "GET":
            return [w for w in self.webhooks.values() if w["channel_id"] == str(channel)]
        if self.refuse_creations is not None:
            refusal = {"code": 30007, "message": "Maximum number of webhooks reached (15)"}
            raise discord.HTTPException(_Response(self.refuse_creations), refusal)  # type: ignore[arg-type]
        webhook_id = next(_ids)
        self.sent[-1].files = _avatar_file(payload)
        self.avatars[webhook_id] = self.sent[-1].files.get("avatar")
        self.webhooks[webhook_id] = {
            "id": str(webhook_id), "type": 1, "channel_id": str(channel),
            "guild_id": str(GUILD_ID), "name": payload["name"],
            "avatar": f"a{webhook_id}" if payload.get("avatar") else None,
            "token": f"token-{webhook_id}", "application_id": str(BOT_ID),
            "user": user_payload(BOT_ID, "Echo", bot=True),
        }  # fmt: skip
        return self.webhooks[webhook_id]

    def webhook_call(self, route: Route, payload: dict[str, Any], params: dict[str, Any]) -> Any:
        """A call on one of the channel webhooks, as Discord answers it."""
        webhook_id = int(route.webhook_id or 0)
        hook = self.webhooks[webhook_id]
        if route.method == "PATCH" and "/messages/" not in route.path:  # the webhook itself
            self.sent[-1].files = _avatar_file(payload)
            hook["name"] = payload.get("name", hook["name"])
            if "avatar" in payload:
                self.avatars[webhook_id] = self.sent[-1].files.get("avatar")
                hook["avatar"] = f"a{next(_ids)}" if payload["avatar"] else None
            return hook
        username = payload.get("username")
        if route.method == "POST" and isinstance(username, str) and not _username_taken(username):
            refusal = {
                "code": 50035,
                "message": "Invalid Form Body",
                "errors": {"username": {"_errors": [{"code": "USERNAME_INVALID"}]}},
            }
            raise discord.HTTPException(_Response(400), refusal)  # type: ignore[arg-type]
        posted = len([s for s in self.sent[:-1] if s.answer is not None and s.method == "POST"])
        if (route.method == "POST" and self.refuse_executes is not None
                and posted >= self.refuse_executes_after):  # fmt: skip
            refusal = {"code": 10015, "message": "Unknown Webhook"}
            raise discord.HTTPException(_Response(self.refuse_executes), refusal)  # type: ignore[arg-type]
        channel = int(params.get("thread_id") or hook["channel_id"])
        data = _message_payload(channel, payload.get("content", ""))
        if route.method == "PATCH":
            data["id"] = route.url.rsplit("/", 1)[1]
        data["webhook_id"] = hook["id"]
        data["application_id"] = hook["application_id"]  # a webhook a bot made: its application
        data["author"] = {
            "id": hook["id"], "username": payload.get("username", hook["name"]),
            "avatar": hook["avatar"], "discriminator": "0000", "bot": True,
        }  # fmt: skip
        self.sent[-1].answer = data
        return data


def _username_taken(name: str) -> bool:
    """Whether Discord takes this as a webhook message's username (its documented rules)."""
    folded = name.casefold()
    refused = ("discord", "clyde", "@", "#", ":", "```")
    return (1 <= len(name) <= 80 and not any(word in folded for word in refused)
            and folded not in ("everyone", "here"))  # fmt: skip


def _webhook_id(path: str) -> int | None:
    """The webhook a path /webhooks/{id}/... names."""
    parts = path.split("/")
    if len(parts) > 2 and parts[1] == "webhooks" and parts[2].isdigit():
        return int(parts[2])
    return None


def _avatar_file(payload: dict[str, Any]) -> dict[str, bytes]:
    """A webhook's avatar as Discord receives it (a data URI), as the file it was."""
    avatar = payload.get("avatar")
    if not avatar:
        return {}
    return {"avatar": base64.b64decode(avatar.partition("base64,")[2])}


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
        if int(route.webhook_id or 0) in self.recorder.webhooks:
            path = route.url.removeprefix(route.BASE)
            params = kwargs.get("params") or {}
            await self.recorder.lag()
            self.recorder.sent.append(Sent(route.method, path, payload or {}, files, params))
            return self.recorder.webhook_call(route, payload or {}, params)
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


def allow_webhooks(client: discord.Client, *, guild_id: int = GUILD_ID) -> None:
    """Give the bot Manage Webhooks in the guild (its member, and everyone's permissions)."""
    allow(client, MANAGE_WEBHOOKS | VIEW_AND_SEND, guild_id=guild_id)


def allow(client: discord.Client, permissions: int, *, guild_id: int = GUILD_ID) -> None:
    """Give the bot these permissions in the guild (its member, and everyone's), and only these."""
    g = guild(client, guild_id=guild_id)
    g.default_role._permissions = permissions
    if g.me is None:
        member = discord.Member(
            data={"user": user_payload(BOT_ID, "Echo", bot=True), "roles": [],
                  "joined_at": "2026-01-01T00:00:00+00:00", "deaf": False, "mute": False,
                  "flags": 0},  # type: ignore[typeddict-item]
            guild=g, state=client._connection,
        )  # fmt: skip
        g._add_member(member)


def thread(
    client: discord.Client,
    thread_id: int,
    parent_id: int,
    *,
    owner_id: int = 1,
    nsfw: bool = False,
) -> discord.Thread:
    """A public thread under the text channel `parent_id` (`nsfw`: age-restricted), opened by
    `owner_id`, as the gateway brings it (THREAD_CREATE: kept in the guild's cache)."""
    parent = text_channel(client, parent_id, nsfw=nsfw)
    data = thread_payload(thread_id, parent_id, owner_id=owner_id, name=f"t{thread_id}")
    made = discord.Thread(guild=parent.guild, state=client._connection, data=data)  # type: ignore[arg-type]
    parent.guild._add_thread(made)
    return made


def thread_payload(
    thread_id: int, parent_id: int, *, owner_id: int, name: str, guild_id: int = GUILD_ID
) -> dict[str, Any]:
    return {
        "id": str(thread_id), "guild_id": str(guild_id), "parent_id": str(parent_id),
        "owner_id": str(owner_id), "name": name, "type": 11, "last_message_id": None,
        "rate_limit_per_user": 0, "message_count": 0, "member_count": 1,
        "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                            "archive_timestamp": "2026-11-30T00:00:00+00:00", "locked": False},
    }  # fmt: skip


def text_channel(
    client: discord.Client, channel_id: int, *, guild_id: int = GUILD_ID, nsfw: bool = False
) -> discord.TextChannel:
    """A text channel; `nsfw`: one Discord marks age-restricted."""
    g = guild(client, guild_id=guild_id)
    channel = discord.TextChannel(
        state=client._connection, guild=g,
        data={"id": str(channel_id), "type": 0, "name": f"c{channel_id}", "position": 0,
              "guild_id": str(guild_id), "permission_overwrites": [], "nsfw": nsfw,
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
    """A message someone sent in `channel`."""
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
    locale: str = "en-US",
    group_dm: bool = False,
) -> discord.Interaction[Any]:
    """A chat-input (or autocomplete) interaction for the command `name`, as Discord sends it,
    from a person whose Discord is set to `locale` ("fr": French); `group_dm`: in a group DM
    the bot is not in, through the app the person installed on their account."""
    data: dict[str, Any] = {
        "id": str(next(_ids)), "application_id": str(BOT_ID), "type": 4 if autocomplete else 2,
        "token": "token", "version": 1, "channel_id": str(channel_id), "locale": locale,
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
    elif group_dm:
        people = [user_payload(user_id), user_payload(user_id + 1)]
        data["channel"] = {"id": str(channel_id), "type": 3, "name": None, "icon": None,
                           "owner_id": str(user_id), "last_message_id": None,
                           "recipients": people}  # fmt: skip
        data["user"] = user_payload(user_id)
        data["context"] = 2
        data["authorizing_integration_owners"] = {"1": str(user_id)}
    else:
        data["channel"] = {"id": str(channel_id), "type": 1, "recipients": [user_payload(user_id)]}
        data["user"] = user_payload(user_id)
    return discord.Interaction(data=data, state=client._connection)  # type: ignore[arg-type]


def component(
    client: discord.Client, *, user_id: int, channel_id: int, custom_id: str
) -> discord.Interaction[Any]:
    """A button press, as Discord sends it."""
    return discord.Interaction(
        data=component_payload(user_id=user_id, channel_id=channel_id, custom_id=custom_id),  # type: ignore[arg-type]
        state=client._connection,
    )


def component_payload(
    *,
    user_id: int,
    channel_id: int,
    custom_id: str,
    message: dict[str, Any] | None = None,
    permissions: int = 0,
) -> dict[str, Any]:
    """The gateway payload of a button press on `message` (a sent message's payload, with its
    components), by someone with these channel `permissions`."""
    data: dict[str, Any] = {
        "id": str(next(_ids)), "application_id": str(BOT_ID), "type": 3, "token": "token",
        "version": 1, "channel_id": str(channel_id), "locale": "en-US", "app_permissions": "0",
        "entitlements": [], "authorizing_integration_owners": {}, "guild_id": str(GUILD_ID),
        "attachment_size_limit": 8_388_608,
        "channel": {"id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID), "name": "c",
                    "position": 0, "permission_overwrites": [], "nsfw": False},
        "member": {"user": user_payload(user_id), "roles": [],
                   "joined_at": "2026-01-01T00:00:00+00:00",
                   "deaf": False, "mute": False, "permissions": str(permissions), "flags": 0},
        "data": {"custom_id": custom_id, "component_type": 2},
        "message": message or _message_payload(channel_id, ""),
    }  # fmt: skip
    return data


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


def received(
    client: discord.Client, channel: discord.abc.Messageable, sent: Sent
) -> discord.Message:
    """A message a webhook posted, as the gateway brings it back to the bot."""
    assert sent.answer is not None
    return discord.Message(state=client._connection, channel=channel, data=sent.answer)  # type: ignore[arg-type]


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
    if message_.webhook_id is not None:
        data["webhook_id"] = str(message_.webhook_id)
    if message_.reference is not None:
        data["message_reference"] = {
            "message_id": str(message_.reference.message_id),
            "channel_id": str(message_.channel.id),
        }
    return data
