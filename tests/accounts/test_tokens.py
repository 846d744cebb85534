"""Tokens are listed, revoked and may expire, in the admin, on the account page and through the API; a revoked or
expired token is refused with 401."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken
from accounts.services.tokens import TokenError, expiry_in, token_create, token_revoke

pytestmark = pytest.mark.django_db


def _get(token: str, path: str = "/api/tokens"):
    return Client().get(path, HTTP_AUTHORIZATION=f"Bearer {token}")


def test_api_lists_creates_and_revokes_own_tokens_and_a_revoked_token_gets_401(make_user):
    rita = make_user("rita", role="researcher")
    other = make_user("olga", role="researcher")
    first = token_create(user=rita, name="laptop")
    token_create(user=other, name="not-yours")
    client = Client()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {first}"}
    made = client.post("/api/tokens", data={"name": "ci", "scope": "read", "expires_in_days": 30},
                       content_type="application/json", **auth)
    assert made.status_code == 201
    body = made.json()
    second = body["token"]
    assert body["prefix"] == second[:8] and body["scope"] == "read" and body["active"] is True
    assert timedelta(days=29) < ApiToken.objects.get(pk=body["id"]).expires_at - timezone.now() <= timedelta(days=30)
    page = client.get("/api/tokens", **auth).json()
    listed = page["items"]  # paginated like every other list
    assert page["count"] == 2 and [t["name"] for t in listed] == ["ci", "laptop"]  # newest first; never another user's
    assert "token" not in listed[0] and listed[1]["prefix"] == first[:8]
    assert listed[1]["last_used_at"] is not None  # this very request used it
    assert _get(second).status_code == 200
    revoked = client.post(f"/api/tokens/{body['id']}/revoke", **auth)
    assert revoked.status_code == 200 and revoked.json()["active"] is False and revoked.json()["revoked_at"]
    assert _get(second).status_code == 401
    theirs = ApiToken.objects.get(user=other)
    assert client.post(f"/api/tokens/{theirs.pk}/revoke", **auth).status_code == 404
    assert ApiToken.objects.get(pk=theirs.pk).revoked_at is None


def test_an_expired_token_is_refused_with_401(make_user):
    rita = make_user("rita", role="researcher")
    token = token_create(user=rita, expires_at=timezone.now() + timedelta(seconds=60))
    assert _get(token).status_code == 200
    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _get(token).status_code == 401


def test_expiry_bounds_and_the_command_flag(make_user):
    rita = make_user("rita", role="researcher")
    for bad in (0, -1, 10**6):
        with pytest.raises(TokenError):
            expiry_in(bad)
    with pytest.raises(TokenError, match="future"):
        token_create(user=rita, expires_at=timezone.now() - timedelta(days=1))
    out = io.StringIO()
    call_command("create_token", "rita", "--expires-days", "7", stdout=out)
    row = ApiToken.objects.get(prefix=out.getvalue().strip()[:8])
    assert timedelta(days=6) < row.expires_at - timezone.now() <= timedelta(days=7)
    with pytest.raises(CommandError, match="expires_in_days"):
        call_command("create_token", "rita", "--expires-days", "0", stdout=io.StringIO())


def test_account_page_lists_makes_once_and_revokes(client, make_user):
    rita = make_user("rita", role="annotator")
    old = token_create(user=rita, name="<b>old</b>")
    client.force_login(rita)
    page = client.get("/accounts/tokens/")
    assert page.status_code == 200
    assert old[:8].encode() in page.content and b"&lt;b&gt;old&lt;/b&gt;" in page.content
    assert old.encode() not in page.content  # only the prefix is ever shown again
    made = client.post("/accounts/tokens/", {"name": "notebook", "scope": "read", "expires_in_days": "3"})
    assert made.status_code == 200
    new = ApiToken.objects.get(name="notebook")
    assert new.prefix.encode() in made.content and b"shown only this once" in made.content
    assert client.get("/accounts/tokens/").content.count(b"shown only this once") == 0
    assert client.post("/accounts/tokens/", {"name": "x", "scope": "admin"}).status_code == 422
    response = client.post(f"/accounts/tokens/{ApiToken.objects.get(name='<b>old</b>').pk}/revoke/")
    assert response.status_code == 302
    assert _get(old).status_code == 401


def test_admin_lists_and_revokes_tokens(client, make_user):
    admin = make_user("root", role="admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    rita = make_user("rita", role="researcher")
    token = token_create(user=rita, name="leaked")
    client.force_login(admin)
    listing = client.get("/admin/accounts/apitoken/")
    assert listing.status_code == 200 and b"leaked" in listing.content and token[:8].encode() in listing.content
    row = ApiToken.objects.get(name="leaked")
    done = client.post("/admin/accounts/apitoken/", {"action": "revoke", "_selected_action": [row.pk]})
    assert done.status_code == 302
    assert _get(token).status_code == 401
    assert token_revoke(token=row) is False  # already revoked
