"""The operator's page, through HTTP as a browser would ask: every page, the token rules, the
security headers, escaping, read-only. The database is filled by a scripted conversation through
the Engine and the fake Ollama (tests/web_script.py)."""

from __future__ import annotations

import asyncio
import html
import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.web.html import when
from bot.web.pages import View
from bot.web.server import COOKIE, HEADERS, build_app, session_value
from memory import Incoming, manage
from memory.manage import context, versions
from memory.store import Store
from tests.fakes.ollama import FakeOllama
from tests.web_script import MARIE, MARKUP, NEVER_SERVED, PAUL, STORY, Scripted, converse

TOKEN = "a-token-of-the-right-length-0123"
PAGES = ["/", "/health", "/people", f"/people/{MARIE}", "/turns", "/stories",
         f"/stories/{STORY}"]  # fmt: skip
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def scripted(store: Store, ollama: FakeOllama, http: httpx.AsyncClient) -> Scripted:
    return await converse(store, ollama, http)


@pytest.fixture
async def client(store: Store) -> AsyncIterator[TestClient[object, object]]:
    async with TestClient(TestServer(build_app(View(store), TOKEN))) as c:
        yield c


async def _get(client: TestClient[object, object], path: str, **kw: object) -> tuple[int, str]:
    response = await client.get(path, headers=AUTH, **kw)  # type: ignore[arg-type]
    return response.status, await response.text()


def _text(body: str) -> str:
    """What a person reads: the markup gone, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


async def test_every_page_needs_the_token(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    for path in [*PAGES, "/static/style.css", "/people/999"]:
        assert (await client.get(path)).status == 401, path
        wrong = {"Authorization": "Bearer " + TOKEN[:-1] + "x"}
        assert (await client.get(path, headers=wrong)).status == 401, path
        assert (await client.get(path, params={"token": "nope"})).status == 401, path
        forged = await client.get(path, headers={"Cookie": f"{COOKIE}={TOKEN}"})
        assert forged.status == 401, path  # the cookie holds a derived value, not the token
        assert (await client.get(path, headers=AUTH)).status in (200, 404), path
    body = await (await client.get("/")).text()
    assert TOKEN not in body and "Bearer" in body  # says how, never what


async def test_the_link_with_the_token_sets_a_strict_cookie_and_drops_the_token_from_the_url(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    response = await client.get(
        "/health", params={"token": TOKEN, "origin": "dm"}, allow_redirects=False
    )
    assert response.status == 303
    assert response.headers["Location"] == "/health?origin=dm"
    cookie = response.headers["Set-Cookie"]
    assert f"{COOKIE}={session_value(TOKEN)}" in cookie and TOKEN not in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # The browser follows with the cookie only: the page opens.
    followed = await client.get("/health?origin=dm")
    assert followed.status == 200 and NEVER_SERVED in _text(await followed.text())


async def test_security_headers_on_every_answer(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    for response in (await client.get("/"), await client.get("/", headers=AUTH),
                     await client.get("/nowhere", headers=AUTH)):  # fmt: skip
        for name, value in HEADERS.items():
            assert response.headers[name] == value
    csp = HEADERS["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "script-src" not in csp


async def test_no_page_has_a_script_or_an_inline_style(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    for path in PAGES:
        status, body = await _get(client, path)
        assert status == 200, (path, body)
        assert "<script" not in body.lower(), path
        assert " style=" not in body and "<style" not in body, path
        assert 'href="/static/style.css"' in body


async def test_a_memory_with_markup_is_shown_as_text(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    for path in (f"/people/{MARIE}", "/turns"):
        _, body = await _get(client, path)
        assert "<script>" not in body
        assert html.escape(MARKUP, quote=True) in body
        assert MARKUP in _text(body)


async def test_the_overview_shows_turns_latency_reflections_and_calibration(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    status, body = await _get(client, "/")
    text = _text(body)
    assert status == 200
    assert re.search(r"\b4\s+answered turns", text)  # the four messages of the script
    assert "reply latency p50" in text and re.search(r"\d+ ms\s+reply latency p95", text)
    assert "<svg" in body and 'role="img"' in body
    # The script's reflections: Félix and the piano created; Félix again absorbed; the
    # candidate under the confidence floor rejected both times.
    assert re.search(r"2\d{3}-\d\d-\d\d\s+2\s+0\s+1\s+2\s+0\s+low_confidence 2", text)
    assert re.search(r"\bm\s+\d\.\d{3}\s+4\s+0\b", text)  # estimator of chat model "m"
    assert "echo-bot calibrate" in text  # never calibrated: says what would fill it
    assert "The last 14 days (UTC)" in text


async def test_memory_health_lists_the_never_served_memory_oldest_first(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    _, body = await _get(client, "/health")
    never = body[body.index("Never served") :]
    assert NEVER_SERVED in _text(never)
    assert "A un chat roux nommé Félix" not in _text(never)  # served by the last turn
    _, dm = await _get(client, "/health", params={"origin": "dm"})
    assert "for DMs" in _text(dm) and NEVER_SERVED in _text(dm)
    _, server = await _get(client, "/health", params={"origin": "111"})
    assert NEVER_SERVED not in _text(server)


async def test_people_and_one_persons_memories_sorted_and_filtered(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    _, body = await _get(client, "/people")
    text = _text(body)
    assert "Marie" in text and "Paul" in text and f"/people/{PAUL}" in body
    _, mine = await _get(client, f"/people/{MARIE}")
    assert "A un chat roux nommé Félix" in _text(mine) and "Paul" not in _text(mine)
    _, never = await _get(client, f"/people/{MARIE}", params={"never": "1"})
    assert NEVER_SERVED in _text(never) and "Félix" not in _text(never)
    _, found = await _get(client, f"/people/{MARIE}", params={"q": "PIANO"})
    assert "Joue du piano" in _text(found) and "Félix" not in _text(found)
    _, oldest = await _get(client, f"/people/{MARIE}", params={"sort": "id", "order": "asc"})
    _, newest = await _get(client, f"/people/{MARIE}", params={"sort": "id", "order": "desc"})
    ids = [int(i) for i in re.findall(r">#(\d+)</a></td>", oldest)]
    assert ids == sorted(ids) and len(ids) >= 4
    assert [int(i) for i in re.findall(r">#(\d+)</a></td>", newest)] == ids[::-1]


async def test_the_turn_page_shows_what_the_last_why_shows_and_the_plan(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    _, body = await _get(client, "/turns", params={"user": str(MARIE)})
    first = body[: body.index("</details>")]  # the newest turn, open
    assert f"Turn #{scripted.why.id}" in first
    for s in scripted.why.selected:
        assert f"#{s.memory.id}" in first
        assert f'title="{s.reason.value}"' in first
    assert "semantic" in first  # recalled by meaning: the message named the cat
    assert "Context plan: strategy" in _text(first)
    assert "persona" in _text(first) and "input" in _text(first)


async def test_stories_show_summary_anchors_positions_and_state(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    _, listing = await _get(client, "/stories")
    assert f"/stories/{STORY}" in listing
    _, body = await _get(client, f"/stories/{STORY}")
    text = _text(body)
    assert "Félix est le chat de Marie" in text
    assert "Les chats roux ont du caractère" in text
    assert "mood" in text and "Summaries written, latest first" in text


async def test_an_empty_database_says_what_would_fill_each_page(
    client: TestClient[object, object],
) -> None:
    expected = {
        "/": "No answered turn in this range",
        "/health": "No memory was a candidate yet",
        "/people": "No one yet",
        "/people/5": "No memory matches",
        "/turns": "No turn recorded yet",
        "/stories": "No story yet",
        "/stories/5": "No anchor held",
    }
    for path, words in expected.items():
        status, body = await _get(client, path)
        assert status == 200 and words in _text(body), path


async def test_bad_parameters_get_one_line_and_other_methods_are_refused(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    for path, params in (("/", {"days": "0"}), ("/", {"days": "x"}),
                         (f"/people/{MARIE}", {"sort": "text; DROP"}),
                         ("/health", {"origin": "abc"}), ("/turns", {"user": "-1"}),
                         ("/turns", {"user": "9" * 30})):  # fmt: skip
        status, body = await _get(client, path, params=params)
        assert status == 400 and body.count("\n") == 1, (path, params, body)
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert (await client.request(method, "/", headers=AUTH)).status == 405
    assert (await client.get("/people/0", headers=AUTH)).status == 404


async def test_no_page_writes_to_the_database(
    scripted: Scripted, store: Store, client: TestClient[object, object], tmp_path: Path
) -> None:
    async def dump() -> list[str]:
        if store.dialect == "postgres":
            tables = await store.fetchall(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = 'public' ORDER BY table_name"
            )
            rows: list[str] = []
            for (table,) in tables:
                rows += [
                    f"{table}: {tuple(r)}" for r in await store.fetchall(f"SELECT * FROM {table}")
                ]
            return sorted(rows)
        with sqlite3.connect(tmp_path / "echo.sqlite3") as conn:
            return list(conn.iterdump())

    before = await dump()
    assert before
    for path in PAGES:
        for params in ({}, {"sort": "ratio", "never": "1"}, {"origin": "dm"}):
            await _get(client, path, params=params)
    assert await dump() == before


async def test_pages_load_while_turns_run(
    store: Store, ollama: FakeOllama, http: httpx.AsyncClient, client: TestClient[object, object]
) -> None:
    """The concurrent twin: many people talk while the pages are read; every turn is timed and
    planned once, every page answers."""
    scripted = await converse(store, ollama, http)

    async def talk(user: int) -> None:
        for n in range(3):
            await asyncio.sleep(user % 3 * 0.01)
            await scripted.engine.turn(
                Incoming(f"c{user}:{n}", user, f"P{user}", 20 + user % 4, "222", "Bonjour !")
            )

    async def read() -> list[int]:
        return [(await _get(client, path))[0] for path in PAGES * 2]

    *_, statuses = await asyncio.gather(*(talk(u) for u in range(100, 112)), read())
    assert set(statuses) == {200}
    timed = await store.fetchone("SELECT sum(turns) FROM turn_days")
    # Every turn still kept (older ones are pruned for /why) has its plan, its plan only.
    kept = await store.fetchone(
        "SELECT count(*), count(p.turn_id) FROM turns t LEFT JOIN turn_plans p"
        " ON p.turn_id = t.id WHERE t.origin = '222'"
    )
    orphans = await store.fetchone(
        "SELECT count(*) FROM turn_plans WHERE turn_id NOT IN (SELECT id FROM turns)"
    )
    assert timed is not None and timed[0] == 4 + 12 * 3
    assert kept is not None and kept[0] == kept[1] > 12
    assert orphans is not None and orphans[0] == 0


@pytest.mark.slow
async def test_any_query_gets_a_page_or_one_line_never_an_error(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    nasty = ["", "-1", "0", "9" * 30, "é", "<script>", "1e3", " 1", "a\x00b", "dm", "111",
             "ratio", "asc", "rule", "story", "1"]  # fmt: skip
    names = ["days", "origin", "page", "kind", "scope", "never", "q", "sort", "order", "user"]
    for path in PAGES:
        for name in names:
            for value in nasty:
                status, body = await _get(client, path, params={name: value})
                assert status == 200 or (status == 400 and body.count("\n") == 1), (
                    path, name, value, status,
                )  # fmt: skip


async def test_people_are_named_with_their_id_beside_and_dates_stay_on_one_line(
    scripted: Scripted, store: Store, client: TestClient[object, object]
) -> None:
    """Never-served list, turns and a story's anchors name each person (the name they last
    wrote under) with the id beside; a person with no message kept (an import) says so."""
    imported = 77
    await manage.remember(store, user_id=imported, story_id=5, origin="dm", text="Importée")
    _, health = await _get(client, "/health")
    assert f"Marie · {MARIE}" in _text(health) and f"no name · {imported}" in _text(health)
    _, turns = await _get(client, "/turns")
    assert f"Marie · {MARIE}" in _text(turns) and f"Paul · {PAUL}" in _text(turns)
    assert f"person {MARIE}" not in _text(turns)
    # Each turn names the message it answered: its history id and time, never its text.
    answered = re.findall(r"answering message #(\d+) of \d{4}-\d\d-\d\d \d\d:\d\d", turns)
    stored = await context.recent_history(store, STORY, limit=50)
    asked = [str(m.id) for m in reversed(stored) if m.role == "user"]
    assert answered == asked and len(asked) == 4
    _, stories = await _get(client, "/stories")
    assert f"Marie · {MARIE} ,  Paul · {PAUL}" in _text(stories)  # two links
    _, story = await _get(client, f"/stories/{STORY}")
    assert f"person {MARIE}" not in _text(story)
    # Dates in the memory tables are kept whole; the text column has room to read.
    _, person = await _get(client, f"/people/{MARIE}")
    assert re.search(r'<span class="when">\d{4}-\d\d-\d\d \d\d:\d\d</span>', person)
    _, style = await _get(client, "/static/style.css")
    assert ".when { white-space: nowrap; }" in style
    assert "td .memory-text { display: block; min-width: 32ch; }" in style


async def test_the_overview_and_stats_name_their_two_counts_apart(
    scripted: Scripted, client: TestClient[object, object]
) -> None:
    _, body = await _get(client, "/")
    assert "answered without recall by meaning" in _text(body)
    assert "degraded turns" not in _text(body)


async def test_a_memorys_page_shows_its_earlier_versions_with_their_dates_escaped(
    scripted: Scripted, store: Store, client: TestClient[object, object]
) -> None:
    [jazz] = [m for m in await manage.list_memories(store, MARIE) if m.text == MARKUP]
    edited = jazz.created_at + 3 * 86_400
    await versions.edit(store, MARIE, jazz.id, "Aime le jazz manouche", now=edited)
    path = f"/people/{MARIE}/memories/{jazz.id}"
    _, listed = await _get(client, f"/people/{MARIE}")
    assert f'href="{path}"' in listed
    assert (await client.get(path)).status == 401

    status, body = await _get(client, path)
    assert status == 200
    assert "<script>" not in body and html.escape(MARKUP, quote=True) in body
    text = " ".join(_text(body).split())
    assert "Aime le jazz manouche" in text and "Earlier versions (1)" in text
    assert f"{when(jazz.created_at)} {when(edited)} edit the person {MARKUP}" in text

    [felix] = [m for m in await manage.list_memories(store, MARIE) if "Félix" in m.text]
    _, first = await _get(client, f"/people/{MARIE}/memories/{felix.id}")
    assert "Earlier versions (0)" in _text(first) and "first wording" in _text(first)
    await manage.remember(store, user_id=PAUL, story_id=99, origin="dm", text="Aime le rugby")
    [pauls] = await manage.list_memories(store, PAUL)
    _, other = await _get(client, f"/people/{MARIE}/memories/{pauls.id}")
    assert "no such memory" in _text(other) and pauls.text not in _text(other)
    assert (await _get(client, f"/people/{MARIE}/memories/0"))[0] == 404


async def test_the_people_page_names_each_character_a_person_talked_to(
    store: Store, client: TestClient[object, object]
) -> None:
    from memory import Character, Characters, Engine
    from memory.manage import casting

    class Chat:
        model = "fake-chat"

        async def chat(self, messages: object, **_: object) -> object:
            from memory.backends.chat import ChatResult

            return ChatResult("Oui.")

    cast = Characters(
        [Character("Nyx", "Tu es Nyx.", key="nyx"), Character("Brann", "Tu es Brann.", key="brann")]
    )
    await casting.load(store, cast)
    engine = Engine(store, embedder=None, chat=Chat(), characters=cast)  # type: ignore[arg-type]
    for key in ("nyx", "brann"):
        await engine.turn(Incoming(f"w:{key}", 4242, "Ana", 9, "dm", "Bonjour.", key))
    brann = cast.person_id("brann", 4242)
    _, body = await _get(client, "/people")
    rows = [r for r in re.findall(r"<tr>.*?</tr>", body, re.S) if "4242" in _text(r)]
    # One row, under her own id; each character's key opens the memories it keeps of her.
    assert [" ".join(_text(r).split()[:4]) for r in rows] == ["4242 nyx , brann"], rows
    assert f'<a href="/people/{brann}">brann</a>' in rows[0]
    status, page = await _get(client, f"/people/{brann}")
    assert status == 200 and "Person 4242 (Ana), as brann knows them" in _text(page), page
    story = cast.story_id("brann", 9)
    _, stories = await _get(client, "/stories")
    assert f"/stories/{story}" in stories
    status, page = await _get(client, f"/stories/{story}")
    assert status == 200 and f"Story {story} (brann's, in 9)" in _text(page), page
