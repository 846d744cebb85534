"""Under every protocol a finished item keeps what it was finished with: every action of the item screen (found
from the URL conf by its mark) is refused on it, and only undo changes it, as the guides say."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import Assignment, ComparisonUnit, EsaScore, ItemScore, SpanJudgment, UnitOutput
from annotator.selectors.spans import added_spans, item_errors
from annotator.views.marks import Own, marked_urls
from corpus import protocols
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = pytest.mark.django_db

OUTPUT = "Output one says the cafe is cheap."  # "says" 11-15, "the" 16-19, "cafe" 20-24
UNDO = frozenset({"action_undo", "action_redo"})  # the documented way back (expert-screen.md, Undo and redo)
FINISHING = frozenset({"assignment_time", "assignment_finish", "unit_finish"})  # finishing twice is no change


def _assignment(protocol: str, annotator) -> Assignment:
    data = f.dataset(f"Finished {protocol}", input_headers=["Source"], output_header="Output")
    run = f.run(data, f"Finished {protocol} run")
    item = f.item(data, "x1", OUTPUT, position=1, inputs={"Source": "A source."})
    if protocols.get(protocol).comparing:  # a second output of the same input to compare it with
        f.item(data, "x1", "Output two says the cafe is dear.", position=2, inputs={"Source": "A source."},
               system="other")
    made = f.annotation(item, run, model="m", score=2.0, score_label="Poor")
    f.span_at(made, 1, "cheap", explanation="The price range is high.", severity=4)
    runs = [] if protocols.get(protocol).comparing else [run]  # its screens show no machine spans
    campaign = campaign_create(CampaignSpec(name=f"Finished {protocol}", dataset=data, runs=runs,
                                            annotators=[annotator], aspects=["accuracy"], annotators_per_item=1,
                                            seed=2, protocol=protocol))
    return Assignment.objects.select_related("campaign", "item").filter(campaign=campaign, annotator=annotator,
                                                                         item=item).get()


def _finish(client: Client, assignment: Assignment) -> None:
    """Do an item's work through its screen, as each protocol asks, and finish it."""
    pk, hx = assignment.pk, {"HTTP_HX_REQUEST": "true"}
    assert client.get(reverse("item_screen", args=[pk])).status_code == 200
    protocol = assignment.campaign.protocol
    if protocol == protocols.OPENNLGAUGE:
        rows, _ = item_errors(assignment)
        for row in rows:
            for field, value in (("span_verdict", "error"), ("explanation_verdict", "correct")):
                url = reverse("judgment_save", args=[pk, row.handle])
                assert client.post(url, {"field": field, "value": value}, **hx).status_code == 200
        assert client.post(reverse("added_span_add", args=[pk]), {"start": 11, "end": 15, "severity": 3},
                           **hx).status_code == 200
    elif protocols.step_applies(protocol, protocols.MQM):  # MQM, and side-by-side MQM's outputs one by one
        tree = protocols.get(protocol).categories(assignment.campaign.protocol_options)
        assert client.post(reverse("mqm_error_add", args=[pk]), {"start": 11, "end": 15, "severity": "major",
                                                                 "category": tree[0]}, **hx).status_code == 200
    elif protocols.step_applies(protocol, protocols.ESA):  # ESA, and contrastive ESA's outputs one by one
        assert client.post(reverse("esa_span_add", args=[pk]), {"start": 11, "end": 15, "severity": "minor"},
                           **hx).status_code == 200
        assert client.post(reverse("esa_spans_done", args=[pk]), **hx).status_code == 200
        assert client.post(reverse("esa_score", args=[pk]), {"score": 61}, **hx).status_code == 200
    elif protocols.get(protocol).prefers:  # pairwise: the screen's choice, then the screen finishes
        assert client.post(reverse("unit_choice", args=[pk]), {"choice": "1"}, **hx).status_code == 200
        assert client.post(reverse("unit_finish", args=[pk]), **hx).status_code == 200
        assert Assignment.objects.get(pk=pk).is_done()
        return
    elif protocols.get(protocol).score_range is not None:  # DA: the score alone
        assert client.post(reverse("item_score", args=[pk]), {"score": 61}, **hx).status_code == 200
    else:
        pytest.fail(f"no way to finish a {protocol} item here yet: add its screen's steps")
    assert client.post(reverse("assignment_finish", args=[pk]), **hx).status_code == 200
    assert Assignment.objects.get(pk=pk).is_done()


def _state(assignment: Assignment) -> tuple:
    """Everything an item's annotation is: its status, verdicts, the annotator's own errors, ESA's state and the
    generic item score."""
    a = Assignment.objects.get(pk=assignment.pk)
    judgments = sorted(SpanJudgment.objects.filter(assignment_id=a.pk).values_list(
        "span_id", "span_verdict", "explanation_verdict", "comment", "corrected_severity", "picked_start",
        "picked_none"))
    errors = sorted((s.start, s.end, s.category, s.severity, s.explanation) for s in added_spans(a))
    esa = EsaScore.objects.filter(assignment_id=a.pk).values_list("score", "score_changes").first()
    score = ItemScore.objects.filter(assignment_id=a.pk).values_list("score", "score_changes").first()
    units = list(ComparisonUnit.objects.filter(outputs__assignment_id=a.pk).values_list("choice", "reason",
                                                                                       "finished_at"))
    return a.status, a.phase, a.finished_at, a.boundary_at, judgments, errors, esa, score, units


def _url(name: str, own: Own, assignment: Assignment) -> str:
    if own == Own.ADDED_SPAN:
        return reverse(name, kwargs={"span_pk": added_spans(assignment)[0].pk})
    kwargs = {"pk": assignment.pk}
    rows, _ = item_errors(assignment)
    if name in ("judgment_save", "occurrence_save"):
        if not rows:
            return ""  # nothing to judge under this protocol
        kwargs["span_pk"] = rows[0].handle
    return reverse(name, kwargs=kwargs)


# What any action of any screen could take: a verdict, a pick, offsets, a category, a severity (by name, and as
# the number the OpeNLGauge form takes), a note, a score.
BODIES = [{"field": field, "value": value, "start": 20, "end": 24, "severity": severity, "category": category,
           "note": "changed", "score": 12}
          for field, value in (("span_verdict", "not_error"), ("comment", "changed"))
          for severity in ("major", "2") for category in ("", "Accuracy", "Fluency")]


@pytest.mark.parametrize("protocol", sorted(protocols.PROTOCOLS))
def test_nothing_of_a_finished_item_changes_but_through_undo(protocol, make_user):
    annotator = make_user(f"fin-{protocol}")
    client = Client()
    client.force_login(annotator)
    assignment = _assignment(protocol, annotator)
    _finish(client, assignment)
    finished = _state(assignment)

    refusals = {}
    for url in marked_urls():
        if url.own == Own.SETTING or url.name in UNDO:
            continue
        if url.own == Own.ADDED_SPAN and not added_spans(assignment):
            continue  # none to act on under this protocol (DA marks no errors)
        path = _url(url.name, url.own, assignment)
        if not path:
            continue
        if client.get(path).status_code != 405:
            continue  # a page, not an action
        for body in BODIES:
            response = client.post(path, body, HTTP_HX_REQUEST="true")
            assert response.status_code < 500, (url.name, body, response.content)
            assert response.status_code not in (200, 204) or url.name in FINISHING, \
                (url.name, body, response.status_code, response.content)
            refusals.setdefault(url.name, set()).add(response.status_code)
        assert _state(assignment) == finished, url.name
    # The screen's own actions say why: 409, naming the item.
    main = {protocols.OPENNLGAUGE: "judgment_save", protocols.MQM: "mqm_error_add", protocols.ESA: "esa_score",
            protocols.DA: "item_score", protocols.PAIRWISE: "unit_choice", protocols.SXS_MQM: "mqm_error_add",
            protocols.CESA: "esa_score"}
    assert 409 in refusals[main[protocol]], refusals
    answer = client.post(_url(main[protocol], Own.ASSIGNMENT, assignment), BODIES[0], HTTP_HX_REQUEST="true")
    finished_what = "Screen 1" if protocols.get(protocol).prefers else f"Item {assignment.order}"
    assert answer.status_code == 409 and f"{finished_what} is finished" in answer.content.decode()

    # Undo is the documented way back: it changes the item and says so (ESA's stack ends where the spans were done).
    # (a comparison screen keeps its undo stack on its first output, which the screen's undo posts to)
    stack = UnitOutput.objects.get(unit__outputs__assignment=assignment, position=1).assignment_id \
        if protocols.get(protocol).prefers else assignment.pk
    undo = client.post(reverse("action_undo", args=[stack]), HTTP_HX_REQUEST="true")
    if protocols.step_applies(protocol, protocols.ESA):
        assert undo.status_code == 204 and _state(assignment) == finished
    else:
        assert undo.status_code == 200 and _state(assignment) != finished
