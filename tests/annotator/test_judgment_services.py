"""Judgment, undo, finish and added-span services: values, audit trail, invariants, refusals."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, Campaign, JudgmentEvent, SpanJudgment
from annotator.selectors import (
    assignment_for_user,
    error_groups,
    error_rows,
    item_errors,
    judged_span_for_assignment,
)
from annotator.services.added_spans import (
    AddedSpanError,
    added_span_create,
    added_span_delete,
    added_span_update,
)
from annotator.services.assignments import AssignmentError, assignment_finish
from annotator.services.judgments import JudgmentError, judgment_set, judgment_undo
from corpus.models import Annotation, AnnotationKind, ErrorSpan, MatchKind
from tests.annotator.builders import OUTPUT_1

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(built, two_annotators):
    ann1, _ = two_annotators
    return assignment_for_user(ann1, Assignment.objects.get(annotator=ann1, item=built.items[0]).pk)


def test_judgment_set_creates_once_and_audits_only_real_changes(built, work, two_annotators):
    ann1, _ = two_annotators
    span = built.spans["a1_family"]
    judgment_set(assignment=work, span=span, user=ann1, changes={"span_verdict": "error"})
    judgment_set(assignment=work, span=span, user=ann1, changes={"span_verdict": "error", "too_strict": "true"})
    judgment_set(assignment=work, span=span, user=ann1, changes={"corrected_severity": "2", "comment": "hm"})
    j = SpanJudgment.objects.get(span=span, annotator=ann1)
    assert (j.span_verdict, j.too_strict, j.corrected_severity, j.comment) == ("error", True, 2, "hm")
    events = list(JudgmentEvent.objects.filter(judgment=j).order_by("id").values_list("field", "old_value",
                                                                                      "new_value"))
    # The repeated span verdict wrote no second event.
    assert events == [("span_verdict", "", "error"), ("too_strict", "false", "true"),
                      ("corrected_severity", "", "2"), ("comment", "", "hm")]
    assert all(e.user_id == ann1.pk for e in JudgmentEvent.objects.filter(judgment=j))
    work.refresh_from_db()
    assert work.status == Assignment.Status.IN_PROGRESS and work.started_at is not None


@pytest.mark.parametrize("changes", [
    {"span_verdict": "maybe"}, {"explanation_verdict": "great"}, {"corrected_severity": "6"},
    {"corrected_severity": "x"}, {"too_strict": "perhaps"}, {"annotator_id": "3"},
])
def test_judgment_set_refuses_bad_values(built, work, two_annotators, changes):
    with pytest.raises(JudgmentError):
        judgment_set(assignment=work, span=built.spans["a1_family"], user=two_annotators[0], changes=changes)
    assert not SpanJudgment.objects.exists()


def test_judgment_set_refuses_other_users_and_closed_campaigns(built, work, two_annotators):
    ann1, ann2 = two_annotators
    with pytest.raises(JudgmentError, match="assigned annotator"):
        judgment_set(assignment=work, span=built.spans["a1_family"], user=ann2, changes={"span_verdict": "error"})
    Campaign.objects.filter(pk=built.campaign.pk).update(status=Campaign.Status.CLOSED)
    work.campaign.refresh_from_db()
    with pytest.raises(JudgmentError, match="closed"):
        judgment_set(assignment=work, span=built.spans["a1_family"], user=ann1, changes={"span_verdict": "error"})


def test_undo_walks_back_the_users_own_changes_in_reverse_order(built, work, two_annotators):
    ann1, _ = two_annotators
    a, b = built.spans["a1_family"], built.spans["b1_family"]
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "error"})
    judgment_set(assignment=work, span=b, user=ann1, changes={"explanation_verdict": "vague"})
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "not_error"})
    judgment, event = judgment_undo(assignment=work, user=ann1)
    assert (judgment.span_id, event.field, judgment.span_verdict) == (a.pk, "span_verdict", "error")
    judgment, _ = judgment_undo(assignment=work, user=ann1)
    assert (judgment.span_id, judgment.explanation_verdict) == (b.pk, "")
    judgment, _ = judgment_undo(assignment=work, user=ann1)
    assert (judgment.span_id, judgment.span_verdict) == (a.pk, "")
    assert judgment_undo(assignment=work, user=ann1) is None
    # Three changes, three reverts; the reverts are themselves born undone.
    assert JudgmentEvent.objects.filter(undone=True).count() == 6
    assert JudgmentEvent.objects.filter(undone=False).count() == 0


def test_finish_needs_both_verdicts_on_every_error_and_undo_reopens(built, work, two_annotators):
    ann1, _ = two_annotators
    rows = error_rows(work)
    assert len(rows) == 3
    for row in rows:
        judgment_set(assignment=work, span=row.span, user=ann1, changes={"span_verdict": "error"})
    with pytest.raises(AssignmentError, match="3 of 3 errors"):
        assignment_finish(assignment=work, user=ann1)
    for row in rows[:2]:
        judgment_set(assignment=work, span=row.span, user=ann1, changes={"explanation_verdict": "correct"})
    with pytest.raises(AssignmentError, match="1 of 3 errors"):
        assignment_finish(assignment=work, user=ann1)
    judgment_set(assignment=work, span=rows[2].span, user=ann1, changes={"explanation_verdict": "incorrect"})
    done = assignment_finish(assignment=work, user=ann1, seconds=42)
    assert done.status == Assignment.Status.DONE and done.seconds_spent == 42
    judgment_undo(assignment=work, user=ann1)  # clears the last explanation verdict
    work.refresh_from_db()
    assert work.status == Assignment.Status.IN_PROGRESS and work.finished_at is None


def test_the_other_annotators_judgments_do_not_count_for_me(built, two_annotators):
    ann1, ann2 = two_annotators
    mine = assignment_for_user(ann1, Assignment.objects.get(annotator=ann1, item=built.items[1]).pk)
    theirs = assignment_for_user(ann2, Assignment.objects.get(annotator=ann2, item=built.items[1]).pk)
    judgment_set(assignment=theirs, span=built.spans["b2_rating"], user=ann2,
                 changes={"span_verdict": "error", "explanation_verdict": "correct"})
    [row] = error_rows(mine)
    assert row.judgment is None
    with pytest.raises(AssignmentError):
        assignment_finish(assignment=mine, user=ann1)


def test_reading_order_groups_one_place_and_lists_missing_locations_last(built, work):
    rows, groups = item_errors(work)
    s = built.spans
    assert [[r.span.pk for r in g.rows] for g in groups] == [[s["b1_family"].pk, s["a1_family"].pk],
                                                             [s["a1_missing"].pk]]
    assert [r.number for r in rows] == [1, 2, 3]
    start = OUTPUT_1.index("is not family-friendly")
    assert (groups[0].start, groups[0].end, groups[0].text) == (start, start + 22, "is not family-friendly")
    assert groups[1].start is None and groups[1].text == "serves French food"
    # Labels are neutral and distinct.
    assert {r.label for r in rows} == {"Evaluator A", "Evaluator B"}
    assert error_groups([], OUTPUT_1) == []


def test_only_the_merged_answer_of_a_run_is_judged(built, work):
    """A per-model answer inside an ensemble run is not shown and cannot be judged through the assignment."""
    alpha = built.runs[0]
    inner = Annotation.objects.create(item=built.items[0], aspect="accuracy", source="alpha-model-1",
                                      kind=AnnotationKind.ANNOTATOR, model="m1", run=alpha)
    hidden = ErrorSpan.objects.create(annotation=inner, text="coffee shop", start=23, end=34,
                                      match=MatchKind.EXACT, explanation="x")
    assert hidden.pk not in {r.span.pk for r in error_rows(work)}
    from django.http import Http404

    with pytest.raises(Http404):
        judged_span_for_assignment(work, hidden.pk)
    with pytest.raises(Http404):  # a span of another item is refused too
        judged_span_for_assignment(work, built.spans["b2_rating"].pk)


def test_added_span_offsets_are_checked_and_text_comes_from_the_output(built, work, two_annotators):
    ann1, _ = two_annotators
    for start, end in [(-1, 3), (5, 5), (9, 4), (0, len(OUTPUT_1) + 1), ("a", 3)]:
        with pytest.raises(AddedSpanError):
            added_span_create(assignment=work, user=ann1, start=start, end=end)
    span = added_span_create(assignment=work, user=ann1, start=4, end=17, category="name", severity=2, note="n")
    assert (span.text, span.start, span.end, span.match) == ("Copper Kettle", 4, 17, "exact")
    annotation = span.annotation
    assert (annotation.kind, annotation.source, annotation.author_id, annotation.campaign_id, annotation.aspect) == (
        "human", "ann1", ann1.pk, built.campaign.pk, "accuracy")
    last = len(OUTPUT_1)
    second = added_span_create(assignment=work, user=ann1, start=last - 1, end=last)
    assert second.text == "." and second.annotation_id == annotation.pk and second.position == 2

    added_span_update(span=span, assignment=work, user=ann1, severity=None, note="better", start=0)
    span.refresh_from_db()
    assert (span.start, span.end, span.text, span.severity, span.explanation, span.category) == (
        0, 17, "The Copper Kettle", None, "better", "name")
    with pytest.raises(AddedSpanError):
        added_span_update(span=span, assignment=work, user=ann1, severity=9)

    added_span_delete(span=span, assignment=work, user=ann1)
    assert Annotation.objects.filter(pk=annotation.pk).exists()
    added_span_delete(span=second, assignment=work, user=ann1)
    assert not Annotation.objects.filter(pk=annotation.pk).exists()
