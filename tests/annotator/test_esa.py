"""ESA and ESA^AI on the item screen's services and views: pre-fill by the documented rule, spans before the
score, missing content, the control arm's plain ESA, and every change logged with its milliseconds."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, EsaPrefill, EsaScore, MarkingTime, UnprimedMark, WorkAction
from annotator.selectors.spans import added_spans
from annotator.services.actions import activity_record
from annotator.services.added_spans import AddedSpanError, added_span_create
from annotator.services.assignments import AssignmentError, assignment_finish
from annotator.services.esa import (
    esa_missing_add,
    esa_open,
    esa_score_set,
    esa_span_add,
    esa_span_change,
    esa_span_delete,
    esa_spans_done,
)
from annotator.services.undo import action_redo, action_undo
from corpus.models import ErrorSpan
from corpus.protocols import esa, prefill
from corpus.protocols.errors import ProtocolError
from errors import Conflict
from tests.control_arm_study import script_clock, spend
from tests.esa_study import build_esa_study, word

pytestmark = pytest.mark.django_db

MINOR, MAJOR = esa.SEVERITY_CODES["minor"], esa.SEVERITY_CODES["major"]


def _primed(study, system: str, segment: int) -> Assignment:
    return Assignment.objects.select_related("campaign", "item").get(
        campaign=study.campaign, item=study.items[(system, segment)], in_control_arm=False)


def _unprimed(study, system: str, segment: int) -> Assignment:
    return Assignment.objects.select_related("campaign", "item").get(
        campaign=study.campaign, item=study.items[(system, segment)], in_control_arm=True)


@pytest.fixture
def study(make_user):
    return build_esa_study([make_user("esa1"), make_user("esa2")], control_arm=1.0)


def test_the_severity_rule_maps_the_machine_scale_onto_minor_and_major():
    assert [prefill.severity_from_machine(code) for code in (None, 1, 2, 3, 4, 5)] == \
        ["minor", "minor", "minor", "minor", "major", "major"]
    assert prefill.severity_from_machine(3, major_from=3) == "major"
    assert esa.clean_options({"major_from": 3}) == {"major_from": 3}
    with pytest.raises(ProtocolError, match="major_from"):
        esa.clean_options({"major_from": 6})
    with pytest.raises(ProtocolError, match="unknown option"):
        esa.clean_options({"tree": []})


def test_an_esa_ai_item_opens_with_the_machine_spans_mapped_and_overlaps_left_out(study):
    a = _primed(study, "sysB", 1)  # dddd 2, ffff 4, "eeee ffff" 1 (overlaps ffff)
    state = esa_open(assignment=a, user=a.annotator)
    assert state.prefilled
    spans = added_spans(a)
    assert [(s.text, s.severity) for s in spans] == [("dddd", MINOR), ("ffff", MAJOR)]
    origins = {p.span_id: p for p in EsaPrefill.objects.filter(assignment=a)}
    assert set(origins) == {s.pk for s in spans}
    assert {p.machine_severity for p in origins.values()} == {2, 4}
    # opening again changes nothing; the pre-fill is not on the undo stack
    esa_open(assignment=a, user=a.annotator)
    assert len(added_spans(a)) == 2 and not WorkAction.objects.filter(assignment=a).exists()


def test_the_control_arm_is_plain_esa_and_its_spans_done_end_the_marking(study):
    a = _unprimed(study, "sysB", 1)
    assert a.phase == "marking"
    assert not esa_open(assignment=a, user=a.annotator).prefilled
    assert added_spans(a) == []
    with script_clock() as clock:
        activity_record(assignment=a, opening=True)
        mark = esa_span_add(assignment=a, user=a.annotator, start=0, end=4, severity="major", ms=1500)
        spend(clock, a, a.annotator, 40)  # 40 s of active time, from the screen's signals
        a.refresh_from_db()
        esa_spans_done(assignment=a, user=a.annotator, ms=9000)
    a.refresh_from_db()
    # the reveal and the move into scoring: one phase machine, undo's boundary at the spans done
    assert a.phase == "scoring" and a.revealed_at is not None and a.boundary_at >= a.revealed_at
    assert list(UnprimedMark.objects.filter(assignment=a).values_list("span_id", flat=True)) == [mark.pk]
    assert MarkingTime.objects.get(assignment=a).seconds == 40


def test_the_score_comes_only_after_the_spans_and_the_spans_close_then(study):
    a = _primed(study, "sysA", 1)
    esa_open(assignment=a, user=a.annotator)
    with pytest.raises(Conflict, match="before the score"):
        esa_score_set(assignment=a, user=a.annotator, score=70)
    with pytest.raises(AssignmentError, match="spans"):
        assignment_finish(assignment=a, user=a.annotator)
    extra = esa_span_add(assignment=a, user=a.annotator, start=10, end=14, severity="minor")
    esa_spans_done(assignment=a, user=a.annotator, ms=5000)
    with pytest.raises(Conflict, match="already done"):
        esa_spans_done(assignment=a, user=a.annotator)
    with pytest.raises(AssignmentError, match="score"):
        assignment_finish(assignment=a, user=a.annotator)
    for bad in (101, -1, "high", 7.5):
        with pytest.raises(ProtocolError, match="score"):
            esa_score_set(assignment=a, user=a.annotator, score=bad)
    with pytest.raises(AddedSpanError, match="done"):
        esa_span_add(assignment=a, user=a.annotator, start=0, end=4, severity="minor")
    with pytest.raises(AddedSpanError, match="done"):
        esa_span_delete(span=extra, assignment=a, user=a.annotator)
    assert action_undo(assignment=a, user=a.annotator) is None  # undo does not reach back across spans done
    esa_score_set(assignment=a, user=a.annotator, score=40, ms=800)
    state = esa_score_set(assignment=a, user=a.annotator, score=65, ms=300)
    assert (state.score, state.score_changes, state.score_ms) == (65, 2, 300)
    assignment_finish(assignment=a, user=a.annotator)
    assert Assignment.objects.get(pk=a.pk).status == "done"


def test_missing_content_is_one_unlocated_span_that_undo_brings_back(study):
    a = _primed(study, "sysA", 2)
    esa_open(assignment=a, user=a.annotator)
    missing = esa_missing_add(assignment=a, user=a.annotator, severity="major", ms=1200)
    assert (missing.start, missing.end, missing.category, missing.text) == (None, None, esa.MISSING, "")
    with pytest.raises(Conflict, match="already marked"):
        esa_missing_add(assignment=a, user=a.annotator, severity="minor")
    with pytest.raises(AddedSpanError, match="no place"):
        added_span_create(assignment=a, user=a.annotator, start=0, end=4, category=esa.MISSING, severity=MINOR)
    esa_span_change(span=missing, assignment=a, user=a.annotator, severity="minor")
    assert ErrorSpan.objects.get(pk=missing.pk).severity == MINOR
    esa_span_delete(span=missing, assignment=a, user=a.annotator)
    assert added_spans(a) == []
    action_undo(assignment=a, user=a.annotator)
    back = added_spans(a)
    assert [(s.start, s.category, s.severity) for s in back] == [(None, esa.MISSING, MINOR)]


def test_every_change_to_a_prefilled_span_is_logged_with_its_ms_and_undo_keeps_its_origin(study):
    a = _primed(study, "sysB", 1)
    esa_open(assignment=a, user=a.annotator)
    dddd, ffff = added_spans(a)
    esa_span_change(span=dddd, assignment=a, user=a.annotator, severity="major", ms=2100)  # re-graded
    esa_span_change(span=ffff, assignment=a, user=a.annotator, start=word(2)[0], end=word(3)[1], ms=3400)  # resized
    esa_span_delete(span=ErrorSpan.objects.get(pk=dddd.pk), assignment=a, user=a.annotator, ms=900)  # deleted
    actions = list(WorkAction.objects.filter(assignment=a).order_by("id"))
    assert [x.ms for x in actions] == [2100, 3400, 900]
    assert actions[0].payload["before"]["severity"] == MINOR and actions[0].payload["after"]["severity"] == MAJOR
    assert actions[1].payload["after"]["start"] == 10 and actions[1].payload["after"]["end"] == 19
    assert actions[2].payload["after"] is None
    # the undone delete recreates the span under a new id, still known as pre-filled
    action_undo(assignment=a, user=a.annotator)
    recreated = next(s for s in added_spans(a) if s.text == "dddd")
    assert recreated.pk != dddd.pk
    assert EsaPrefill.objects.filter(assignment=a, span_id=recreated.pk, machine_severity=2).exists()
    action_redo(assignment=a, user=a.annotator)
    assert not any(s.text == "dddd" for s in added_spans(a))


def test_the_campaign_threshold_changes_the_mapping(make_user):
    study = build_esa_study([make_user("t1"), make_user("t2")], name="ESA threshold", control_arm=0.0,
                            protocol_options={"major_from": 2})
    a = Assignment.objects.select_related("campaign", "item").filter(
        campaign=study.campaign, item=study.items[("sysA", 3)]).first()  # nnnn severity 3
    esa_open(assignment=a, user=a.annotator)
    assert [s.severity for s in added_spans(a)] == [MAJOR]


def test_the_screen_takes_spans_then_the_score_by_post(client, study):
    a = _primed(study, "sysB", 3)  # "oooo pppp 😀 qqqq": pppp pre-filled Major
    client.force_login(a.annotator)
    page = client.get(f"/work/{a.pk}/")
    assert page.status_code == 200 and b"esa-slider" in page.content and b"ESA^AI" in page.content
    # qqqq after the emoji: the page counts the emoji as one character, as the server does
    added = client.post(f"/work/{a.pk}/esa/spans/", {"start": "12", "end": "16", "severity": "minor", "ms": "700"},
                        HTTP_HX_REQUEST="true")
    assert added.status_code == 200, added.content
    assert ErrorSpan.objects.filter(annotation__source__added__annotator=a.annotator, text="qqqq").exists()
    refused = client.post(f"/work/{a.pk}/esa/score/", {"score": "80"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 409
    bad = client.post(f"/work/{a.pk}/esa/spans/", {"start": "3", "end": "1", "severity": "minor"},
                      HTTP_HX_REQUEST="true")
    assert bad.status_code == 422 and b"offsets" in bad.content
    assert client.post(f"/work/{a.pk}/esa/done/", {"ms": "4000"}, HTTP_HX_REQUEST="true").status_code == 200
    assert client.post(f"/work/{a.pk}/esa/score/", {"score": "80", "ms": "900"}).status_code == 200
    assert EsaScore.objects.get(assignment=a).score == 80
    other = _primed(study, "sysA", 1)
    if other.annotator_id != a.annotator_id:  # someone else's item: not theirs to score
        assert client.post(f"/work/{other.pk}/esa/score/", {"score": "80"}).status_code in (403, 404)


def test_the_screen_escapes_dataset_text_and_api_creates_an_esa_campaign(client, make_user):
    from ninja.testing import TestClient

    from config.api import api
    from tests import factories as f

    judge = make_user("esa-hostile")
    data = f.dataset("ESA hostile", input_headers=["Source"], items=[
        {"external_id": "h1", "output": "<script>alert(1)</script> & <b>done</b>", "inputs": {"Source": "<i>x</i>"}}])
    answer = TestClient(api).post("/campaigns", json={
        "name": "ESA hostile", "dataset_id": data.pk, "run_ids": [], "annotators": [judge.username], "protocol": "esa",
        "protocol_options": {"major_from": 3}}, user=make_user("esa-res", role="researcher"))
    assert answer.status_code in (200, 201), answer.content
    a = Assignment.objects.get(annotator=judge)
    assert a.campaign.protocol_options == {"major_from": 3}
    client.force_login(judge)
    page = client.get(f"/work/{a.pk}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "&lt;i&gt;x&lt;/i&gt;" in page
    refused = TestClient(api).post("/campaigns", json={
        "name": "ESA bad", "dataset_id": data.pk, "run_ids": [], "annotators": [judge.username], "protocol": "esa",
        "protocol_options": {"major_from": 9}}, user=make_user("esa-res2", role="researcher"))
    assert refused.status_code == 422 and "major_from" in refused.json()["detail"]
