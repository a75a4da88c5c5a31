"""The operator's page after a terminal chat with two characters: the person is one row under
one id (their own, each character's memories a link away), and what they said in the terminal
is said to come from the terminal, not from DMs."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.terminal.chat import terminal_user_id
from bot.web.pages import View
from bot.web.server import build_app
from memory.store import open_store
from tests.bot.cli_runner import echo_bot
from tests.bot.terminal.test_e2e import _script
from tests.fakes.ollama import FakeOllama

TOKEN = "a-token-of-the-right-length-0123"
MARIE = terminal_user_id("Marie")


def _text(body: str) -> str:
    """What a person reads: the markup gone, entities decoded, spaces folded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", body.replace("><", "> <"))).split())


@pytest.fixture
async def page(tmp_path: Path, ollama: FakeOllama) -> AsyncIterator[TestClient[object, object]]:
    """The page over a database where Marie told Nyx (the default) and Brann about her cat in
    the terminal, and asked each to remember a drink."""
    _script(ollama)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[llm]\nbase_url = "{ollama.url}"\n[storage]\npath = "echo.sqlite3"\n'
        "[conversation]\nsettle_seconds = 0\n"
        '[[characters]]\nkey = "nyx"\nname = "Nyx"\npersona = "Tu es Nyx."\ndefault = true\n'
        '[[characters]]\nkey = "brann"\nname = "Brann"\npersona = "Tu es Brann."\n',
        encoding="utf-8",
    )
    for character, drink in (("nyx", "thé"), ("brann", "café")):
        said = f"J'ai un chat roux qui s'appelle Félix.\n/remember J'aime le {drink}\n"
        code, _, err = await echo_bot(
            "--config", str(config), "chat", "--user", "Marie", "--character", character,
            stdin=said.encode(),
        )  # fmt: skip
        assert code == 0, err
    async with (
        await open_store(tmp_path / "echo.sqlite3") as store,
        TestClient(TestServer(build_app(View(store), TOKEN))) as client,
    ):
        yield client


async def _get(client: TestClient[object, object], path: str) -> str:
    response = await client.get(path, headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status == 200, path
    return await response.text()


async def test_one_person_is_one_row_with_one_id_and_each_characters_memories(
    page: TestClient[object, object],
) -> None:
    body = await _get(page, "/people")
    rows = re.findall(r"<tr><td>.*?</tr>", body[body.index("<tbody>") :])
    assert len(rows) == 1, rows
    cells = [_text(cell) for cell in re.findall(r"<td>(.*?)</td>", rows[0])]
    assert cells[:4] == [str(MARIE), "nyx, brann", "Marie", "4"]
    links = {text: href for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', rows[0])}
    # Each character's key opens the memories it keeps of her, under her own id there too.
    for key, mine, other in (("nyx", "thé", "café"), ("brann", "café", "thé")):
        theirs = _text(await _get(page, links[key]))
        assert f"Aime le {mine}" in theirs and f"Aime le {other}" not in theirs  # third person
        assert f"Person {MARIE} (Marie)" in theirs
    # Wherever she is named, the id beside her name is hers, whichever character she spoke to.
    for path in ("/turns", "/stories"):
        named = re.findall(r"Marie · (-?\d+)", _text(await _get(page, path)))
        assert len(named) == 2 and set(named) == {str(MARIE)}, (path, named)


async def test_what_was_said_in_the_terminal_is_from_the_terminal_not_dms(
    page: TestClient[object, object],
) -> None:
    people = await _get(page, "/people")
    for href in re.findall(r'<a href="(/people/-?\d+)">(?:nyx|brann)</a>', people):
        text = _text(await _get(page, href))
        assert "DMs" not in text
        assert text.count("the terminal only") == 2  # the cat and the drink
    turns = _text(await _get(page, "/turns"))
    assert "DMs" not in turns and turns.count("· the terminal ·") == 2
