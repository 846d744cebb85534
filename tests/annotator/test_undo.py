"""Undo and redo: every kind of action, newest first, with redo until something new is done."""

from __future__ import annotations

import pytest

from annotator.access import assignment_for_user
from annotator.models import Assignment, SpanJudgment, WorkAction
from annotator.selectors.spans import added_spans, error_rows
from annotator.services.added_spans import added_span_create, added_span_delete, added_span_update
from annotator.services.assignments import assignment_finish
from annotator.services.judgments import judgment_set
from annotator.services.undo import action_redo, action_undo

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(built, two_annotators):
    ann1, _ = two_annotators
    return assignment_for_user(ann1, Assignment.objects.get(annotator=ann1, item=built.items[0]).pk)


def _texts(assignment: Assignment) -> list[str]:
    return [s.text for s in added_spans(assignment)]


def _verdict(assignment: Assignment, span) -> tuple[str, str]:
    j = SpanJudgment.objects.filter(assignment=assignment, span=span).first()
    return (j.span_verdict, j.explanation_verdict) if j else ("", "")


def test_undo_after_adding_an_error_removes_that_error_and_nothing_else(built, work, two_annotators):
    ann1, _ = two_annotators
    a = built.spans["a1_family"]
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "error"})
    judgment_set(assignment=work, span=a, user=ann1, changes={"explanation_verdict": "vague"})
    added_span_create(assignment=work, user=ann1, start=0, end=3, category="NAME")
    added_span_create(assignment=work, user=ann1, start=4, end=17, category="WORD")
    step = action_undo(assignment=work, user=ann1)
    assert step.span_id is None and "Copper Kettle" in step.message
    assert _texts(work) == ["The"]
    assert _verdict(work, a) == ("error", "vague")  # the older verdict is untouched


def test_undo_walks_every_kind_back_and_redo_replays_it(built, work, two_annotators):
    ann1, _ = two_annotators
    a = built.spans["a1_family"]
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "error", "too_strict": True})
    span = added_span_create(assignment=work, user=ann1, start=4, end=17, category="NAME", severity=2)
    added_span_update(span=span, assignment=work, user=ann1, category="NUMBER", note="wrong venue")
    judgment_set(assignment=work, span=a, user=ann1, changes={"comment": "see the data", "corrected_severity": 5})
    added_span_delete(span=span, assignment=work, user=ann1)
    assert _texts(work) == []

    action_undo(assignment=work, user=ann1)  # the delete: the error is back, with its edit
    (back,) = added_spans(work)
    assert (back.text, back.category, back.explanation, back.severity) == ("Copper Kettle", "NUMBER", "wrong venue", 2)
    action_undo(assignment=work, user=ann1)  # severity correction (one field per action, newest first)
    action_undo(assignment=work, user=ann1)  # comment
    j = SpanJudgment.objects.get(assignment=work, span=a)
    assert (j.comment, j.corrected_severity) == ("", None)
    action_undo(assignment=work, user=ann1)  # the edit
    assert [(s.category, s.explanation) for s in added_spans(work)] == [("NAME", "")]
    action_undo(assignment=work, user=ann1)  # the add
    assert _texts(work) == []
    action_undo(assignment=work, user=ann1)
    action_undo(assignment=work, user=ann1)
    j.refresh_from_db()
    assert (j.span_verdict, j.too_strict) == ("", False)
    assert action_undo(assignment=work, user=ann1) is None

    # Redo replays in the original order, through the recreated error's new id.
    while action_redo(assignment=work, user=ann1) is not None:
        pass
    j.refresh_from_db()
    assert (j.span_verdict, j.too_strict, j.comment, j.corrected_severity) == ("error", True, "see the data", 5)
    assert _texts(work) == []  # the last action was the delete


def test_a_new_action_ends_redo(built, work, two_annotators):
    ann1, _ = two_annotators
    a = built.spans["a1_family"]
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "error"})
    action_undo(assignment=work, user=ann1)
    judgment_set(assignment=work, span=a, user=ann1, changes={"span_verdict": "not_error"})
    assert action_redo(assignment=work, user=ann1) is None
    assert _verdict(work, a) == ("not_error", "")


def test_undo_on_a_finished_item_says_it_reopens_it(built, work, two_annotators):
    ann1, _ = two_annotators
    for row in error_rows(work):
        judgment_set(assignment=work, span=row.span, user=ann1,
                     changes={"span_verdict": "error", "explanation_verdict": "correct"})
    added_span_create(assignment=work, user=ann1, start=0, end=3)
    assignment_finish(assignment=work, user=ann1)
    first = action_undo(assignment=work, user=ann1)  # the added error: the item stays finished
    assert not first.reopened
    assert Assignment.objects.get(pk=work.pk).status == Assignment.Status.DONE
    second = action_undo(assignment=work, user=ann1)
    assert second.reopened and "open again" in second.message
    assert Assignment.objects.get(pk=work.pk).status == Assignment.Status.IN_PROGRESS


def test_each_annotator_has_their_own_stack(built, two_annotators):
    ann1, ann2 = two_annotators
    mine = assignment_for_user(ann1, Assignment.objects.get(annotator=ann1, item=built.items[1]).pk)
    theirs = assignment_for_user(ann2, Assignment.objects.get(annotator=ann2, item=built.items[1]).pk)
    span = built.spans["b2_rating"]
    judgment_set(assignment=theirs, span=span, user=ann2, changes={"span_verdict": "error"})
    assert action_undo(assignment=mine, user=ann1) is None
    assert _verdict(theirs, span) == ("error", "")
    assert WorkAction.objects.filter(user=ann2, undone=False).count() == 1
