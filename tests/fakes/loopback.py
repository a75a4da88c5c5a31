"""Serve an aiohttp application on 127.0.0.1 for the length of a block: the fake servers'
shared plumbing (a real HTTP server in the running loop, nothing leaves the machine)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web


@asynccontextmanager
async def serve(app: web.Application, port: int = 0) -> AsyncIterator[str]:
    """Serve `app` on 127.0.0.1 (`port`, or any free one); yield its base URL."""
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{bound}"
    finally:
        await runner.cleanup()
