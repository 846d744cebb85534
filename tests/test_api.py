"""The API as a whole: scoped tokens, pagination everywhere, offline docs shown only to signed-in users."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.services.tokens import token_create
from tests import factories as make

pytestmark = pytest.mark.django_db


def _client(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def test_read_token_may_look_but_not_change(researcher):
    make.dataset("scoped", items=[{"external_id": "1", "output": "text"}])
    read = _client(token_create(user=researcher, scope="read"))
    assert read.get("/api/datasets").status_code == 200
    refused = read.post("/api/campaigns", data="{}", content_type="application/json")
    assert refused.status_code == 403 and "read-only" in refused.json()["detail"]
    write = _client(token_create(user=researcher, scope="write"))
    # the write token gets past authentication to validation of the (empty) body
    assert write.post("/api/campaigns", data="{}", content_type="application/json").status_code == 422


def test_create_token_command_takes_a_scope(researcher):
    out = io.StringIO()
    call_command("create_token", researcher.username, scope="read", stdout=out)
    assert _client(out.getvalue().strip()).delete("/api/added-spans/1").status_code == 403


def test_lists_are_paginated_and_refuse_bad_offsets(researcher):
    dataset = make.dataset("paged", items=[{"external_id": str(i), "output": f"text {i}"} for i in range(5)])
    api = _client(token_create(user=researcher))
    page = api.get(f"/api/datasets/{dataset.pk}/items", {"limit": 2, "offset": 2}).json()
    assert page["count"] == 5 and [i["external_id"] for i in page["items"]] == ["2", "3"]
    for bad in ({"offset": -5}, {"offset": "1e20"}, {"limit": 0}, {"limit": 5000}):
        assert api.get(f"/api/datasets/{dataset.pk}/items", bad).status_code == 422, bad
    for path in ("/api/datasets", "/api/runs", "/api/assignments"):
        assert set(api.get(path).json()) == {"items", "count"}, path


def test_docs_need_a_sign_in_and_load_swagger_from_our_static_files(client, researcher, annotator_user):
    anonymous = client.get("/api/docs")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client.get("/api/openapi.json").status_code == 302
    client.force_login(annotator_user)
    page = client.get("/api/docs")
    html = page.content.decode()
    assert page.status_code == 200 and "/static/ninja/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower() and "https://" not in html
    assert client.get("/static/ninja/swagger-ui-bundle.js").status_code == 200
    assert client.get("/api/openapi.json").json()["info"]["title"] == "spanjudge API"
