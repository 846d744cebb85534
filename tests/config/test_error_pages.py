"""Roles explain themselves: refused pages answer in the site's layout with the reason and who may do it."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ADMIN_ONLY = ["/runs/new/", "/dhp/runs/new/", "/comparisons/new/"]


@pytest.mark.parametrize("path", ADMIN_ONLY)
def test_a_researcher_on_an_admin_only_page_gets_a_styled_403_with_the_reason(client, researcher, path):
    client.force_login(researcher)
    response = client.get(path)
    page = response.content.decode()
    assert response.status_code == 403
    assert 'class="topbar"' in page and 'data-status="403"' in page  # inside the site's layout
    assert "Only admins start, cancel or resume LLM jobs" in page and "ask an admin" in page
    assert "You are signed in as rita (Researcher)" in page
    assert 'href="/#runs"' in page  # where the runs that exist are


def test_an_annotator_on_a_researcher_page_is_told_where_their_work_is(client, annotator_user):
    client.force_login(annotator_user)
    response = client.get("/campaigns/new/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "Only researchers and admins open this page" in page and "listed on the home page" in page
    assert 'href="/#runs"' not in page


def test_the_api_keeps_its_json_403(researcher):
    from ninja.testing import TestClient

    from config.api import api

    response = TestClient(api).post("/runs", json={"dataset": "x", "aspect": "y"}, user=researcher)
    assert response.status_code == 403
    assert "Only admins start" in response.json()["detail"]


def test_a_missing_page_is_the_apps_own_404_also_with_debug_on(client, researcher, settings):
    client.force_login(researcher)
    for debug in (False, True):
        settings.DEBUG = debug
        response = client.get("/no/such/page/")
        page = response.content.decode()
        assert response.status_code == 404, debug
        assert 'data-status="404"' in page and 'class="topbar"' in page, debug
        assert "/no/such/page/" in page
        assert "URLconf" not in page and "admin/" not in page  # no list of the site's URLs


def test_a_server_error_is_a_styled_500_page(researcher, settings):
    settings.DEBUG = False
    from django.urls import path

    def broken(request):
        raise RuntimeError("boom")

    from config import urls

    settings.ROOT_URLCONF = type("urls", (), {"urlpatterns": [path("broken/", broken), *urls.urlpatterns]})
    client = Client(raise_request_exception=False)
    client.force_login(researcher)
    response = client.get("/broken/")
    assert response.status_code == 500
    page = response.content.decode()
    assert 'data-status="500"' in page and "Something went wrong on our side" in page and "boom" not in page


def test_a_conflict_in_a_page_is_in_the_layout_too(client, make_user):
    from tests import factories

    client.force_login(make_user("root", role="admin"))
    dataset = factories.dataset("conflict-set")
    run = factories.run(dataset, "real-run")
    response = client.get(f"/runs/{run.pk}/delete/")  # only a simulated run is deleted with its campaigns
    assert response.status_code == 409
    assert 'data-status="409"' in response.content.decode()


@pytest.mark.parametrize("role", ["annotator", "researcher", "admin"])
def test_the_nav_shows_each_role_only_pages_it_can_open(client, make_user, role):
    import re

    user = make_user(f"nav-{role}", role=role)
    user.is_staff = user.is_superuser = role == "admin"  # as load_demo makes its admin
    user.save()
    client.force_login(user)
    nav = re.search(r"<nav>(.*?)</nav>", client.get("/").content.decode(), re.S).group(1)
    links = re.findall(r'href="([^"]+)"', nav)
    assert links and ("/runs/new/" in links) == (role == "admin")
    for link in links:
        assert client.get(link).status_code == 200, (role, link)
