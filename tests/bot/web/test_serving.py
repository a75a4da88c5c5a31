"""Serving the operator's page: the token (configured, kept, generated and printed once), the
refusal to bind elsewhere than loopback without one, `echo-bot web`, the page beside the bot; the
markup and chart helpers; a degraded turn's reason on the overview."""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import re
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from bot import cli
from bot.config import ConfigError, Settings, WebSettings
from bot.web import charts
from bot.web.html import el, esc
from bot.web.server import TOKEN_FILE, if_enabled, resolve_token, serving
from memory import Incoming
from memory.store import Store
from tests.bot.terminal.test_e2e import _chat as chat
from tests.bot.terminal.test_e2e import _config as chat_config
from tests.fakes.ollama import FakeOllama
from tests.web_script import engine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(tmp_path: Path, **web: object) -> Settings:
    return Settings(storage={"path": tmp_path / "echo.sqlite3"}, web=web)  # type: ignore[arg-type]


def test_a_token_is_generated_once_kept_private_and_reused(tmp_path: Path) -> None:
    first, generated = resolve_token(WebSettings(), tmp_path)
    assert generated and len(first) >= 32
    path = tmp_path / TOKEN_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert resolve_token(WebSettings(), tmp_path) == (first, False)
    configured = WebSettings(token=SecretStr("c" * 20))
    assert resolve_token(configured, tmp_path) == ("c" * 20, False)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "::", "example.org"])
def test_a_non_loopback_address_without_a_token_is_refused_in_one_line(
    tmp_path: Path, host: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        resolve_token(WebSettings(host=host), tmp_path)
    assert "\n" not in str(refused.value) and "[web] token" in str(refused.value)
    assert not (tmp_path / TOKEN_FILE).exists()
    token = SecretStr("t" * 16)
    assert resolve_token(WebSettings(host=host, token=token), tmp_path) == ("t" * 16, False)


def test_a_short_token_is_refused_without_being_shown(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[web]\ntoken = "short-secret"\n', encoding="utf-8")
    assert cli.main(["--config", str(config), "check-config"]) == 2


def test_echo_bot_web_refuses_a_public_address_without_a_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[web]\nhost = "0.0.0.0"\n', encoding="utf-8")
    assert cli.main(["--config", str(config), "web"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a loopback address" in err


async def test_the_page_is_served_on_loopback_and_the_link_is_printed_once(
    tmp_path: Path, store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _settings(tmp_path, port=_free_port())
    async with serving(settings, store) as address, httpx.AsyncClient() as client:
        printed = capsys.readouterr().err
        token = re.search(r"\?token=(\S+)", printed)
        assert token is not None
        assert (await client.get(address)).status_code == 401
        opened = await client.get(f"{address}?token={token[1]}", follow_redirects=True)
        assert opened.status_code == 200 and "Overview" in opened.text
        assert str(opened.url) == address  # the token left the address bar
    # A second start prints the address again, and where the token is, never the token.
    async with serving(settings, store) as again:
        err = capsys.readouterr().err
        assert token[1] not in err
        kept = tmp_path / TOKEN_FILE
        assert err.splitlines() == [
            f"Operator's page: {again} — open {again}?token=… with the token kept in {kept}"
        ]
    configured = _settings(tmp_path, port=_free_port(), token=SecretStr("s" * 24))
    async with serving(configured, store) as address:
        err = capsys.readouterr().err
        assert "s" * 24 not in err and "with your [web] token (or ECHO_WEB__TOKEN)" in err


async def _raw(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


async def test_a_malformed_request_is_refused_with_at_most_one_log_line(
    tmp_path: Path, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    port = _free_port()
    async with serving(_settings(tmp_path, port=port), store):
        caplog.clear()
        answers = await asyncio.gather(
            _raw(port, b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
            _raw(port, b"GET / HTTP/1.1\r\nX-Long: " + b"b" * 20_000 + b"\r\n\r\n"),
        )
        logged = [r for r in caplog.records if r.name.startswith("aiohttp")]
    assert all(a.split(b" ", 2)[1] == b"400" for a in answers), [a[:40] for a in answers]
    assert all(r.exc_info is None and r.exc_text is None for r in logged)
    assert all("\n" not in r.getMessage() for r in logged)
    assert len(logged) <= len(answers)


async def test_the_page_runs_beside_the_bot_only_when_enabled(tmp_path: Path, store: Store) -> None:
    port = _free_port()
    async with httpx.AsyncClient() as client:
        async with if_enabled(_settings(tmp_path, port=port), store, lambda: None):
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/")
        on = _settings(tmp_path, port=port, enabled=True)
        async with if_enabled(on, store, lambda: None, here=False):
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/")
        async with if_enabled(on, store, lambda: None):
            assert (await client.get(f"http://127.0.0.1:{port}/")).status_code == 401


# The default ports of the LLM servers people run: llama.cpp, vLLM, LM Studio, Ollama,
# text-generation-webui, KoboldCpp.
LLM_SERVER_PORTS = {8080, 8000, 1234, 11434, 5000, 7860, 5001}


def test_the_page_does_not_default_to_an_llm_servers_port() -> None:
    assert WebSettings().port == 8765
    assert WebSettings().port not in LLM_SERVER_PORTS


@contextlib.contextmanager
def _taken() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


async def test_a_port_in_use_is_said_in_one_line_naming_the_setting(
    tmp_path: Path, store: Store
) -> None:
    with _taken() as port:
        settings = _settings(tmp_path, port=port)
        with pytest.raises(ConfigError) as refused:
            async with serving(settings, store):
                pass
    assert str(refused.value) == (
        f"[web] port {port} is taken: another program listens on 127.0.0.1:{port}; "
        "set [web] port to a free one"
    )


def test_echo_bot_web_on_a_taken_port_says_so_in_one_line_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    with _taken() as port:
        config.write_text(f'[storage]\npath = "echo.sqlite3"\n[web]\nport = {port}\n')
        assert cli.main(["--config", str(config), "web"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"echo-bot: {config}: [web] port {port} is taken: another program listens on "
        f"127.0.0.1:{port}; set [web] port to a free one"
    ]


async def test_the_chat_runs_without_the_page_when_its_port_is_taken(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    config = chat_config(tmp_path, ollama.url)
    with _taken() as port:
        with config.open("a", encoding="utf-8") as more:
            more.write(f"[web]\nenabled = true\nport = {port}\n")
        out, err = await chat(config, ["Bonjour"])
    said = [line for line in err.splitlines() if "[web]" in line]
    assert said == [
        f"echo-bot: [web] port {port} is taken: another program listens on 127.0.0.1:{port}; "
        "set [web] port to a free one; running without the operator's page"
    ]
    assert out.startswith("Écho: "), out  # it answered


async def test_a_degraded_turn_is_counted_with_its_reason(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient
) -> None:
    from memory.manage import dashboard

    bot = engine(store, ollama, http)
    await bot.turn(Incoming("m1", 1, "Marie", 10, "111", "Bonjour"))
    ollama.set("/api/embed", "500")
    reply = await bot.turn(Incoming("m2", 1, "Marie", 10, "111", "Encore moi"))
    assert reply is not None and reply.recall.degraded
    o = await dashboard.overview(store)
    assert [(d.turns, d.degraded) for d in o.turn_days] == [(2, {"embedding": 1})]
    assert o.latencies[""].p50 <= o.latencies[""].p95


@given(st.text())
def test_any_text_comes_back_as_text(text: str) -> None:
    cell = el("td", text, title=text)
    inner = cell[cell.index(">") + 1 : -len("</td>")]
    assert "<" not in inner and html.unescape(inner) == text
    assert html.unescape(esc(text)) == text and '"' not in esc(text)


def test_bars_are_as_tall_as_their_values() -> None:
    svg = charts.bars("label", [("a", {"x": 1.0, "y": 3.0}), ("b", {"x": 4.0})], ["x", "y"])
    heights = [float(h) for h in re.findall(r'<rect[^>]*height="([\d.]+)"[^>]*class="s\d"', svg)]
    # The legend's two squares (10 high), then a: x 1, y 3; b: x 4 — on one scale.
    bars = heights[2:]
    assert len(bars) == 3 and bars[0] * 3 == pytest.approx(bars[1], rel=0.01)
    assert bars[0] * 4 == pytest.approx(bars[2], rel=0.01)
    assert "<title>b · x: 4</title>" in svg and "<script" not in svg


def test_a_line_skips_missing_values() -> None:
    svg = charts.lines("l", [("a", {"p": 10.0}), ("b", {}), ("c", {"p": 30.0})], ["p"])
    assert svg.count("<circle") == 2 and "<polyline" in svg
