"""One decision of which answer is judged (evaluation.answers) and versioned saves: a merged answer with no
spans leaves nothing to judge and the item finishes at once; a save typed against an old version is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.access import AccessError
from analytics.selectors.base import _final_q
from annotator.models import Assignment, JudgmentEvent, SpanJudgment
from annotator.selectors.spans import error_rows, judged_span_for_assignment, span_handle
from annotator.services.assignments import assignment_finish
from annotator.services.judgments import StaleJudgment, judgment_set
from corpus.models import Annotation, AnnotationKind
from studies.setup import CampaignSpec, campaign_create
from tests.factories import annotation, dataset, item, run, span_at

pytestmark = pytest.mark.django_db


@pytest.fixture
def empty_merge(make_user):
    """Item 1: the ensemble's merged answer has no spans, but one annotator model listed two. Item 2: the merged
    answer has one span."""
    expert = make_user("merge-expert")
    data = dataset("merge data")
    one = item(data, "m1", "The Olive Grove is cheap and near the river.", position=1)
    two = item(data, "m2", "The Mill serves Italian food.", position=2)
    evaluator = run(data, "merge-run")
    annotation(one, evaluator, kind=AnnotationKind.ENSEMBLE)
    model_list = annotation(one, evaluator, kind=AnnotationKind.ANNOTATOR, model="m-a")
    span_at(model_list, 0, "cheap")
    span_at(model_list, 1, "near the river")
    merged_two = annotation(two, evaluator, kind=AnnotationKind.ENSEMBLE)
    kept = span_at(merged_two, 0, "Italian food")
    campaign = campaign_create(CampaignSpec(name="merge", dataset=data, runs=[evaluator], annotators=[expert],
                                            aspects=["accuracy"]))
    first = Assignment.objects.get(campaign=campaign, item=one)
    second = Assignment.objects.get(campaign=campaign, item=two)
    return expert, first, second, model_list, kept, evaluator


def test_judged_answer_is_the_merged_one_even_without_spans(empty_merge):
    expert, first, second, model_list, kept, evaluator = empty_merge
    assert error_rows(first) == []
    assert [r.span.pk for r in error_rows(second)] == [kept.pk]
    for model_span in model_list.spans.all():
        with pytest.raises(AccessError):
            judged_span_for_assignment(first, model_span.pk)
    # The analytics count the same annotations: the merged ones, never the per-model list.
    answers = set(Annotation.objects.filter(_final_q({evaluator.pk: "ensemble"})).values_list("kind", flat=True))
    assert answers == {AnnotationKind.ENSEMBLE}


def test_item_whose_merged_answer_has_no_spans_finishes_at_once(empty_merge):
    expert, first, *_ = empty_merge
    assignment_finish(assignment=first, user=expert)
    first.refresh_from_db()
    assert first.status == Assignment.Status.DONE


def test_verdict_on_a_model_span_behind_the_merge_is_404_not_a_debug_page(client, empty_merge):
    expert, first, _, model_list, *_ = empty_merge
    client.force_login(expert)
    page = client.get(reverse("item_screen", args=[first.pk]))
    assert page.status_code == 200
    assert "No machine errors on this item" in page.content.decode()
    hidden = model_list.spans.first()
    answer = client.post(reverse("judgment_save", args=[first.pk, span_handle(first.pk, hidden.pk)]),
                         {"field": "span_verdict", "value": "error"})
    assert answer.status_code == 404


def test_save_against_an_old_version_is_refused_with_the_stored_card(client, empty_merge):
    expert, _, second, _, kept, _ = empty_merge
    client.force_login(expert)
    url = reverse("judgment_save", args=[second.pk, span_handle(second.pk, kept.pk)])
    ok = client.post(url, {"field": "span_verdict", "value": "error", "version": "0"})
    assert ok.status_code == 200 and 'data-version="1"' in ok.content.decode()
    # A second tab typed against version 0 too: refused, and the answer shows the stored state.
    stale = client.post(url, {"field": "span_verdict", "value": "not_error", "version": "0"})
    assert stale.status_code == 409
    assert 'data-span-verdict="error"' in stale.content.decode()
    assert "changed since you typed" in stale.headers["HX-Trigger"]
    assert SpanJudgment.objects.get(span=kept).span_verdict == "error"
    # Typed against the current version: accepted, and every accepted save counts (even a repeat).
    assert client.post(url, {"field": "span_verdict", "value": "error", "version": "1"}).status_code == 200
    assert SpanJudgment.objects.get(span=kept).version == 2


def test_judgment_set_checks_the_expected_version(empty_merge):
    expert, _, second, _, kept, _ = empty_merge
    judgment_set(assignment=second, span=kept, user=expert, changes={"span_verdict": "error"}, expected_version=0)
    with pytest.raises(StaleJudgment) as refused:
        judgment_set(assignment=second, span=kept, user=expert, changes={"explanation_verdict": "correct"},
                     expected_version=0)
    assert (refused.value.expected, refused.value.current) == (0, 1)
    stored = SpanJudgment.objects.get(span=kept)
    assert (stored.span_verdict, stored.explanation_verdict) == ("error", "")


def test_judgment_set_accepts_a_replay_of_the_save_that_made_the_stored_version(empty_merge):
    expert, _, second, _, kept, _ = empty_merge
    changes = {"span_verdict": "error", "explanation_verdict": "correct"}
    judgment_set(assignment=second, span=kept, user=expert, changes=changes, expected_version=0)
    # Its answer was lost (a web host restarted): the client sends it again, unchanged.
    again = judgment_set(assignment=second, span=kept, user=expert, changes=changes, expected_version=0)
    assert again.version == 1
    assert JudgmentEvent.objects.filter(judgment=again).count() == 2  # nothing recorded twice
    with pytest.raises(StaleJudgment):  # another value against the old version is still a conflict
        judgment_set(assignment=second, span=kept, user=expert, changes={"span_verdict": "not_error"},
                     expected_version=0)
    judgment_set(assignment=second, span=kept, user=expert, changes={"comment": "x"}, expected_version=1)
    with pytest.raises(StaleJudgment):  # two versions behind is never a replay
        judgment_set(assignment=second, span=kept, user=expert, changes=changes, expected_version=0)


def test_one_evaluator_twice_at_a_place_is_not_called_two_evaluators(client, make_user):
    expert = make_user("place-expert")
    data = dataset("place data")
    made = item(data, "p1", "The Olive Grove is cheap and near the river.", position=1)
    evaluator = run(data, "place-run")
    merged = annotation(made, evaluator, kind=AnnotationKind.ENSEMBLE)
    wide = span_at(merged, 0, "Olive Grove is cheap")
    narrow = span_at(merged, 1, "Grove is")
    early = span_at(merged, 2, "The Olive")
    campaign = campaign_create(CampaignSpec(name="place", dataset=data, runs=[evaluator], annotators=[expert],
                                            aspects=["accuracy"]))
    assignment = Assignment.objects.get(campaign=campaign)
    client.force_login(expert)
    html = client.get(reverse("item_screen", args=[assignment.pk])).content.decode()
    assert "evaluators marked this place" not in html
    assert "errors of one evaluator at this place" in html
    # Cards in text order: "The Olive" (0) before "Olive Grove is cheap" (4) before "Grove is" (10).
    order = [html.index(f'id="error-{span_handle(assignment.pk, s.pk)}"') for s in (early, wide, narrow)]
    assert order == sorted(order)


def test_campaign_page_shows_progress_per_annotator(client, make_user):
    from tests.factories import build_campaign

    first, second = make_user("prog-a"), make_user("prog-b")
    built = build_campaign([first, second], per_item=2, name="progress campaign")
    done = Assignment.objects.filter(annotator=first).first()
    opened = timezone.now() - timedelta(seconds=300)
    Assignment.objects.filter(pk=done.pk).update(status=Assignment.Status.DONE, phase="done", active_seconds=42,
                                                 started_at=opened, last_active_at=opened + timedelta(seconds=95))
    client.force_login(make_user("prog-researcher", role="researcher"))
    html = client.get(reverse("campaign_entry", args=[built.campaign.pk])).content.decode()
    table = html[html.index('id="annotator-progress"'):]
    table = table[: table.index("</section>")]
    assert table.count("<tr><td>prog-") == 2  # one row per annotator, not per assignment
    assert "<tr><td>prog-a</td><td>1</td><td>0</td><td>2</td>" in table and "50%" in table
    assert "<th>Active time</th><th>Wall time</th>" in table and "<td>42 s</td><td>95 s</td>" in table
    assert "<tr><td>prog-b</td><td>0</td><td>0</td><td>2</td>" in table
