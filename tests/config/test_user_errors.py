"""One user-error type, answered the same way everywhere: the API, the views and the management commands; writes
without valid credentials answer 401 (not a CSRF 403); bodies that are not UTF-8 answer 400; and the last
inputs that gave a 500 (sample sizes beyond 32 bits, raw lone-surrogate bytes) answer 4xx naming the field."""

from __future__ import annotations

import importlib
import json
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import ApiToken
from accounts.services.tokens import token_create
from errors import BadRequest, Conflict, TooMany, UserError
from tests.adjudication_study import three_judge_study

pytestmark = pytest.mark.django_db


def _write_operations() -> list[tuple[str, str]]:
    """Every write operation of the API, from its own schema, path parameters filled with 1."""
    from config.api import api

    paths = api.get_openapi_schema()["paths"]
    return [(method.upper(), re.sub(r"\{[a-z_]+\}", "1", path))
            for path, operations in paths.items() for method in operations if method != "get"]


WRITES = _write_operations()


def test_the_schema_lists_the_write_operations():
    assert len(WRITES) >= 29 and ("PUT", "/api/campaigns/1/disputes/1") in WRITES


def _send(client: Client, method: str, path: str, body: bytes = b"{}", **extra):
    return client.generic(method, path, body, content_type="application/json", **extra)


def test_writes_without_valid_credentials_answer_401_not_a_csrf_403(make_user):
    rita = make_user("rita", role="researcher")
    revoked, expired = token_create(user=rita, name="revoked"), token_create(user=rita, name="expired")
    ApiToken.objects.filter(name="revoked").update(revoked_at=timezone.now())
    ApiToken.objects.filter(name="expired").update(expires_at=timezone.now() - timedelta(seconds=1))
    script = Client(enforce_csrf_checks=True)
    for method, path in WRITES:
        for auth in ({}, {"HTTP_AUTHORIZATION": "Bearer not-a-token"}, {"HTTP_AUTHORIZATION": f"Bearer {revoked}"},
                     {"HTTP_AUTHORIZATION": f"Bearer {expired}"}):
            answer = _send(script, method, path, **auth)
            assert answer.status_code == 401, (method, path, auth, answer.content[:200])
    bad = _send(script, "POST", "/api/campaigns", HTTP_AUTHORIZATION="Bearer not-a-token").json()
    assert bad["detail"] == "the bearer token is unknown, revoked or expired"


def test_a_signed_in_browser_still_needs_its_csrf_token_and_a_bad_bearer_beats_the_session(make_user):
    rita = make_user("rita", role="researcher")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(rita)
    forged = _send(browser, "PATCH", "/api/me/settings", b'{"auto_advance": true}')
    assert forged.status_code == 403 and "CSRF" in forged.json()["detail"]
    # a request that names a bearer token is judged by it, before the session and its CSRF check
    assert _send(browser, "PATCH", "/api/me/settings", b'{"auto_advance": true}',
                 HTTP_AUTHORIZATION="Bearer not-a-token").status_code == 401
    good = _send(browser, "PATCH", "/api/me/settings", b'{"auto_advance": true}',
                 HTTP_AUTHORIZATION=f"Bearer {token_create(user=rita)}")
    assert good.status_code == 200


# ---- raw bytes: every write operation ------------------------------------------------------------------------

LONE_SURROGATE = b"\xed\xa0\x80"  # U+D800 encoded as if it were a character: not UTF-8
OVERLONG = (b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf")  # "/" in two, three and four bytes
BROKEN = (LONE_SURROGATE, b"\xed\xbf\xbf", *OVERLONG, b"\xff", b"\xfe\xff", b"\x80", b"\xc3", b"\xf4\x90\x80\x80")


def _not_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _json_around(bad: bytes, key: str) -> bytes:
    return b'{"' + key.encode() + b'": "a' + bad + b'b", "name": "x' + bad + b'"}'


raw_bodies = st.one_of(
    st.binary(max_size=64),
    st.builds(_json_around, st.sampled_from(BROKEN),
              st.sampled_from(["note", "reviewers", "aspect", "dataset", "name", "comment", "span_verdict"])),
    st.builds(lambda head, bad, tail: head + bad + tail, st.binary(max_size=16), st.sampled_from(BROKEN),
              st.binary(max_size=16)),
)


@pytest.fixture
def admin_api(make_user) -> Client:
    token = token_create(user=make_user("adam", role="admin"))
    return Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.mark.parametrize(("method", "path"), WRITES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=raw_bodies)
def test_raw_byte_bodies_never_reach_a_500(admin_api, method, path, body):
    answer = _send(admin_api, method, path, body)
    assert answer.status_code < 500, (method, path, body, answer.content[:300])
    if _not_utf8(body):
        assert answer.status_code == 400 and "the body is not UTF-8 text" in answer.json()["detail"]


@pytest.mark.parametrize(("method", "path", "field"), [
    ("PUT", "/api/campaigns/{campaign}/disputes/{span}", "note"),
    ("POST", "/api/campaigns", "reviewers"),
    ("POST", "/api/datasets/{dataset}/exports", "aspect"),
    ("POST", "/api/dhp/runs", "dataset"),
])
def test_a_lone_surrogate_sent_as_raw_bytes_is_a_400(make_user, method, path, field):
    """The four bodies that reached a 500: the middleware decoded them strictly, took the failure for "not
    JSON" and let them through, and ninja then decoded them with "surrogatepass"."""
    built, _ = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    api = Client(enforce_csrf_checks=True,
                 HTTP_AUTHORIZATION=f"Bearer {token_create(user=make_user('adam', role='admin'))}")
    url = path.format(campaign=built.campaign.pk, span=built.spans["a1_missing"].pk, dataset=built.dataset.pk)
    value = b'["x' + LONE_SURROGATE + b'"]' if field == "reviewers" else b'"x' + LONE_SURROGATE + b'"'
    answer = _send(api, method, url, b'{"' + field.encode() + b'": ' + value + b"}")
    assert answer.status_code == 400
    assert answer.json()["detail"] == ("the body is not UTF-8 text: byte 0xed at position "
                                       f"{len(field) + 7 + (1 if field == 'reviewers' else 0)} "
                                       "(invalid continuation byte); send JSON encoded as UTF-8")


# ---- sample sizes beyond 32 bits -----------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["per_stratum", "total", "seed"])
def test_sample_numbers_beyond_32_bits_are_a_422_naming_the_field(make_user, field):
    built, _ = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make_user('rita', role='researcher'))}")
    sample = {"strata": "evaluator", "per_stratum": 1, field: 2**31}
    if field == "total":
        sample.pop("per_stratum")
    body = {"name": "huge sample", "dataset_id": built.dataset.pk, "run_ids": [r.pk for r in built.runs],
            "annotators": ["ann1"], "sample": sample}
    answer = api.post("/api/campaigns", data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 422 and field in json.dumps(answer.json())
    assert api.post("/api/campaigns", data=json.dumps({**body, "sample": {**sample, field: 2**31 - 1}}),
                    content_type="application/json").status_code != 500


def test_the_campaign_form_refuses_sample_sizes_beyond_32_bits(make_user, client):
    built, _ = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    client.force_login(make_user("rita", role="researcher"))
    annotator = built.campaign.annotators.first()
    form = {"name": "Form sample", "dataset": built.dataset.pk, "runs": [str(r.pk) for r in built.runs],
            "annotators": [annotator.pk], "annotators_per_item": 1, "seed": 0, "guidelines": "x",
            "sample_strata": "evaluator", "sample_total": str(2**31)}
    page = client.post("/campaigns/new/", form)
    assert page.status_code == 200 and "less than or equal to 2147483647" in page.content.decode()


# ---- one mapping of UserError --------------------------------------------------------------------------------

@pytest.mark.parametrize("error", [UserError("value: refused", field="value"),
                                   BadRequest("body: unreadable", field="body"),
                                   UserError("sample, routing: one of them", field=("sample", "routing")),
                                   Conflict("changed since"), TooMany("slow down", retry_after=30)])
def test_every_api_operation_and_view_answers_a_user_error_with_its_status(make_user, client, monkeypatch, error):
    """The same service refusal through the review screen (a view) and its API twin: the same status and
    reason, Retry-After when the refusal is temporary; and through the item screen and its API twin."""
    built, _ = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    rita = make_user("rita", role="researcher")

    def refuse(**_):
        raise error

    for module, name in (("annotator.api.adjudication", "adjudication_set"),
                         ("annotator.views.adjudicate", "adjudication_set"),
                         ("annotator.api.judgments", "action_undo"), ("annotator.views.work", "action_undo")):
        monkeypatch.setattr(importlib.import_module(module), name, refuse)
    span = built.spans["a1_missing"].pk
    client.force_login(rita)
    view = client.post(f"/campaigns/{built.campaign.pk}/adjudicate/{span}/", {"field": "note", "value": "x"},
                       HTTP_HX_REQUEST="true")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=rita)}").put(
        f"/api/campaigns/{built.campaign.pk}/disputes/{span}", data='{"note": "x"}', content_type="application/json")
    assert view.status_code == api.status_code == error.status
    assert view.content.decode() == api.json()["detail"] == str(error)
    assert api.json()["field"] == ([*error.field] if isinstance(error.field, tuple) else error.field)
    # the page shows it, and knows its field
    assert json.loads(view["HX-Trigger"]) == {"sj:problem": {"message": str(error), "field": api.json()["field"]}}
    assert view.get("Retry-After") == api.get("Retry-After") == (None if error.retry_after is None else "30")

    judge = built.campaign.annotators.get(username="ann1")
    mine = built.campaign.assignments.filter(annotator=judge).first()
    client.force_login(judge)
    on_screen = client.post(f"/work/{mine.pk}/undo/", HTTP_HX_REQUEST="true")
    by_api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=judge)}").post(f"/api/assignments/{mine.pk}/undo")
    assert on_screen.status_code == by_api.status_code == error.status


def test_a_command_answers_a_user_error_with_its_message_and_exit_status_2(make_user):
    make_user("rita", role="researcher")
    with pytest.raises(CommandError) as refused:
        call_command("create_token", "rita", scope="admin")
    assert refused.value.returncode == 2 and "scope" in str(refused.value)


@pytest.mark.parametrize("command, extra", [
    ("vigilance", []), ("priming", []), ("export_labeled", []), ("export_report", ["--format", "latex"]),
])
def test_every_campaign_command_refuses_an_unknown_campaign_with_exit_2(command, extra):
    refusal = r"--campaign: no campaign 'no such study' \(give its id or name\)"
    with pytest.raises(CommandError, match=refusal) as caught:
        call_command(command, "--campaign", "no such study", *extra)
    assert caught.value.returncode == 2
