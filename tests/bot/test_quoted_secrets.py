"""A server that quotes the API key back in its errors: the key reaches neither the log (echo.log),
nor /stats, nor an answer in Discord or the terminal, nor the outbox row in the database."""

from __future__ import annotations

import asyncio
import io
import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot import logs
from bot.config import Settings
from bot.discord.app import EchoBot, Sync
from bot.doctor import doctor
from bot.runtime import open_runtime
from memory.backends.redact import Secrets
from tests.bot import discord_fakes as fakes
from tests.bot.cli_runner import echo_bot
from tests.bot.discord.test_discord import CHANNEL, _say
from tests.fakes.quoting import QUOTES, REFUSE_MARK, serve_quoting

# Keys as servers are given them; each one is refused and quoted back.
API_KEY = "sk-proj-Zq9vT3stK3y0nly4Th1sT3st"
DISCORD_TOKEN = "MTA5.Zq9-discord-token-for-tests.abcdef"
OWNER = 1011
CHANNELS = (CHANNEL, 51, 52)


def _leaks(text: str) -> bool:
    # The whole key, or a long piece of it (a key cut in two by a shortened message).
    return API_KEY in text or API_KEY[:16] in text or API_KEY[-16:] in text


@asynccontextmanager
async def _bot(url: str, database: Path | str, tmp_path: Path) -> AsyncIterator[EchoBot]:
    if isinstance(database, str):
        storage: dict[str, Any] = {"path": tmp_path / "echo.sqlite3", "url": database}
    else:
        storage = {"path": database}
    settings = Settings(
        llm={"backend": "openai", "base_url": url, "api_key": API_KEY},  # type: ignore[arg-type]
        storage=storage,  # type: ignore[arg-type]
        discord={"channels": list(CHANNELS), "token": DISCORD_TOKEN},  # type: ignore[arg-type]
        # Reflected right after each reply: the outbox rows are read once they are done.
        conversation={"settle_seconds": 0},  # type: ignore[arg-type]
    )
    async with open_runtime(settings) as runtime:
        echo = EchoBot(runtime, sync=Sync.NEVER, background=False)
        recorder = fakes.Recorder()
        recorder.owner_id = OWNER
        await fakes.install(echo, recorder)
        await echo.setup_hook()
        echo.recorder = recorder  # type: ignore[attr-defined]
        yield echo


@pytest.mark.parametrize("quote", sorted(QUOTES))
async def test_a_quoted_key_reaches_no_log_stats_answer_or_outbox_row(
    quote: str, database: Path | str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with (
        serve_quoting(QUOTES[quote], {"reflection", "embed"}) as server,
        _bot(server.url, database, tmp_path) as echo,
    ):
        # Many people in several channels at once, the server answering at random speeds.
        channels = [fakes.text_channel(echo, c) for c in CHANNELS]
        people = random.sample(range(100, 10_000), 12)
        await asyncio.gather(*(
            _say(echo, random.choice(channels), who, f"Bonjour, je suis {who}")
            for who in people
        ))  # fmt: skip
        # The reflections the turns started, each refused quoting the key.
        conversation = echo.get_cog("Conversation")
        await asyncio.gather(*getattr(conversation, "_background", ()))
        runtime = echo.runtime
        assert await runtime.worker.run_due() == 0
        await runtime.indexer.run_once()  # refused too: its error is what /stats shows
        # A library that logs the key it was given: the log's handlers drop it all the same.
        logging.getLogger("httpcore").warning("sent headers: %s", {"auth": API_KEY})
        await echo.tree._call(fakes.interaction(echo, "stats", user_id=OWNER, channel_id=CHANNEL))  # type: ignore[arg-type]
        stats = echo.recorder.contents()[-1]  # type: ignore[attr-defined]
        rows = await runtime.store.fetchall("SELECT last_error FROM outbox")
        # A row an older version stored with the key in it: the answer that shows it drops it.
        await runtime.store.transact(lambda tx: tx.execute(
            "UPDATE outbox SET last_error = ? WHERE id = (SELECT max(id) FROM outbox)",
            (f"BackendRefused: HTTP 401: Incorrect API key provided: {API_KEY}",),
        ))  # fmt: skip
        await echo.tree._call(fakes.interaction(echo, "stats", user_id=OWNER, channel_id=CHANNEL))  # type: ignore[arg-type]
        old = echo.recorder.contents()[-1]  # type: ignore[attr-defined]
    assert server.keys_seen == {API_KEY}
    assert len(rows) == len(people) and all(row[0] for row in rows)
    stored = [str(row[0]) for row in rows]
    # The server's own words are kept, the key is not.
    assert not any(_leaks(text) for text in stored), stored[0]
    assert all("***" in text for text in stored), stored[0]
    assert "Last reflection error:" in stats and "Indexer:" in stats
    assert "***" in stats and not _leaks(stats), stats
    assert "Incorrect API key provided: ***" in old and not _leaks(old), old
    assert "sent headers" in caplog.text
    assert not _leaks(caplog.text) and DISCORD_TOKEN not in caplog.text


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbackend = "openai"\nbase_url = "{url}"\napi_key = "{API_KEY}"\n'
        '[storage]\npath = "echo.sqlite3"\n[character]\nname = "Écho"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("quote", ["openai", "litellm"])
async def test_the_terminal_chat_shows_and_logs_no_quoted_key(tmp_path: Path, quote: str) -> None:
    async with serve_quoting(QUOTES[quote], {"reflection", "embed"}) as server:
        lines = ["Bonjour", f"{REFUSE_MARK} encore", "/stats"]
        code, out, err = await echo_bot(
            "--config", str(_config(tmp_path, server.url)), "chat", "--user", "Marie",
            stdin="\n".join(lines).encode(),
        )  # fmt: skip
    assert code == 0, err
    shown = out + err
    log = (tmp_path / "echo.log").read_text(encoding="utf-8")
    assert "[Écho cannot answer right now:" in shown  # the refused turn, said with its cause
    assert "Last reflection error:" in shown
    assert "***" in shown and not _leaks(shown), shown
    assert "reflection of exchange" in log and "***" in log
    assert not _leaks(log), log


async def test_doctor_prints_no_quoted_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with serve_quoting(QUOTES["litellm"], {"reflection", "embed"}) as server:
        settings = Settings(
            llm={"backend": "openai", "base_url": server.url, "api_key": API_KEY},  # type: ignore[arg-type]
            storage={"path": tmp_path / "echo.sqlite3"},  # type: ignore[arg-type]
        )
        assert await doctor(settings, "config.toml") == 1
    printed = capsys.readouterr().out
    assert "structured output at" in printed and "Received API Key = ***" in printed
    assert not _leaks(printed), printed


async def test_the_log_drops_a_secret_from_messages_arguments_and_tracebacks() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    root.addHandler(handler)
    log = logging.getLogger("some.library")
    try:
        async with logs.redacting(Secrets.of(API_KEY, DISCORD_TOKEN)):
            log.warning("key %s, token %s", API_KEY, DISCORD_TOKEN)
            log.warning("token %(t)s", {"t": DISCORD_TOKEN})
            log.warning("sent %r", {"Authorization": f"Bearer {API_KEY}"})
            log.warning("badly formed %d", DISCORD_TOKEN)  # arguments that do not fit
            try:
                raise KeyError(f"no such key {API_KEY}") from OSError(DISCORD_TOKEN)
            except KeyError:
                log.exception("lookup failed")
        log.warning("after: %s", "the filter is gone with the runtime")
    finally:
        root.removeHandler(handler)
    written = out.getvalue()
    assert "lookup failed" in written and "Traceback" in written and "OSError" in written
    assert "after: the filter is gone" in written
    assert API_KEY not in written and DISCORD_TOKEN not in written, written
