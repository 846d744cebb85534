"""The raw-bytes probe on the pages that take form posts from outside: the study link (anyone with it) and the
decoys' answer-key page (its form and its JSONL import). Bytes no browser sends - invalid UTF-8, lone
surrogates written as bytes, NUL, overlong forms, huge numbers - as the form body, as field values, as the
query string and as the uploaded file answer 4xx or the page, never a 500."""

from __future__ import annotations

import itertools

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quality.models import CheckSpan
from quality.services import CheckSettings
from studies.models import Participant
from tests.annotator.study_links import link_study
from tests.quality.conftest import build_study, judges  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

BROKEN = (b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf", b"\xe0\x80\xaf", b"\x80", b"\xc3", b"\xff", b"\x00",
          b"\xf4\x90\x80\x80", b"%00", b"%ed%a0%80", b"%ff", str(2**64).encode(), b"-1", b"[1]", b"{}")
FIELDS = ("PROLIFIC_PID", "SESSION_ID", "workerId", "assignmentId", "decoy", "explanation", "label",
          "key_explanation", "csrfmiddlewaretoken")
raw = st.one_of(
    st.binary(max_size=48),
    st.builds(lambda name, bad: name.encode() + b"=a" + bad + b"b", st.sampled_from(FIELDS), st.sampled_from(BROKEN)),
    st.builds(lambda head, bad, tail: head + bad + tail, st.binary(max_size=12), st.sampled_from(BROKEN),
              st.binary(max_size=12)),
)
NAMES = itertools.count()  # each example builds its study beside the ones before it (one test transaction)
CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "application/json",
                 "text/plain")


@pytest.fixture(autouse=True)
def _rate_limit_in_this_process(settings):
    settings.RATELIMIT_USE_CACHE = "default"
    settings.JOIN_RATE_LIMIT = "100000/m"


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(body=raw, content_type=st.sampled_from(CONTENT_TYPES), query=st.sampled_from(BROKEN))
def test_the_study_link_answers_raw_bytes_without_a_500(body, content_type, query):
    study = link_study(name=f"raw {next(NAMES)}")
    url = f"/join/{study.campaign.study_link.token}/"
    browser = Client()
    posted = browser.generic("POST", url, body, content_type=content_type)
    assert posted.status_code < 500, (body, content_type, posted.content[:300])
    # WSGI hands the query string over as bytes decoded as Latin-1, whatever they are
    read = browser.get(url, QUERY_STRING=(b"PROLIFIC_PID=" + query + b"&SESSION_ID=" + query).decode("latin-1"))
    assert read.status_code < 500, (query, read.content[:300])
    assert Participant.objects.filter(link__campaign=study.campaign).count() <= 1


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(body=raw, content_type=st.sampled_from(CONTENT_TYPES), upload=raw)
def test_the_decoy_page_answers_raw_bytes_without_a_500(researcher, judges, body, content_type,  # noqa: F811
                                                       upload):
    study = build_study(list(judges), name=f"raw {next(NAMES)}", n_items=3,
                        checks=CheckSettings(decoys=0.3), opened=False)
    base = f"/campaigns/{study.campaign.pk}/decoys/"
    decoy = CheckSpan.objects.filter(campaign=study.campaign).first()
    client = Client()
    client.force_login(researcher)
    for path in (base, f"{base}import/", f"{base}{decoy.pk}/drop/" if decoy else base):
        answer = client.generic("POST", path, body, content_type=content_type)
        assert answer.status_code < 500, (path, body, content_type, answer.content[:300])
    imported = client.post(f"{base}import/", {"file": SimpleUploadedFile("d.jsonl", upload)})
    assert imported.status_code < 500, (upload, imported.content[:300])
    form = client.post(base, {"decoy": upload.decode("utf-8", "replace").replace("\x00", ""),
                              "explanation": "x"})
    assert form.status_code < 500, (upload, form.content[:300])
