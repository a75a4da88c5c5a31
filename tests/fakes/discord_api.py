"""A real HTTP and WebSocket server on loopback standing in for Discord, scripted by each test.

HTTP (under /api/v10): GET /users/@me answers the bot user, or 401 when `token_refused`; with
`quote_token` a hostile server's answer, the Authorization header quoted back in the user's name
(or the 401's message); with `hang` no answer until the server stops; GET /gateway the gateway URL;
GET /oauth2/applications/@me the application; PUT .../commands an empty list. The gateway
(/gateway) says HELLO, reads IDENTIFY, then closes with `close_code` (4014: a privileged intent
not enabled in the Developer Portal). Every HTTP request is recorded as "METHOD path".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.loopback import serve

BOT_ID = 999
API = "/api/v10"


def _user() -> dict[str, Any]:
    return {
        "id": str(BOT_ID), "username": "Echo", "global_name": "Echo", "discriminator": "0",
        "avatar": None, "bot": True, "flags": 0,
    }  # fmt: skip


def _application() -> dict[str, Any]:
    return {
        "id": str(BOT_ID), "name": "Echo", "description": "", "icon": None, "bot_public": True,
        "bot_require_code_grant": False, "owner": _user(), "verify_key": "k", "flags": 0,
    }  # fmt: skip


def _json(data: object, status: int = 200) -> web.Response:
    # discord.py parses a body as JSON only under exactly "application/json" (no charset).
    return web.Response(body=json.dumps(data).encode(), status=status,
                        content_type="application/json")  # fmt: skip


@dataclass
class FakeDiscord:
    url: str = ""
    token_refused: bool = False
    quote_token: bool = False
    hang: bool = False
    close_code: int = 4014
    requests: list[str] = field(default_factory=list)
    identified: int = 0

    @property
    def api_url(self) -> str:
        return self.url + API

    @property
    def gateway_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/gateway"

    async def _http(self, request: web.Request) -> web.StreamResponse:
        path = request.path.removeprefix(API)
        self.requests.append(f"{request.method} {path}")
        if path == "/users/@me":
            return await self._me(request.headers.get("Authorization", ""))
        if path == "/gateway":
            return _json({"url": self.gateway_url})
        if path == "/oauth2/applications/@me":
            return _json(_application())
        if path.endswith("/commands"):
            return _json([])
        return _json({"message": "Unknown", "code": 0}, status=404)

    async def _me(self, authorization: str) -> web.Response:
        if self.hang:
            await asyncio.Event().wait()  # cancelled when the server stops
        quoted = f" {authorization}" if self.quote_token else ""
        if self.token_refused:
            return _json({"message": f"401: Unauthorized{quoted}", "code": 0}, status=401)
        return _json(_user() | ({"username": f"Echo{quoted}"} if quoted else {}))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 45_000}, "s": None, "t": None})
        async for message in ws:
            if message.type is WSMsgType.TEXT and message.json().get("op") == 2:
                self.identified += 1
                await ws.close(code=self.close_code, message=b"Disallowed intent(s).")
        return ws


@asynccontextmanager
async def serve_fake_discord(port: int = 0) -> AsyncIterator[FakeDiscord]:
    """Serve a FakeDiscord on 127.0.0.1 (`port`, or any free one) until the block ends."""
    fake = FakeDiscord()
    app = web.Application()
    app.router.add_get("/gateway", fake._gateway)
    app.router.add_route("*", API + "/{tail:.*}", fake._http)
    async with serve(app, port) as fake.url:
        yield fake
