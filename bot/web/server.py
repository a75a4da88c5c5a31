"""The operator's page server: routes, the token guard, security headers, start and stop.

Access. Every request needs the token: `Authorization: Bearer <token>`, or `?token=<token>` once
(the link printed at start): the answer then sets an HttpOnly, SameSite=Strict cookie holding a
value derived from the token (not the token) and redirects to the same page without the token,
so it leaves the address bar and the history. No token or a wrong one: 401, and nothing else is
said. Comparisons are constant-time.

Read-only: only GET (and HEAD) routes exist, and the handlers only read (memory.manage.dashboard).
Every answer carries a CSP without script (style only from /static/style.css), no framing, no
MIME sniffing, no referrer (a token in a URL never leaves in a Referer header), no caching. The
access log is off: it would write the `?token=` URLs.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import hmac
import ipaddress
import logging
import os
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from bot.config import MIN_WEB_TOKEN, ConfigError, Settings, WebSettings
from bot.web import pages
from bot.web.html import Html
from bot.web.pages import BadParameter, View
from bot.web.style import STYLESHEET
from memory import IndexerStatus, Store, open_store

log = logging.getLogger(__name__)

COOKIE = "echo_web"
TOKEN_FILE = "web_token"
VIEW = web.AppKey("view", View)
SECRET = web.AppKey("secret", str)

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
}

Page = Callable[[View, dict[str, str]], Awaitable[Html]]


def session_value(token: str) -> str:
    """What the cookie holds: derived from the token, so the cookie is not the token."""
    return hmac.new(token.encode(), b"echo-web-session", hashlib.sha256).hexdigest()


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


@web.middleware
async def _guard(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    token = request.app[SECRET]
    given = request.query.get("token")
    if given is not None:
        if not _same(given, token):
            return _unauthorised()
        rest = {k: v for k, v in request.query.items() if k != "token"}
        target = same_origin(request.path) + (f"?{urlencode(rest)}" if rest else "")
        moved = web.Response(status=303, headers={"Location": target})
        moved.set_cookie(COOKIE, session_value(token), httponly=True, samesite="Strict", path="/")
        return moved
    bearer = request.headers.get("Authorization", "")
    cookie = request.cookies.get(COOKIE, "")
    if (bearer.startswith("Bearer ") and _same(bearer[7:].strip(), token)) or (
        cookie and _same(cookie, session_value(token))
    ):
        return await handler(request)
    return _unauthorised()


# What stays as written in a path sent back: RFC 3986's pchar without "%" (escaped again).
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def same_origin(path: str) -> str:
    """The (decoded) request path as a Location on this site: escaped again, with one leading
    "/". A browser reads "//host", "/\\host" (a backslash is a slash to it) or "/<tab>/host"
    (it drops tabs and newlines) as another site."""
    return "/" + quote(path, safe=_PATH_SAFE, errors="surrogatepass").lstrip("/")


def _unauthorised() -> web.Response:
    return web.Response(
        status=401,
        text="401: open the link echo-bot printed (…/?token=…) or send "
        "Authorization: Bearer <token>.\n",
        headers={"WWW-Authenticate": 'Bearer realm="echo"'},
    )


async def _secure(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(HEADERS)


def _render(page: Page) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            body = await page(request.app[VIEW], dict(request.query))
        except BadParameter as exc:
            return web.Response(status=400, text=f"400: {exc}\n")
        return web.Response(text=body, content_type="text/html", charset="utf-8")

    return handle


def _one(
    page: Callable[[View, dict[str, str], int], Awaitable[Html]], name: str
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A page about one thing whose id is in the path (a positive 64-bit SQLite integer)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        number = int(request.match_info[name])
        if not 0 < abs(number) < 2**63:
            raise web.HTTPNotFound()

        async def one(view: View, query: dict[str, str]) -> Html:
            return await page(view, query, number)

        return await _render(one)(request)

    return handle


def _of_person(
    page: Callable[[View, dict[str, str], int, int], Awaitable[Html]],
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A page about one of a person's things: both ids in the path, as `_one` checks them."""

    async def handle(request: web.Request) -> web.StreamResponse:
        user_id, thing = int(request.match_info["user_id"]), int(request.match_info["thing"])
        if not (0 < abs(user_id) < 2**63 and 0 < thing < 2**63):
            raise web.HTTPNotFound()

        async def one(view: View, query: dict[str, str]) -> Html:
            return await page(view, query, user_id, thing)

        return await _render(one)(request)

    return handle


async def _style(request: web.Request) -> web.StreamResponse:
    return web.Response(text=STYLESHEET, content_type="text/css", charset="utf-8")


def build_app(view: View, token: str) -> web.Application:
    """The page's application: every route reads, none writes."""
    app = web.Application(middlewares=[_guard])
    app[VIEW] = view
    app[SECRET] = token
    app.on_response_prepare.append(_secure)
    app.router.add_get("/", _render(pages.overview))
    app.router.add_get("/health", _render(pages.health))
    app.router.add_get("/people", _render(pages.people))
    # A person as a character other than the home one knows them: a negative id.
    app.router.add_get(r"/people/{user_id:-?\d{1,19}}", _one(pages.person, "user_id"))
    app.router.add_get(
        r"/people/{user_id:-?\d{1,19}}/memories/{thing:\d{1,19}}", _of_person(pages.memory)
    )
    app.router.add_get("/turns", _render(pages.turns))
    app.router.add_get("/stories", _render(pages.stories))
    app.router.add_get(r"/stories/{story_id:-?\d{1,19}}", _one(pages.story, "story_id"))
    app.router.add_get("/static/style.css", _style)
    return app


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_token(settings: WebSettings, data_dir: Path) -> tuple[str, bool]:
    """The page's token and whether it was just generated. Configured ([web] token, the secret
    file web__token, ECHO_WEB__TOKEN) wins; else, on a loopback address only, the one kept in
    `data_dir`/web_token, generated (readable by the owner only) when absent."""
    if settings.token is not None:
        return settings.token.get_secret_value(), False
    if not is_loopback(settings.host):
        raise ConfigError(
            f"web.host {settings.host} is not a loopback address: set [web] token (or the "
            "secret file web__token) to serve the operator's page there"
        )
    path = data_dir / TOKEN_FILE
    with contextlib.suppress(FileNotFoundError):
        kept = path.read_text(encoding="ascii").strip()
        if len(kept) >= MIN_WEB_TOKEN:
            return kept, False
        path.unlink()  # an empty or cut file: a new token replaces it
    token = secrets.token_urlsafe(32)
    data_dir.mkdir(parents=True, exist_ok=True)
    # Written whole under a name of its own, then linked in place: several processes sharing
    # the folder (bot.shards) agree on the first token linked, never read a half-written
    # one.
    partial = data_dir / f"{TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(token + "\n")
        os.link(partial, path)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip(), False
    finally:
        partial.unlink()
    return token, True


class _ServerLog(logging.LoggerAdapter[logging.Logger]):
    """aiohttp's server log, where a client's malformed request (a request line too long, a
    bad header: answered 400) is one line without its traceback; a handler's error keeps it."""

    def __init__(self) -> None:
        super().__init__(logging.getLogger("aiohttp.server"), {})

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        error = kwargs.get("exc_info")
        if isinstance(error, HttpProcessingError):
            self.logger.debug("malformed request refused (%s %s)", error.code, type(error).__name__)
            return
        super().exception(msg, *args, **kwargs)


class PageUnavailable(ConfigError):
    """The page cannot listen where [web] host and port say (the port taken, most often)."""


def cannot_listen(settings: WebSettings, exc: OSError) -> str:
    """Why the page cannot listen, in one line naming the setting to change."""
    where = f"{settings.host}:{settings.port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"[web] port {settings.port} is taken: another program listens on {where}; "
            "set [web] port to a free one"
        )
    return (
        f"[web] host and port: cannot listen on {where} ({exc.strerror or exc}); set [web] "
        "host to an address of this machine and [web] port to a free one above 1023"
    )


@contextlib.asynccontextmanager
async def serving(
    settings: Settings,
    store: Store,
    *,
    indexer: Callable[[], IndexerStatus | None] = lambda: None,
) -> AsyncIterator[str]:
    """Serve the page in the running loop for the block; yield its address."""
    web_settings = settings.web
    token, generated = resolve_token(web_settings, settings.storage.path.parent)
    view = View(store, indexer=indexer, memories_served=settings.privacy.memories_served)
    runner = web.AppRunner(build_app(view, token), access_log=None, logger=_ServerLog())
    await runner.setup()
    host = f"[{web_settings.host}]" if ":" in web_settings.host else web_settings.host
    address = f"http://{host}:{web_settings.port}/"
    try:
        try:
            await web.TCPSite(runner, web_settings.host, web_settings.port).start()
        except OSError as exc:
            raise PageUnavailable(cannot_listen(web_settings, exc)) from None
        if generated:
            # Printed, not logged: a log may be kept or shipped; the terminal is the owner's.
            print(
                f"Operator's page: {address}?token={token} (this token is kept in "
                f"{settings.storage.path.parent / TOKEN_FILE} and printed only this once)",
                file=sys.stderr,
            )
        else:
            # Said on screen too: inside `chat` the log goes to a file, and the token is not
            # printed again, so say where it is.
            kept = settings.storage.path.parent / TOKEN_FILE
            where = (
                "your [web] token (or ECHO_WEB__TOKEN)"
                if web_settings.token is not None
                else f"the token kept in {kept}"
            )
            print(
                f"Operator's page: {address} — open {address}?token=… with {where}", file=sys.stderr
            )
            log.info("operator's page at %s", address)
        yield address
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def if_enabled(
    settings: Settings,
    store: Store,
    indexer: Callable[[], IndexerStatus | None],
    *,
    here: bool = True,
) -> AsyncIterator[None]:
    """The page beside the bot or the terminal chat (`here`) when [web] enabled; else nothing.
    A page that cannot listen (its port taken) is said once on stderr, and the bot or the chat
    runs without it: the people talking to the character need it, not the page."""
    if not (here and settings.web.enabled):
        yield
        return
    async with contextlib.AsyncExitStack() as stack:
        try:
            await stack.enter_async_context(serving(settings, store, indexer=indexer))
        except PageUnavailable as exc:
            print(f"echo-bot: {exc}; running without the operator's page", file=sys.stderr)
        yield


async def serve_alone(settings: Settings) -> int:
    """`echo-bot web`: the page on its own against the database, until interrupted."""
    opened = open_store(settings.storage.database, password=settings.storage.database_password())
    async with await opened as store, serving(settings, store):
        await asyncio.Event().wait()
    return 0
