"""schemathesis against our OpenAPI schema, in process: no 500s, and every response's status, content type and
shape are the documented ones (config/openapi.py documents the shared refusals and the CSV answers).

A few examples per operation keep it quick (< 60 s); the point is every operation, with fuzzed ids, query
values and bodies, as a researcher with a write token over a small dataset with a campaign. Beside the
schema's cases, every write operation gets raw byte bodies no JSON generator makes: invalid UTF-8, lone
surrogates written as bytes, overlong forms; and form bodies (urlencoded and multipart), which meet the same input
rules as JSON ones.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.services.tokens import token_create
from config.api import api
from config.wsgi import application
from tests import factories as make

schema = schemathesis.openapi.from_dict(api.get_openapi_schema())
# No 500, and every answer documented: its status, its content type and (for JSON) its shape.
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def token(db, settings, tmp_path) -> str:
    settings.EXPORT_DIR = tmp_path / "exports"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    dataset = make.dataset("fuzzed", items=[{"external_id": str(i), "output": f"Output number {i}."} for i in range(3)])
    make.gold(dataset.items.first(), [(0, 6)])
    return token_create(user=make.user("fuzz", role=ROLE))


@pytest.fixture(autouse=True)
def _in_process(monkeypatch):
    """Requests run inside the test's transaction (as Django's test client does, the handler must not close the
    connection at the end of a request), and export jobs and runs queued by name reach no broker."""
    from celery import current_app
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    monkeypatch.setattr(current_app, "send_task", lambda *args, **kwargs: None)
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


# CI: a few examples per operation, derandomized (the same cases every run). bench/api_fuzz.py raises the count
# through SPANJUDGE_API_FUZZ_EXAMPLES and collects each answer's status in SPANJUDGE_API_FUZZ_LOG.
EXAMPLES = int(os.environ.get("SPANJUDGE_API_FUZZ_EXAMPLES") or 4)
LOG = os.environ.get("SPANJUDGE_API_FUZZ_LOG")
ROLE = os.environ.get("SPANJUDGE_API_FUZZ_ROLE") or "researcher"  # the bench runs "admin" too


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_api_operations_never_answer_500_and_match_the_schema(case, token):
    response = case.call(app=application, headers={"Authorization": f"Bearer {token}"})
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(f"{case.operation.method.upper()} {case.operation.path} {response.status_code}\n")
    case.validate_response(response, checks=CHECKS)


# Byte sequences that are not UTF-8: a lone surrogate written as bytes (U+D800, U+DFFF), overlong forms of "/",
# stray continuation and lead bytes, a code point above U+10FFFF.
NOT_UTF8 = (b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\x80",
            b"\xc3", b"\xff", b"\xf4\x90\x80\x80")
RAW_BODIES = st.one_of(
    st.binary(max_size=48),
    st.builds(lambda key, bad: b'{"' + key.encode() + b'": "x' + bad + b'"}',
              st.sampled_from(["name", "note", "aspect", "dataset", "comment", "reviewers"]),
              st.sampled_from(NOT_UTF8)),
    st.builds(lambda head, bad, tail: head + bad + tail, st.binary(max_size=12), st.sampled_from(NOT_UTF8),
              st.binary(max_size=12)),
)
WRITES = [(method.upper(), path) for path, ops in api.get_openapi_schema()["paths"].items() for method in ops
          if method != "get"]


@pytest.mark.parametrize(("method", "path"), WRITES)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(body=RAW_BODIES, ident=st.integers(min_value=1, max_value=3))
def test_write_operations_refuse_raw_byte_bodies_without_a_500(method, path, token, body, ident):
    url = path.replace("{", "").replace("}", "")
    for name in ("assignment_id", "span_id", "token_id", "dataset_id", "campaign_id", "run_id", "job_id"):
        url = url.replace(name, str(ident))
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.generic(method, url, body, content_type="application/json")
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(f"{method} {path} [raw bytes] {response.status_code}\n")
    assert response.status_code < 500, (method, url, body)
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        assert response.status_code == 400 and "not UTF-8" in response.json()["detail"], (method, url, body)


FORM_KEYS = ("name", "note", "model", "server", "comment", "occurrence", "aspect", "start", "category", "severity")
FORM_VALUES = st.one_of(st.text(max_size=12), st.sampled_from(["x\x00", "\x00", "²-5", "1" * 5000, "-1", "=1+1",
                                                                "m\u202egnp.exe", "\ud800"]))


@pytest.mark.parametrize(("method", "path"), WRITES)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(fields=st.dictionaries(st.sampled_from(FORM_KEYS), FORM_VALUES, min_size=1, max_size=3),
       multipart=st.booleans(), ident=st.integers(min_value=1, max_value=3))
def test_write_operations_refuse_bad_form_bodies_without_a_500(method, path, token, fields, multipart, ident):
    """A form body is cleaned like a JSON one: a NUL in a value is 422 naming the field, and nothing is a 500."""
    from urllib.parse import urlencode

    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

    url = path.replace("{", "").replace("}", "")
    for name in ("assignment_id", "span_id", "token_id", "dataset_id", "campaign_id", "run_id", "job_id"):
        url = url.replace(name, str(ident))
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    sendable = {k: v.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for k, v in fields.items()}
    if multipart and method == "POST":
        response = client.generic(method, url, encode_multipart(BOUNDARY, sendable), content_type=MULTIPART_CONTENT)
    else:
        response = client.generic(method, url, urlencode(sendable), content_type="application/x-www-form-urlencoded")
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(f"{method} {path} [form] {response.status_code}\n")
    assert response.status_code < 500, (method, url, fields, response.content[:300])
    nul = sorted(k for k, v in sendable.items() if "\x00" in v)
    if nul:
        assert response.status_code == 422, (method, url, fields)
        assert response.json()["field"] in nul, (method, url, fields, response.json())
