"""Judgment, undo, finish and added-span services: values, audit trail, invariants, refusals."""

from __future__ import annotations

import pytest

from accounts.access import AccessError
from annotator.access import assignment_for_user
from annotator.models import Assignment, Campaign, JudgmentEvent, SpanJudgment
from annotator.selectors.spans import error_groups, error_rows, item_errors, judged_span_for_assignment
from annotator.services.added_spans import (
    AddedSpanError,
    added_span_create,
    added_span_delete,
    added_span_update,
)
from annotator.services.assignments import AssignmentError, assignment_finish
from annotator.services.judgments import JudgmentError, judgment_set
from annotator.services.undo import action_undo
from corpus.models import Annotation, AnnotationKind, ErrorSpan, MatchKind
from tests.factories import OUTPUT_1

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
    with pytest.raises(AccessError, match="assigned annotator") as refused:
        judgment_set(assignment=work, span=built.spans["a1_family"], user=ann2, changes={"span_verdict": "error"})
    assert refused.value.status == 403
    Campaign.objects.filter(pk=built.campaign.pk).update(status=Campaign.Status.CLOSED)
    work.campaign.refresh_from_db()
    with pytest.raises(AccessError, match="closed") as refused:
        judgment_set(assignment=work, span=built.spans["a1_family"], user=ann1, changes={"span_verdict": "error"})
    assert refused.value.status == 409
    assert not SpanJudgment.objects.exists()


def test_undo_walks_back_the_users_own_changes_in_reverse_order(built, work, two_annotators):
    ann1, _ = two_annotators
    a, b = built.spans["a1_family"], built.spans["b1_family"]
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "error"})
    judgment_set(assignment=work, span=b, user=ann1, changes={"explanation_verdict": "vague"})
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "not_error"})
    step = action_undo(assignment=work, user=ann1)
    judgment = step.judgment
    assert (judgment.span_id, step.action.payload["field"], judgment.span_verdict) == (a.pk, "span_verdict", "error")
    judgment = action_undo(assignment=work, user=ann1).judgment
    assert (judgment.span_id, judgment.explanation_verdict) == (b.pk, "")
    judgment = action_undo(assignment=work, user=ann1).judgment
    assert (judgment.span_id, judgment.span_verdict) == (a.pk, "")
    assert action_undo(assignment=work, user=ann1) is None
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
    step = action_undo(assignment=work, user=ann1)  # clears the last explanation verdict
    assert step.reopened and "open again" in step.message
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
    inner = Annotation.objects.create(item=built.items[0], aspect="accuracy", source=alpha,
                                      kind=AnnotationKind.ANNOTATOR, model="m1")
    hidden = ErrorSpan.objects.create(annotation=inner, text="coffee shop", start=23, end=34,
                                      match=MatchKind.EXACT, explanation="x")
    assert hidden.pk not in {r.span.pk for r in error_rows(work)}
    with pytest.raises(AccessError) as refused:
        judged_span_for_assignment(work, hidden.pk)
    assert refused.value.status == 404
    with pytest.raises(AccessError):  # a span of another item is refused too
        judged_span_for_assignment(work, built.spans["b2_rating"].pk)


def test_added_span_offsets_are_checked_and_text_comes_from_the_output(built, work, two_annotators):
    ann1, _ = two_annotators
    for start, end in [(-1, 3), (5, 5), (9, 4), (0, len(OUTPUT_1) + 1), ("a", 3)]:
        with pytest.raises(AddedSpanError):
            added_span_create(assignment=work, user=ann1, start=start, end=end)
    span = added_span_create(assignment=work, user=ann1, start=4, end=17, category="NAME", severity=2, note="n")
    assert (span.text, span.start, span.end, span.match) == ("Copper Kettle", 4, 17, "exact")
    annotation = span.annotation
    source = annotation.source.added
    assert (annotation.kind, source.label, annotation.author_id, source.campaign_id, annotation.aspect) == (
        "human", "ann1", ann1.pk, built.campaign.pk, "accuracy")
    last = len(OUTPUT_1)
    second = added_span_create(assignment=work, user=ann1, start=last - 1, end=last)
    assert second.text == "." and second.annotation_id == annotation.pk and second.position == 2

    added_span_update(span=span, assignment=work, user=ann1, severity=None, note="better", start=0)
    span.refresh_from_db()
    assert (span.start, span.end, span.text, span.severity, span.explanation, span.category) == (
        0, 17, "The Copper Kettle", None, "better", "NAME")
    with pytest.raises(AddedSpanError):
        added_span_update(span=span, assignment=work, user=ann1, severity=9)

    added_span_delete(span=span, assignment=work, user=ann1)
    assert Annotation.objects.filter(pk=annotation.pk).exists()
    added_span_delete(span=second, assignment=work, user=ann1)
    assert not Annotation.objects.filter(pk=annotation.pk).exists()


def _second_campaign(built, annotators) -> Campaign:
    """Another study of the same dataset and runs, with the same annotators."""
    from studies.setup import CampaignSpec, campaign_create

    return campaign_create(CampaignSpec(
        name="Second study", dataset=built.dataset, runs=built.runs, annotators=list(annotators),
        aspects=["accuracy"], annotators_per_item=2, seed=11),
    )


def test_judging_in_one_campaign_leaves_another_untouched(built, work, two_annotators):
    ann1, _ = two_annotators
    second = _second_campaign(built, two_annotators)
    other = assignment_for_user(ann1, Assignment.objects.get(campaign=second, annotator=ann1, item=built.items[0]).pk)
    rows = error_rows(work)
    for row in rows:
        judgment_set(assignment=work, span=row.span, user=ann1,
                     changes={"span_verdict": "error", "explanation_verdict": "correct"})
    assignment_finish(assignment=work, user=ann1)
    # The same spans, the same expert, another campaign: nothing is pre-filled, nothing is done.
    fresh = error_rows(other)
    assert {r.span.pk for r in fresh} == {r.span.pk for r in rows}
    assert all(r.judgment is None for r in fresh)
    with pytest.raises(AssignmentError, match=f"{len(rows)} of {len(rows)} errors"):
        assignment_finish(assignment=other, user=ann1)
    # Judging there creates a second judgment of the same span; undo there touches only that one.
    span = rows[0].span
    judgment_set(assignment=other, span=span, user=ann1, changes={"span_verdict": "not_error"})
    action_undo(assignment=other, user=ann1)
    verdicts = dict(
        SpanJudgment.objects.filter(span=span, annotator=ann1).values_list("assignment_id", "span_verdict")
    )
    assert verdicts == {work.pk: "error", other.pk: ""}
    work.refresh_from_db()
    assert work.status == Assignment.Status.DONE


def test_an_expert_adds_errors_to_the_same_item_in_two_campaigns(built, work, two_annotators):
    ann1, _ = two_annotators
    second = _second_campaign(built, two_annotators)
    other = assignment_for_user(ann1, Assignment.objects.get(campaign=second, annotator=ann1, item=built.items[0]).pk)
    first_span = added_span_create(assignment=work, user=ann1, start=4, end=17)
    second_span = added_span_create(assignment=other, user=ann1, start=0, end=3)
    assert first_span.annotation_id != second_span.annotation_id
    from annotator.selectors.spans import added_spans

    assert [s.pk for s in added_spans(work)] == [first_span.pk]
    assert [s.pk for s in added_spans(other)] == [second_span.pk]
    # Each span is edited through its own campaign's assignment only.
    from annotator.access import added_span_for_user

    assert added_span_for_user(ann1, second_span.pk)[1].pk == other.pk
