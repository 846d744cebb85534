"""Playwright fixtures: Debian's chromium against pytest-django's live server, and a logged-in page."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM must still be usable from the tests.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


# Module scope: a live sync Playwright keeps an event loop running, which would break asyncio.run in later tests.
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def login(page, live_server) -> Callable[[str, str], object]:
    """Log in through the real form, by keyboard: type, Tab, type, Enter."""

    def do(username: str, password: str = "pass-1234") -> object:
        page.goto(f"{live_server.url}/accounts/login/")
        page.locator("#id_username").focus()
        page.keyboard.type(username)
        page.keyboard.press("Tab")
        page.keyboard.type(password)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{live_server.url}/")
        return page

    return do
