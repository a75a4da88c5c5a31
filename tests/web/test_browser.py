"""The operator's page in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`) driven by Selenium, on a database filled by the scripted conversation.

Skipped unless ECHO_BROWSER=1 (set by `make test-web`). Checks what a person sees and saves
screenshots under bench/results/web/.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.config import Settings
from bot.web.pages import REASON_TITLES
from bot.web.server import serving
from memory.store import Store
from tests.fakes.ollama import FakeOllama
from tests.web_script import MARIE, MARKUP, NEVER_SERVED, STORY, converse

pytestmark = pytest.mark.skipif(
    os.environ.get("ECHO_BROWSER") != "1", reason="real browser: run `make test-web`"
)

SHOTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "web"
TOKEN = "browser-test-token-0123456789"


@pytest.fixture
def driver() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--lang=en"):  # fmt: skip
        options.add_argument(arg)
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    browser = webdriver.Chrome(service=service, options=options)
    try:
        yield browser
    finally:
        browser.quit()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _shot(browser: Any, name: str) -> None:
    """A screenshot of the whole page, beyond the window (Chromium's DevTools protocol)."""
    size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
    })  # fmt: skip
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))


def _go(browser: Any, click: Any) -> None:
    """Click a link or a button and wait for the next page (its elements replace these)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    old = browser.find_element(By.TAG_NAME, "html")
    click.click()
    WebDriverWait(browser, 10).until(expected_conditions.staleness_of(old))


async def test_each_page_as_a_person_sees_it(
    tmp_path: Path, store: Store, ollama: FakeOllama, http: httpx.AsyncClient, driver: Any
) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    scripted = await converse(store, ollama, http)
    settings = Settings(
        storage={"path": tmp_path / "echo.sqlite3"},  # type: ignore[arg-type]
        web={"port": _free_port(), "token": TOKEN},  # type: ignore[arg-type]
    )

    async def browse(step: Callable[[], None]) -> None:
        await asyncio.to_thread(step)  # the page is served by this loop meanwhile

    async with serving(settings, store) as address:

        def text() -> str:
            return str(driver.find_element(By.TAG_NAME, "main").text)

        def overview() -> None:
            driver.get(f"{address}?token={TOKEN}")
            assert driver.current_url == address  # the token left the address bar
            assert driver.find_element(By.TAG_NAME, "h1").text == "Overview"
            cards = driver.find_elements(By.CSS_SELECTOR, ".card")
            assert "4\nanswered turns" in [c.text for c in cards]
            assert driver.find_elements(By.CSS_SELECTOR, "svg.chart rect")
            header = driver.find_element(By.TAG_NAME, "header")
            # The stylesheet loaded under the CSP: the header has the light card colour.
            assert header.value_of_css_property("background-color") == "rgba(245, 247, 250, 1)"
            _shot(driver, "overview")
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
                "features": [{"name": "prefers-color-scheme", "value": "dark"}]})  # fmt: skip
            assert header.value_of_css_property("background-color") == "rgba(28, 32, 40, 1)"
            _shot(driver, "overview-dark")
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

        def health() -> None:
            _go(driver, driver.find_element(By.LINK_TEXT, "Memory health"))
            never = driver.find_element(By.CSS_SELECTOR, "table.never-served").text
            assert NEVER_SERVED in never and "Félix" not in never
            _shot(driver, "health")

        def person() -> None:
            _go(driver, driver.find_element(By.LINK_TEXT, "People"))
            _go(driver, driver.find_element(By.LINK_TEXT, str(MARIE)))
            memories = driver.find_element(By.CSS_SELECTOR, "table.memories").text
            assert MARKUP in memories  # shown as text
            with pytest.raises(NoAlertPresentException):
                driver.switch_to.alert.text  # noqa: B018 — nothing ran
            _shot(driver, "person")
            driver.find_element(By.NAME, "q").send_keys("piano")
            _go(driver, driver.find_element(By.CSS_SELECTOR, "form.filters button"))
            filtered = driver.find_element(By.CSS_SELECTOR, "table.memories").text
            assert "Joue du piano le dimanche" in filtered and "Félix" not in filtered
            driver.find_element(By.NAME, "q").clear()
            _go(driver, driver.find_element(By.CSS_SELECTOR, "form.filters button"))
            _go(driver, driver.find_element(By.PARTIAL_LINK_TEXT, "served ratio"))
            assert "sort=ratio" in driver.current_url

        def turns() -> None:
            _go(driver, driver.find_element(By.LINK_TEXT, "Turns"))
            newest = driver.find_element(By.CSS_SELECTOR, "details.turn[open]")
            assert f"Turn #{scripted.why.id}" in newest.text
            rows = newest.find_elements(By.CSS_SELECTOR, "table.selected tbody tr")
            assert len(rows) == len(scripted.why.selected)
            for row, chosen in zip(rows, scripted.why.selected, strict=True):
                assert f"#{chosen.memory.id}" in row.text
                assert REASON_TITLES[chosen.reason] in row.text
            assert "Context plan: strategy" in newest.text
            _shot(driver, "turns")

        def story() -> None:
            _go(driver, driver.find_element(By.LINK_TEXT, "Stories"))
            _go(driver, driver.find_element(By.LINK_TEXT, str(STORY)))
            assert "Félix est le chat de Marie" in text()
            assert "Les chats roux ont du caractère" in text()
            _shot(driver, "story")

        for step in (overview, health, person, turns, story):
            await browse(step)
