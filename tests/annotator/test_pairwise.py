"""Pairwise preference end to end without a browser: units made with the campaign (an input's outputs to the same
judges, adjacent in the queue, positions balanced within one per system), the screen (both outputs escaped, no
system names), the choice and reason (checked, on the undo stack, refused once finished), finishing a screen and
its outputs, and `pairwise_scores --campaign` against a recomputation from `export_units`."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.models import Assignment, Campaign, ComparisonUnit, UnitOutput, WorkAction
from annotator.services.undo import action_redo, action_undo
from annotator.services.units import UnitError, UnitFinished, choice_set, unit_finish
from corpus import protocols
from corpus.protocols import ProtocolError, pairwise
from stats.pairwise import sign_test
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = pytest.mark.django_db

SYSTEMS = ("alpha", "beta", "gamma")
HX = {"HTTP_HX_REQUEST": "true"}


def _study(annotators, *, systems=SYSTEMS[:2], inputs=4, per_item=2, options=None, seed=5):
    data = f.dataset("pairwise data", input_headers=["Article"], output_header="Summary")
    for k in range(inputs):
        for system in systems:
            f.item(data, f"doc{k}", f"<i>{system}</i> summary of document {k}.", system=system,
                   inputs={"Article": f"The article <script>alert({k})</script> number {k}."})
    return campaign_create(CampaignSpec(
        name="pairwise study", dataset=data, aspects=["overall"], annotators=annotators, annotators_per_item=per_item,
        protocol=protocols.PAIRWISE, protocol_options=options or {}, seed=seed))


def _units(campaign, user):
    return list(ComparisonUnit.objects.filter(campaign=campaign, annotator=user).order_by("number"))


def _systems(unit):
    return [o.assignment.item.system for o in UnitOutput.objects.filter(unit=unit).select_related("assignment__item")
            .order_by("position")]


def test_pairwise_declares_two_outputs_a_screen_and_checks_its_options():
    declared = protocols.get(protocols.PAIRWISE)
    assert declared.compares == 2 and declared.comparing and declared.marks_errors and declared.plants
    assert pairwise.clean_options({"reason_required": True}) == {"reason_required": True}
    with pytest.raises(ProtocolError, match="unknown option"):
        pairwise.clean_options({"tree": []})
    assert pairwise.check_choice("tie") == pairwise.TIE and pairwise.check_choice("2") == 2
    with pytest.raises(ProtocolError, match="choice"):
        pairwise.check_choice("3")


def test_an_inputs_outputs_go_to_the_same_judges_side_by_side_with_positions_balanced():
    judges = [f.user(f"judge{k}") for k in range(3)]
    campaign = _study(judges, inputs=6, per_item=2)
    placed: dict[str, Counter] = defaultdict(Counter)
    per_input: dict[str, Counter] = defaultdict(Counter)
    for judge in judges:
        queue = list(Assignment.objects.filter(campaign=campaign, annotator=judge).order_by("order")
                     .values_list("item__external_id", flat=True))
        for unit in _units(campaign, judge):
            systems = _systems(unit)
            assert sorted(systems) == ["alpha", "beta"]
            # the queue holds a screen's outputs in screen order: finishing the first opens the second
            places = [o.assignment.order for o in UnitOutput.objects.filter(unit=unit).select_related("assignment")
                      .order_by("position")]
            assert places[1] == places[0] + 1
            placed[systems[0]]["first"] += 1
            placed[systems[1]]["second"] += 1
            per_input[unit.segment][systems[0]] += 1
        # the outputs of one input are next to each other in the queue
        assert all(queue.count(s) == 2 and queue.index(s) + 1 == len(queue) - queue[::-1].index(s) - 1
                   for s in set(queue))
    assert sum(c["first"] for c in placed.values()) == 12  # 6 inputs, 2 judges each
    assert all(abs(c["first"] - c["second"]) <= 1 for c in placed.values()), placed
    # each input's two judges saw it in opposite orders
    assert all(sorted(c.values()) == [1, 1] for c in per_input.values()), per_input


def test_three_outputs_give_two_screens_for_judges_and_for_each_place_of_a_link():
    judge = f.user("judge")
    campaign = _study([judge], systems=SYSTEMS, inputs=2, per_item=1)
    units = _units(campaign, judge)
    assert len(units) == 4  # two screens per input of three outputs
    for segment in {u.segment for u in units}:
        shown = [s for u in units if u.segment == segment for s in _systems(u)]
        assert set(shown) == set(SYSTEMS) and len(shown) == 4
    data = campaign.dataset
    linked = campaign_create(CampaignSpec(name="linked", dataset=data, aspects=["overall"], annotators=[],
                                          annotators_per_item=2, protocol=protocols.PAIRWISE,
                                          link=LinkSettings(items_per_participant=2, pass_code="DONE-1")))
    planned = linked.study_link.screens
    assert len(planned) == 8 and {s["judge"] for s in planned} == {1, 2}  # 2 inputs x 2 screens x 2 places
    for k in (1, 2):
        for segment in {s["segment"] for s in planned}:
            mine = [s["items"] for s in planned if s["judge"] == k and s["segment"] == segment]
            assert len(mine) == 2 and len({i for screen in mine for i in screen}) == 3  # every output compared


def test_the_screen_shows_both_outputs_escaped_without_system_names(client):
    judge = f.user("judge")
    campaign = _study([judge], per_item=1)
    unit = _units(campaign, judge)[0]
    first = UnitOutput.objects.get(unit=unit, position=1).assignment
    client.force_login(judge)
    html = client.get(reverse("item_screen", args=[first.pk]) + f"?unit={unit.pk}").content.decode()
    unit.refresh_from_db()
    opened = unit.opened_at
    assert opened is not None
    client.get(reverse("item_screen", args=[first.pk]) + f"?unit={unit.pk}")
    unit.refresh_from_db()
    assert unit.opened_at == opened  # the first open is kept
    assert "&lt;script&gt;alert(" in html and "<script>alert(" not in html
    assert html.count("summary of document") == 2 and "&lt;i&gt;" in html
    assert "Which output is better?" in html and 'data-choice="tie"' in html
    # the system names are in the outputs' text here only because the texts say them; never as labels
    assert "data-system" not in html and ">alpha<" not in html


def test_a_choice_is_checked_undone_redone_and_closed_once_the_screen_finishes(client):
    judge = f.user("judge")
    campaign = _study([judge], per_item=1, options={"reason_required": True})
    unit = _units(campaign, judge)[0]
    with pytest.raises(ProtocolError, match="choice"):
        choice_set(unit=unit, user=judge, choice="left")
    choice_set(unit=unit, user=judge, choice="2", ms=900)
    with pytest.raises(UnitError, match="reason"):
        unit_finish(unit=unit, user=judge)
    choice_set(unit=unit, user=judge, reason="Covers the <b>main</b> point.", ms=2000)
    first = UnitOutput.objects.get(unit=unit, position=1).assignment
    assert WorkAction.objects.filter(assignment=first, kind=WorkAction.Kind.PREFERENCE).count() == 2
    action_undo(assignment=first, user=judge)
    unit.refresh_from_db()
    assert (unit.choice, unit.reason) == (2, "")
    action_redo(assignment=first, user=judge)
    unit.refresh_from_db()
    assert unit.reason == "Covers the <b>main</b> point." and unit.first_ms == 900 and unit.changes == 4
    finished = unit_finish(unit=unit, user=judge)
    members = {o.assignment_id for o in UnitOutput.objects.filter(unit=unit)}
    assert {a.pk for a in finished} == members
    assert Assignment.objects.filter(pk__in=members, status=Assignment.Status.DONE).count() == 2
    with pytest.raises(UnitFinished):
        choice_set(unit=unit, user=judge, choice="1")
    # undoing the required reason reopens the screen; undoing the choice then leaves it open without one
    action_undo(assignment=first, user=judge)
    unit.refresh_from_db()
    assert unit.choice == 2 and unit.finished_at is None
    action_undo(assignment=first, user=judge)
    unit.refresh_from_db()
    assert unit.choice is None and unit.finished_at is None
    assert not Assignment.objects.filter(pk__in=members, status=Assignment.Status.DONE).exists()


def test_the_choice_endpoint_and_the_finish_endpoint(client):
    judge, other = f.user("judge"), f.user("other")
    campaign = _study([judge, other], per_item=1)
    unit = _units(campaign, judge)[0]
    first = UnitOutput.objects.get(unit=unit, position=1).assignment
    client.force_login(judge)
    url = reverse("unit_choice", args=[first.pk])
    bad = client.post(url, {"unit": unit.pk, "choice": "7"})
    assert bad.status_code == 422 and "choice" in bad.content.decode()
    refused = client.post(reverse("unit_finish", args=[first.pk]), {"unit": unit.pk}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 422 and "needs a choice" in refused.content.decode()
    ok = client.post(url, {"unit": unit.pk, "choice": "tie", "ms": "1200"})
    assert ok.status_code == 200 and "is-chosen" in ok.content.decode()
    done = client.post(reverse("unit_finish", args=[first.pk]), {"unit": unit.pk}, HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and f"unit={_units(campaign, judge)[1].pk}" in done["HX-Redirect"]
    others = _units(campaign, other)
    if others:  # someone else's screen is not found for this judge
        theirs = UnitOutput.objects.get(unit=others[0], position=1).assignment
        assert client.post(reverse("unit_choice", args=[theirs.pk]), {"unit": others[0].pk,
                                                                       "choice": "1"}).status_code == 404


def test_pairwise_scores_of_the_campaign_equal_a_recomputation_from_its_export(tmp_path):
    judges = [f.user(f"judge{k}") for k in range(2)]
    campaign = _study(judges, systems=SYSTEMS, inputs=5, per_item=2)
    for judge in judges:
        for n, unit in enumerate(_units(campaign, judge)):
            systems = _systems(unit)
            # gamma always loses; alpha beats beta except on every third screen, which is a tie
            if "gamma" in systems:
                choice = "2" if systems[0] == "gamma" else "1"
            else:
                choice = "tie" if n % 3 == 0 else str(systems.index("alpha") + 1)
            choice_set(unit=unit, user=judge, choice=choice)
            unit_finish(unit=unit, user=judge)
    export = tmp_path / "units.csv"
    call_command("export_units", "--campaign", str(campaign.pk), "--output", str(export))
    rows = list(csv.DictReader(export.open(encoding="utf-8")))
    assert {r["finished_at"] != "" for r in rows} == {True}
    wins: dict[tuple[str, str], Counter] = defaultdict(Counter)
    by_unit = defaultdict(list)
    for row in rows:
        by_unit[row["unit"]].append(row)
    first_wins = decided = 0
    for outputs in by_unit.values():
        a, b = sorted(outputs, key=lambda r: r["system"])
        pair = (a["system"], b["system"])
        if a["choice"] == "tie":
            wins[pair]["ties"] += 1
            continue
        better = a if a["preferred_system"] == a["system"] else b
        wins[pair]["a" if better is a else "b"] += 1
        decided += 1
        first_wins += better["position"] == "1"
    out = io.StringIO()
    call_command("pairwise_scores", "--campaign", str(campaign.pk), "--resamples", "50", stdout=out)
    result = json.loads(out.getvalue())
    got = {(p["a"], p["b"]): (p["a_better"], p["b_better"], p["ties"], p["p_value"]) for p in result["pairs"]}
    expected = {pair: (c["a"], c["b"], c["ties"], sign_test(c["a"], c["b"])) for pair, c in wins.items()}
    assert got == expected
    assert result["position_bias"]["first_wins"] == first_wins and result["position_bias"]["decided_units"] == decided
    assert [s["system"] for s in result["systems"]][-1] == "gamma"


def _decide_all(campaign, judge, pick):
    for unit in _units(campaign, judge):
        choice_set(unit=unit, user=judge, choice=pick(_systems(unit)), reason="Shorter & <clearer>.")
        unit_finish(unit=unit, user=judge)


def test_the_report_page_card_api_and_campaign_export_carry_the_side_by_side_figures(client, tmp_path):
    from analytics.report.build import report_files
    from tests.quality.conftest import Api

    judges = [f.user("ann"), f.user("bob")]
    campaign = _study(judges, inputs=4, per_item=2)
    researcher = f.user("res", role="researcher")
    api = Api(researcher)
    early = api("get", f"/analytics/campaigns/{campaign.pk}/pairwise?resamples=20")
    assert early.status_code == 422 and "finished" in early.json()["detail"]
    for judge in judges:
        _decide_all(campaign, judge, lambda systems: str(systems.index("alpha") + 1))
    body = api("get", f"/analytics/campaigns/{campaign.pk}/pairwise?resamples=20").json()
    assert body["pairs"][0] | {"ci_low": None, "ci_high": None} == {
        "a": "alpha", "b": "beta", "units": 8, "a_better": 8, "b_better": 0, "ties": 0, "a_win_rate": 1.0,
        "ci_low": None, "ci_high": None, "p_value": sign_test(8, 0), "p_holm": sign_test(8, 0),
        "shown_together": True}
    assert body["position_bias"]["decided_units"] == 8 and body["position_bias"]["first_wins"] == 4
    files = report_files(campaign, "latex")
    tex = "\n".join(v.decode() for k, v in files.items() if not k.startswith("figures/"))
    assert "Bradley-Terry" in tex and "DA scores" not in tex and "Table 4" not in tex
    client.force_login(researcher)
    page = client.get(reverse("analytics_campaign", args=[campaign.pk]))
    assert page.status_code == 200 and "Every pair of systems shown together" in page.content.decode()
    card = client.get(reverse("labeled_card", args=[campaign.pk]))
    assert card.status_code == 200
    out = tmp_path / "units.csv"
    call_command("export_campaign", campaign=campaign.pk, format="units", output=out)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 16 and {r["preferred_system"] for r in rows} == {"alpha"}
    assert {r["reason"] for r in rows} == {"Shorter & <clearer>."}
    lines = io.StringIO()
    call_command("export_units", "--campaign", str(campaign.pk), "--format", "jsonl", stdout=lines)
    assert [json.loads(line)["unit"] for line in lines.getvalue().splitlines()] == [int(r["unit"]) for r in rows]


def test_a_researcher_makes_a_pairwise_campaign_with_the_form_and_with_the_api(client, make_user):
    from ninja.testing import TestClient

    from config.api import api

    judges = [make_user("pf-1"), make_user("pf-2")]
    researcher = make_user("pf-res", role="researcher")
    data = f.dataset("form pairs", input_headers=["Article"], output_header="Summary")
    for k in range(2):
        for system in ("left-sys", "right-sys"):
            f.item(data, f"d{k}", f"{system} text {k}", system=system, inputs={"Article": "A"})
    f.item(data, "lonely", "only one system here", system="left-sys", inputs={"Article": "B"})
    client.force_login(researcher)
    response = client.post("/campaigns/new/", {
        "name": "Pairs by form", "dataset": data.pk, "annotators": [j.pk for j in judges],
        "annotators_per_item": 2, "seed": 0, "guidelines": "Pick the better summary.", "protocol": "pairwise",
        "protocol_options": '{"reason_required": true}'})
    assert response.status_code == 302, response.context["form"].errors
    campaign = Campaign.objects.get(name="Pairs by form")
    assert campaign.protocol_options == {"reason_required": True}
    assert ComparisonUnit.objects.filter(campaign=campaign).count() == 4  # 2 inputs x 2 judges; "lonely" on none
    assert any("single output" in w for w in campaign.setup_report.warnings)
    answer = TestClient(api).post("/campaigns", json={
        "name": "Pairs by API", "dataset_id": data.pk, "run_ids": [], "annotators": [judges[0].username],
        "protocol": "pairwise", "protocol_options": {"question": "Which is more fluent?"}}, user=researcher)
    assert answer.status_code in (200, 201), answer.content
    made = Campaign.objects.get(name="Pairs by API")
    unit = ComparisonUnit.objects.filter(campaign=made).first()
    first = UnitOutput.objects.get(unit=unit, position=1).assignment
    client.force_login(judges[0])
    assert "Which is more fluent?" in client.get(reverse("item_screen", args=[first.pk])).content.decode()
    bad = TestClient(api).post("/campaigns", json={
        "name": "Pairs bad", "dataset_id": data.pk, "run_ids": [], "annotators": [judges[0].username],
        "protocol": "pairwise", "protocol_options": {"reason_required": "yes"}}, user=researcher)
    assert bad.status_code == 422 and "reason_required" in bad.json()["detail"]


def test_training_screens_stay_out_of_the_export_and_the_figures():
    judge = f.user("trainee")
    data = f.dataset("practice pairs", input_headers=["Article"], output_header="Summary")
    for k in range(3):
        for system in SYSTEMS[:2]:
            f.item(data, f"doc{k}", f"{system} summary {k}", system=system, inputs={"Article": "A"})
    practice = list(data.items.filter(external_id="doc0").values_list("pk", flat=True))
    from quality.services import CheckSettings

    campaign = campaign_create(CampaignSpec(
        name="practice study", dataset=data, aspects=[], annotators=[judge], annotators_per_item=1,
        protocol=protocols.PAIRWISE, seed=1, checks=CheckSettings(qualification_items=tuple(practice))))
    units = _units(campaign, judge)
    training = [u for u in units if u.outputs.filter(assignment__is_training=True).exists()]
    assert len(units) == 3 and len(training) == 1
    for unit in units:
        choice_set(unit=unit, user=judge, choice="1")
        unit_finish(unit=unit, user=judge)
    from analytics.selectors.units import unit_rows

    rows = unit_rows(campaign)
    assert {r["unit"] for r in rows} == {u.pk for u in units} - {training[0].pk}


def test_optional_spans_on_either_output_are_marked_undone_redone_exported_and_closed_with_the_screen(client,
                                                                                                      tmp_path):
    judge = f.user("judge")
    campaign = _study([judge], inputs=1, per_item=1)
    unit = _units(campaign, judge)[0]
    first = UnitOutput.objects.get(unit=unit, position=1).assignment
    second = UnitOutput.objects.get(unit=unit, position=2).assignment
    client.force_login(judge)
    url = reverse("unit_span_add", args=[first.pk])
    at = second.item.output.index("summary")  # the page counts code points as the server does here (all ASCII)
    answer = client.post(url, {"unit": unit.pk, "position": "2", "start": str(at), "end": str(at + 7)}, **HX)
    assert answer.status_code == 200, answer.content
    html = answer.content.decode()
    assert 'id="unit-outputs"' in html and 'class="seg pair-mark"' in html and "summary" in html
    assert "&lt;i&gt;" in html and "<i>" not in html  # the output stays escaped around the marks
    span = second.item.annotations.get().spans.get()
    assert (span.start, span.end, span.text) == (at, at + 7, "summary") and span.category == ""
    assert client.post(url, {"unit": unit.pk, "position": "3", "start": "0", "end": "2"}, **HX).status_code == 422
    assert client.post(url, {"unit": unit.pk, "position": "1", "start": "5", "end": "999"}, **HX).status_code == 422
    assert client.post(url, {"unit": unit.pk, "position": "1", "start": "", "end": "2"}, **HX).status_code == 422

    action_undo(assignment=first, user=judge)  # the screen's stack is its first output's
    assert not second.item.annotations.filter(spans__isnull=False).exists()
    action_redo(assignment=first, user=judge)
    again = second.item.annotations.get().spans.get()
    assert (again.start, again.end) == (at, at + 7)
    removed = client.post(reverse("unit_span_remove", args=[first.pk]), {"unit": unit.pk, "span": again.pk}, **HX)
    assert removed.status_code == 200 and not second.item.annotations.filter(spans__isnull=False).exists()
    action_undo(assignment=first, user=judge)  # the removal undone: the span is back, under a new id
    back = second.item.annotations.get().spans.get()
    assert (back.start, back.end) == (at, at + 7)
    assert client.post(url, {"unit": unit.pk, "position": "1", "start": "0", "end": "3"}, **HX).status_code == 200

    choice_set(unit=unit, user=judge, choice="2")
    unit_finish(unit=unit, user=judge)
    closed = client.post(url, {"unit": unit.pk, "position": "1", "start": "4", "end": "8"}, **HX)
    assert closed.status_code == 409
    out = tmp_path / "units.jsonl"
    call_command("export_units", "--campaign", str(campaign.pk), "--format", "jsonl", "--output", str(out))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["position"]: json.loads(r["spans"]) for r in rows} == {1: [[0, 3]], 2: [[at, at + 7]]}
