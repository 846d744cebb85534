"""MQM errors marked in the source (omissions): the screen, the API, undo, the figures and the TSV round trip, and
refusals where a protocol marks nothing in the source."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.services.tokens import token_create
from analytics.selectors.mqm import campaign_ratings, score_rows
from annotator.services.added_spans import AddedSpanError, added_span_create, added_span_update
from annotator.services.assignments import assignment_finish
from corpus.interop.mqm import read_mqm_tsv
from corpus.models import Dataset, ErrorSpan, MatchKind
from corpus.protocols import mqm
from corpus.services.mqm_import import mqm_import
from tests.esa_study import build_esa_study
from tests.mqm_study import build_mqm_study

pytestmark = pytest.mark.django_db
MAJOR = mqm.SEVERITY_CODES["major"]


@pytest.fixture
def study(tmp_path, make_user):
    return build_mqm_study(tmp_path, [make_user("sol")], name="MQM source marks")


def _segment(study, place: str, system: str = "sysA"):
    [annotator] = study.annotators
    return next(a for a in study.assignments(annotator) if a.item.external_id == place and a.item.system == system)


def _api(user):
    client = Client()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user)}"}

    def call(method, path, body=None):
        kwargs = dict(auth) | ({"data": json.dumps(body), "content_type": "application/json"} if body else {})
        return getattr(client, method)(f"/api{path}", **kwargs)
    return call


def test_the_api_marks_an_omission_in_the_source_and_refuses_offsets_past_it(study):
    assignment = _segment(study, "talk:2")  # source "The <b>cat</b> & the dog.", translation shorter
    api = _api(study.annotators[0])
    path = f"/assignments/{assignment.pk}/mqm-errors"
    omission = {"start": 21, "end": 24, "side": "source", "category": "Accuracy/Omission", "severity": "major"}
    made = api("post", path, omission)
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["side"], body["start"], body["end"], body["text"]) == ("source", 21, 24, "dog")
    span = ErrorSpan.objects.get(pk=body["id"])
    assert (span.start, span.end, span.source_start, span.source_end, span.match) == (None, None, 21, 24,
                                                                                        MatchKind.NONE)
    # offsets count in the source: 25 fits the source (25 characters), 26 does not
    source = assignment.item.inputs[mqm.SOURCE_HEADER]
    refused = api("post", path, {**omission, "start": 20, "end": len(source) + 1})
    assert refused.status_code == 422 and refused.json()["field"] == ["start", "end"]
    assert str(len(source)) in refused.json()["detail"]
    refused = api("post", path, {**omission, "side": "reference"})
    assert refused.status_code == 422 and refused.json()["field"] == "side"
    # a translation error keeps saying where it lies
    plain = api("post", path, {"start": 0, "end": 3, "category": "Fluency/Grammar", "severity": "minor"}).json()
    assert (plain["side"], plain["text"]) == ("output", "Die")


def test_a_protocol_that_marks_nothing_in_the_source_refuses_a_source_mark(make_user):
    annotator = make_user("esa-source")
    study = build_esa_study([annotator], name="ESA source", control_arm=0.0, per_item=1)
    assignment = next(iter(study.assignments(annotator)))
    with pytest.raises(AddedSpanError, match="marks no errors in the source") as refused:
        added_span_create(assignment=assignment, user=annotator, start=0, end=2, severity=2, side="source")
    assert refused.value.field == "side"


def test_the_screen_marks_the_source_shows_it_there_and_undo_brings_it_back(study, client):
    assignment = _segment(study, "talk:2")
    annotator = study.annotators[0]
    client.force_login(annotator)
    page = client.get(f"/work/{assignment.pk}/").content.decode()
    source_card = page[page.index('id="mqm-source"'):page.index('id="output"')]
    assert 'id="source-text"' in source_card and "&lt;b&gt;cat" in source_card and "<b>cat" not in source_card
    answer = client.post(f"/work/{assignment.pk}/mqm/", {"start": 4, "end": 14, "side": "source",
                                                         "category": "Accuracy/Omission", "severity": "major"},
                         HTTP_HX_REQUEST="true")
    assert answer.status_code == 200, answer.content
    html = answer.content.decode()
    marked = html[html.index('id="mqm-source"'):html.index('id="output"')]
    assert "hl-added" in marked  # the source part is swapped with the mark in it
    assert "[source 4–14]" in html and "in the source" in answer.headers["HX-Trigger"]
    span = ErrorSpan.objects.get(annotation__source__added__annotator=annotator)
    assert (span.text, span.source_start, span.start) == ("<b>cat</b>", 4, None)
    client.post(f"/mqm/{span.pk}/delete/", HTTP_HX_REQUEST="true")
    assert not ErrorSpan.objects.filter(annotation__source__added__annotator=annotator).exists()
    client.post(f"/work/{assignment.pk}/undo/", HTTP_HX_REQUEST="true")
    back = ErrorSpan.objects.get(annotation__source__added__annotator=annotator)
    assert (back.text, back.source_start, back.source_end, back.start) == ("<b>cat</b>", 4, 14, None)


def test_an_edit_of_a_source_mark_stays_in_the_source(study):
    assignment = _segment(study, "talk:2")
    annotator = study.annotators[0]
    span = added_span_create(assignment=assignment, user=annotator, start=21, end=24, side="source",
                             category="Accuracy/Omission", severity=MAJOR)
    added_span_update(span=span, assignment=assignment, user=annotator, start=17, end=24)
    span.refresh_from_db()
    assert (span.text, span.source_start, span.source_end, span.start, span.end) == ("the dog", 17, 24, None, None)


def test_source_marks_weigh_in_the_scores_and_round_trip_through_the_tsv(study, tmp_path):
    annotator = study.annotators[0]
    omitted = _segment(study, "talk:2")
    added_span_create(assignment=omitted, user=annotator, start=21, end=24, side="source",
                      category="Accuracy/Omission", severity=MAJOR)
    for a in study.assignments(annotator):
        assignment_finish(assignment=a, user=annotator)
    rows = {r["system"]: r for r in score_rows(campaign_ratings(study.campaign))}
    assert rows["sysA"]["score"] == pytest.approx(5 / 3)  # one Major over three segments

    out = io.StringIO()
    call_command("export_annotations", "--campaign", str(study.campaign.pk), "--format", "mqm-tsv", stdout=out)
    text = out.getvalue()
    [row] = [line.split("\t") for line in text.splitlines()[1:] if "<v>" in line]
    assert row[5] == "The <b>cat</b> & the <v>dog</v>." and "<v>" not in row[6]
    ratings = read_mqm_tsv(text.splitlines(keepends=True))
    [error] = [e for r in ratings for e in r.errors]
    assert (error.side, error.start, error.end) == ("source", 21, 24)

    path = tmp_path / "exported.tsv"
    path.write_text(text, encoding="utf-8")
    mqm_import(path=path, dataset_name="MQM source marks again", prefix="again")
    again = ErrorSpan.objects.get(annotation__item__dataset=Dataset.objects.get(name="MQM source marks again"),
                                  category="Accuracy/Omission")
    assert (again.text, again.source_start, again.source_end, again.start, again.note) == ("dog", 21, 24, None, "")
