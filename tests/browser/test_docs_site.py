"""The docs site as the app serves it: readable signed out, searchable under its policy, reached from the app."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from accounts.models import User
from tests.conftest import REPO
from tests.factories import build_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

_WATCH = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation',
  e => window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));
"""


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(target)], cwd=REPO, check=True,
                   env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), timeout=300)
    return target


def test_docs_read_signed_out_and_search_works_under_the_policy(page, live_server, settings, built_site):
    settings.DOCS_SITE_DIR = built_site
    page.add_init_script(_WATCH)
    page.goto(f"{live_server.url}/docs/")
    assert page.locator("h2#find-your-task").is_visible()
    page.get_by_role("link", name="Running a study end to end").first.click()
    page.wait_for_url(f"{live_server.url}/docs/guides/study/")
    page.keyboard.press("/")
    page.keyboard.type("consensus rule")
    page.locator(".md-search-result__item").first.wait_for()
    assert "Adjudication and consensus" in page.locator(".md-search-result").inner_text()
    assert page.evaluate("window.__cspViolations") == []


def test_analytics_tables_and_key_help_link_to_their_sections(page, live_server, login, make_user, settings,
                                                               built_site):
    settings.DOCS_SITE_DIR = built_site
    User.objects.create_user("docsresearcher", password="pass-1234", role="researcher")
    built = build_campaign([make_user("docsann")], per_item=1)
    login("docsresearcher")
    page.goto(f"{live_server.url}/analytics/campaigns/{built.campaign.pk}/?resamples=20")
    page.locator("#table-agreement > summary").click()  # sections other than Table 4 start folded
    page.locator("#table-agreement").get_by_role("link", name="about").click()
    page.wait_for_url(f"{live_server.url}/docs/guides/analytics/#table-agreement")
    heading = page.locator("h3#table-agreement")
    assert heading.is_visible() and "Inter-annotator agreement" in heading.inner_text()
