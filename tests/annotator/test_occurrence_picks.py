"""The expert's pick among an ambiguous span's occurrences: API, versioning, audit trail and undo."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, JudgmentEvent, SpanJudgment
from annotator.selectors.spans import span_handle
from tests.annotator.test_api_work import Api
from tests.factories import build_campaign

pytestmark = pytest.mark.django_db

TWICE = "The Copper Kettle is not family-friendly. It is cheap and not family-friendly."
FIRST = TWICE.index("not family-friendly")
SECOND = TWICE.rindex("not family-friendly")
N = len("not family-friendly")


@pytest.fixture
def setup(make_user):
    ann = make_user("picker")
    built = build_campaign([ann], per_item=1, output_1=TWICE)
    span = built.spans["a1_family"]
    span.ambiguous = True
    span.save(update_fields=["ambiguous"])
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    return ann, built, assignment, span_handle(assignment.pk, span.pk)


def _card(api, assignment, handle):
    detail = api("get", f"/assignments/{assignment.pk}").json()
    return next(e for e in detail["errors"] if e["span_id"] == handle)


def test_ambiguous_card_lists_its_occurrences_and_carries_the_pick(setup):
    ann, built, assignment, handle = setup
    api = Api(ann)
    card = _card(api, assignment, handle)
    assert card["occurrences"] == [{"start": FIRST, "end": FIRST + N}, {"start": SECOND, "end": SECOND + N}]
    assert (card["start"], card["picked"], card["machine_start"]) == (FIRST, False, FIRST)
    others = [e for e in api("get", f"/assignments/{assignment.pk}").json()["errors"] if e["span_id"] != handle]
    assert all(e["occurrences"] == [] for e in others)

    r = api("patch", f"/assignments/{assignment.pk}/judgments/{handle}/occurrence", {"index": 1, "ms": 850})
    assert r.status_code == 200, r.content
    assert (r.json()["picked"], r.json()["picked_start"], r.json()["picked_end"]) == (True, SECOND, SECOND + N)
    card = _card(api, assignment, handle)
    assert (card["start"], card["end"], card["picked"]) == (SECOND, SECOND + N, True)
    assert (card["machine_start"], card["machine_end"]) == (FIRST, FIRST + N)  # the machine's offsets stay
    built.spans["a1_family"].refresh_from_db()
    assert built.spans["a1_family"].start == FIRST
    event = JudgmentEvent.objects.get(judgment__assignment=assignment, field="occurrence")
    assert (event.old_value, event.new_value, event.ms) == ("", f"{SECOND}-{SECOND + N}", 850)

    r = api("patch", f"/assignments/{assignment.pk}/judgments/{handle}/occurrence", {"none": True})
    card = _card(api, assignment, handle)
    assert (card["start"], card["end"], card["picked"]) == (None, None, True)
    r = api("patch", f"/assignments/{assignment.pk}/judgments/{handle}/occurrence", {"reset": True})
    card = _card(api, assignment, handle)
    assert (card["start"], card["picked"]) == (FIRST, False)


def test_occurrence_pick_is_versioned_and_undoable(setup):
    ann, _, assignment, handle = setup
    api = Api(ann)
    url = f"/assignments/{assignment.pk}/judgments/{handle}/occurrence"
    first = api("patch", url, {"index": 1, "version": 0}).json()
    assert first["version"] == 1
    stale = api("patch", url, {"index": 0, "version": 0})
    assert stale.status_code == 409
    api("patch", url, {"none": True, "version": 1})
    undone = api("post", f"/assignments/{assignment.pk}/undo").json()
    assert undone["field"] == "occurrence" and undone["judgment"]["picked_start"] == SECOND
    assert "occurrence pick" in undone["message"]
    redone = api("post", f"/assignments/{assignment.pk}/redo").json()
    assert redone["judgment"]["picked"] is True and redone["judgment"]["picked_start"] is None
    stored = SpanJudgment.objects.get(assignment=assignment)
    assert (stored.picked_none, stored.picked_start) == (True, None)


@pytest.mark.parametrize(("body", "names"), [
    ({"index": 2}, "index: must be 0 to 1"),
    ({"index": -1}, "index"),
    ({"index": 0, "none": True}, "index, none"),
    ({"none": True, "reset": True}, "none, reset"),
    ({}, "exactly one of index, none, reset"),
])
def test_occurrence_pick_refuses_bad_input_naming_the_field(setup, body, names):
    ann, _, assignment, handle = setup
    r = Api(ann)("patch", f"/assignments/{assignment.pk}/judgments/{handle}/occurrence", body)
    assert r.status_code == 422 and names in r.json()["detail"]
    assert not SpanJudgment.objects.filter(assignment=assignment).exists()


def test_occurrence_pick_refuses_a_span_that_is_not_ambiguous(setup):
    ann, built, assignment, _ = setup
    plain = span_handle(assignment.pk, built.spans["b1_family"].pk)
    r = Api(ann)("patch", f"/assignments/{assignment.pk}/judgments/{plain}/occurrence", {"index": 0})
    assert r.status_code == 422 and "span_id" in r.json()["detail"] and "not ambiguous" in r.json()["detail"]


def test_the_plain_judgment_writes_cannot_set_an_unchecked_pick(setup, client):
    ann, _, assignment, handle = setup
    client.force_login(ann)
    r = client.post(f"/work/{assignment.pk}/errors/{handle}/", {"field": "occurrence", "value": "0-3"})
    assert r.status_code == 422 and "unknown field" in r.content.decode()
    assert not SpanJudgment.objects.filter(assignment=assignment, picked_start__isnull=False).exists()


def _two_picks(two_annotators, picks):
    from annotator.services.occurrences import occurrence_pick

    built = build_campaign(list(two_annotators), per_item=2, output_1=TWICE, name="picked")
    span = built.spans["a1_family"]
    span.ambiguous = True
    span.save(update_fields=["ambiguous"])
    for user, pick in zip(two_annotators, picks, strict=True):
        work = Assignment.objects.get(annotator=user, item=built.items[0])
        occurrence_pick(assignment=work, span=span, user=user, **pick)
    return built


def _picked_span(records):
    return next(s for r in records for a in r["annotations"] for s in a["spans"]
                if s.get("ambiguous") and s["judgments"])


def test_exports_carry_the_picks_and_the_round_trip_keeps_them(two_annotators, tmp_path):
    import csv
    import io
    import json

    from tests.annotator.test_import_export import _export, _import, _without_consensus

    _two_picks(two_annotators, [{"index": 1}, {"none": True}])
    first = _export("picked data")
    records = [json.loads(line) for line in first.splitlines()]
    span = _picked_span(records)
    assert (span["start"], span["end"]) == (FIRST, FIRST + N)  # the machine's offsets stay the span's
    assert [j.get("occurrence") for j in span["judgments"]] == [
        {"start": SECOND, "end": SECOND + N}, {"start": None, "end": None}]
    # the picks disagree: no majority place, the span is unresolved
    assert span["consensus"]["method"] == "unresolved" and "occurrence" not in span["consensus"]
    rows = list(csv.DictReader(io.StringIO(_export("picked data", "csv"))))
    picked_rows = {r["annotator"]: r["occurrence"] for r in rows if r["ambiguous"] == "true"}
    assert picked_rows == {"ann1": f"{SECOND}-{SECOND + N}", "ann2": "none"}

    path = tmp_path / "picked.jsonl"
    path.write_text(first)
    _import(path, "picked copy", "data-to-text")
    stored = SpanJudgment.objects.filter(span__annotation__item__dataset__name="picked copy").order_by("pk")
    assert [(j.picked_start, j.picked_none) for j in stored] == [(SECOND, False), (None, True)]
    again = [json.loads(line) | {"dataset": 0} for line in _export("picked copy").splitlines()]
    assert _without_consensus(again) == _without_consensus([r | {"dataset": 0} for r in records])


def test_consensus_takes_the_picked_place_when_the_judges_agree(two_annotators):
    import json

    from tests.annotator.test_import_export import _export

    _two_picks(two_annotators, [{"index": 1}, {"index": 1}])
    span = _picked_span([json.loads(line) for line in _export("picked data").splitlines()])
    assert span["consensus"]["occurrence"] == {"start": SECOND, "end": SECOND + N}


def test_import_refuses_a_pick_that_is_not_an_occurrence(tmp_path):
    import json

    from tests.annotator.test_import_export import _assert_refused

    record = {"id": "x1", "inputs": {"Data": "d"}, "outputs": {"Text": TWICE}, "spans": [{
        "start": FIRST, "end": FIRST + N, "ambiguous": True,
        "judgments": [{"annotator": "a", "span_verdict": "error", "occurrence": {"start": 0, "end": 3}}]}]}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    _assert_refused(path, "judgments", "is not an occurrence of")


def test_disagreeing_picks_are_a_dispute_on_the_review_screen(two_annotators, make_user):
    from annotator.selectors.review import review_queue

    built = _two_picks(two_annotators, [{"index": 0}, {"index": 1}])
    span = built.spans["a1_family"]
    queue = review_queue(built.campaign)
    assert [e.span.pk for e in queue] == [span.pk]
    assert sorted(v.occurrence for v in queue[0].verdicts) == [(FIRST, FIRST + N), (SECOND, SECOND + N)]


def test_agreeing_picks_are_no_dispute(two_annotators):
    from annotator.selectors.review import review_queue

    built = _two_picks(two_annotators, [{"index": 1}, {"index": 1}])
    assert review_queue(built.campaign) == []
