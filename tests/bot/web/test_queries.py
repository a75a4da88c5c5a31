"""The operator's page against hostile addresses: the `?token=` link's redirect stays on the
site whatever the path, and any value of any query parameter gets the page or a 400 naming the
parameter, never a 500."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import urljoin, urlsplit

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.web.pages import View
from bot.web.server import build_app, same_origin
from memory.store import Store

TOKEN = "a-token-of-the-right-length-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SITE = "http://127.0.0.1:8765/"
PAGES = ["/", "/health", "/people", "/people/1", "/turns", "/stories", "/stories/1"]
PARAMETERS = ["days", "origin", "page", "kind", "scope", "never", "q", "sort", "order", "user"]


def _stays_here(location: str) -> bool:
    # Browsers read a backslash as a slash and drop tabs and newlines before resolving.
    seen = location.replace("\\", "/").replace("\t", "").replace("\n", "").replace("\r", "")
    return (
        location.startswith("/")
        and not seen.startswith("//")
        and urlsplit(urljoin(SITE, seen)).netloc == urlsplit(SITE).netloc
    )


@given(st.text())
def test_the_redirect_target_is_a_path_of_this_site_whatever_the_path(path: str) -> None:
    target = same_origin(path)
    assert _stays_here(target), target
    assert target.isascii() and not any(c in target for c in " \t\r\n\\")


@given(st.text(alphabet="abc/._-~", max_size=30))
def test_an_ordinary_path_is_sent_back_as_it_was(path: str) -> None:
    assert same_origin("/" + path.lstrip("/")) == "/" + path.lstrip("/")


@pytest.fixture
async def client(store: Store) -> AsyncIterator[TestClient[object, object]]:
    async with TestClient(TestServer(build_app(View(store), TOKEN))) as c:
        yield c


async def _raw_get(client: TestClient[object, object], target: str) -> tuple[int, str]:
    """Send `target` as the request line has it (no client normalises it); the status and the
    Location header."""
    assert client.server.port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = (await reader.read()).decode("latin-1")
    writer.close()
    status = int(answer.split(" ", 2)[1])
    location = next(
        (line.split(":", 1)[1].strip() for line in answer.split("\r\n")
         if line.lower().startswith("location:")),
        "",
    )  # fmt: skip
    return status, location


@pytest.mark.parametrize(
    "path",
    ["//evil.example/", "//evil.example", "/%5Cevil.example/", "/%2F%2Fevil.example/",
     "/\\evil.example/", "/%5C%5Cevil.example", "/%09/evil.example", "///evil.example/x",
     "/%2F/evil.example", "/health"],
)  # fmt: skip
async def test_the_token_link_never_redirects_off_the_site(
    client: TestClient[object, object], path: str
) -> None:
    status, location = await _raw_get(client, f"{path}?token={TOKEN}&origin=dm")
    assert status == 303
    assert _stays_here(location), location
    assert location.endswith("?origin=dm")


# Digits to str.isdigit, not to int(), or too many for it; numbers in other forms.
HOSTILE_NUMBERS = ["²", "٣", "１", "½", "9" * 30, "9" * 5000, "-0", "+1", "0x1", "1_0", " 1"]


async def test_a_number_written_in_any_other_way_is_a_400_naming_its_parameter(
    client: TestClient[object, object],
) -> None:
    for path in PAGES:
        for name in ("days", "page", "user", "origin"):
            for value in HOSTILE_NUMBERS:
                response = await client.get(path, params={name: value}, headers=AUTH)
                body = await response.text()
                assert response.status in (200, 404, 400), (path, name, value, body)
                if response.status == 400:
                    assert body.count("\n") == 1 and name in body, (name, value, body)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(PAGES),
    st.sampled_from(PARAMETERS),
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(HOSTILE_NUMBERS),
        st.integers().map(str),
    ),
)
async def test_any_value_of_any_parameter_is_a_page_or_a_400_naming_it(
    client: TestClient[object, object], path: str, name: str, value: str
) -> None:
    response = await client.get(path, params={name: value}, headers=AUTH)
    body = await response.text()
    assert response.status in (200, 404, 400), (path, name, value, response.status, body)
    if response.status == 400:
        assert body.startswith("400: ") and body.count("\n") == 1, body
        assert name in body, (name, body)
