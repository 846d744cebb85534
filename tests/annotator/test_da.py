"""Direct Assessment end to end without a browser: the screen and its score part, the generic score's writer
(range, finished items, undo and redo), finishing, the API twin, BAD items caught by score, the figures (raw and
z-scored, hand-computed), the report section, and Appraise's scores CSV out and back in."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from analytics.protocols import CAMPAIGN_FORMATS
from analytics.protocols.da import campaign_da
from analytics.report.build import report_files
from annotator.models import Assignment, Campaign, ItemScore, WorkAction
from annotator.services.assignments import AssignmentError, assignment_finish, assignment_open
from annotator.services.item_scores import item_score_set
from annotator.services.undo import action_redo, action_undo
from corpus import protocols
from corpus.interop import appraise
from corpus.protocols import ProtocolError, da
from quality.engine.figures import PLANTED
from quality.models import PlantedOutput
from quality.selectors.vigilance import annotator_flags
from quality.services import CheckSettings
from studies.setup import CampaignError, CampaignSpec, campaign_create
from tests import factories as f
from tests.quality.conftest import Api

pytestmark = pytest.mark.django_db

SOURCE = "Der Hund <b>bellt</b> laut."


def _study(annotators, *, options=None, planted=0.0, per_item=2):
    data = f.dataset("da data", input_headers=["Source"], output_header="Translation")
    for k in range(3):
        for system in ("sysA", "sysB"):
            f.item(data, f"seg{k}", f"The dog {system} barks loudly number {k + 10} on Friday.", system=system,
                   inputs={"Source": SOURCE}, reference=f"The dog barks <i>loudly</i> {k}.")
    return campaign_create(CampaignSpec(
        name="da study", dataset=data, aspects=["accuracy"], annotators=annotators, annotators_per_item=per_item,
        protocol=protocols.DA, protocol_options=options or {}, seed=3,
        checks=CheckSettings(planted=planted, vigilance_min=0.9, planted_near_duplicates=True)))


def _mine(campaign, user):
    return list(Assignment.objects.filter(campaign=campaign, annotator=user).select_related("campaign", "item")
                .order_by("order"))


def test_da_declares_a_score_and_nothing_else():
    declared = protocols.get(protocols.DA)
    assert declared.score_range == (0, 100) and declared.per_item == ("score",)
    assert not declared.marks_errors and not declared.judges_machine_spans and declared.plants
    assert declared.planted_check == protocols.SCORED_LOWER
    assert da.clean_options({"reference": True, "source_language": "deu"}) == {"reference": True,
                                                                             "source_language": "deu"}
    with pytest.raises(ProtocolError, match="unknown option"):
        da.clean_options({"tree": []})
    with pytest.raises(ProtocolError, match="true or false"):
        da.clean_options({"reference": "yes"})


def test_decoys_are_refused_under_da_and_planted_copies_are_not():
    ann = f.user("ann")
    data = f.dataset("d", items=[{"external_id": "1", "output": "x"}])
    with pytest.raises(CampaignError, match="decoy"):
        campaign_create(CampaignSpec(name="c", dataset=data, aspects=["accuracy"], annotators=[ann],
                                     protocol=protocols.DA, checks=CheckSettings(decoys=0.5)))


def test_the_da_screen_shows_the_source_escaped_and_the_reference_only_when_asked(client):
    ann = f.user("ann")
    campaign = _study([ann], per_item=1)
    first = _mine(campaign, ann)[0]
    client.force_login(ann)
    html = client.get(reverse("item_screen", args=[first.pk])).content.decode()
    assert "&lt;b&gt;bellt&lt;/b&gt;" in html and "<b>bellt</b>" not in html
    assert 'id="score-slider"' in html and "Direct Assessment" in html and "da-reference" not in html
    assert "meaning of the source" in html
    Campaign.objects.filter(pk=campaign.pk).update(protocol_options={"reference": True})
    html = client.get(reverse("item_screen", args=[first.pk])).content.decode()
    assert 'id="da-reference"' in html and "&lt;i&gt;loudly&lt;/i&gt;" in html and "meaning of the reference" in html


def test_the_score_is_checked_saved_undone_and_redone_and_finishing_needs_it(client):
    ann = f.user("ann")
    campaign = _study([ann], per_item=1)
    work = _mine(campaign, ann)[0]
    assignment_open(assignment=work, user=ann)
    with pytest.raises(AssignmentError, match="score from 0 to 100"):
        assignment_finish(assignment=work, user=ann)
    with pytest.raises(ProtocolError, match="0 to 100"):
        item_score_set(assignment=work, user=ann, score=101)
    client.force_login(ann)
    answer = client.post(reverse("item_score", args=[work.pk]), {"score": "64", "ms": "900"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and 'id="item-score"' in answer.content.decode()
    item_score_set(assignment=work, user=ann, score=71, ms=300)
    state = ItemScore.objects.get(pk=work.pk)
    assert (state.score, state.first_ms, state.score_ms, state.score_changes) == (71, 900, 300, 2)
    assert WorkAction.objects.filter(assignment=work, kind=WorkAction.Kind.SCORE).count() == 2
    assert "64" in action_undo(assignment=work, user=ann).message
    assert ItemScore.objects.get(pk=work.pk).score == 64
    action_redo(assignment=work, user=ann)
    assert ItemScore.objects.get(pk=work.pk).score == 71
    assignment_finish(assignment=work, user=ann)
    work.refresh_from_db()
    assert work.is_done()
    answer = client.post(reverse("item_score", args=[work.pk]), {"score": "10"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 409 and ItemScore.objects.get(pk=work.pk).score == 71
    result = action_undo(assignment=work, user=ann)  # back to 64: still scored, still finished
    work.refresh_from_db()
    assert not result.reopened and work.is_done()
    action_undo(assignment=work, user=ann)  # the first score undone: nothing left, the item reopens
    work.refresh_from_db()
    assert ItemScore.objects.get(pk=work.pk).score is None and not work.is_done()


def test_the_api_sets_the_score_and_refuses_it_for_another_protocol():
    ann = f.user("ann")
    campaign = _study([ann], per_item=1)
    work = _mine(campaign, ann)[0]
    api = Api(ann)
    assert api("post", f"/assignments/{work.pk}/open").status_code == 200
    answer = api("put", f"/assignments/{work.pk}/score", {"score": 55})
    assert answer.status_code == 200 and answer.json() == {"assignment_id": work.pk, "score": 55, "min": 0,
                                                           "max": 100}
    assert api("put", f"/assignments/{work.pk}/score", {"score": 500}).status_code == 422
    assert api("get", f"/assignments/{work.pk}/esa").status_code == 404
    data = f.dataset("o", items=[{"external_id": "1", "output": "x"}])
    mine = f.assignment(f.campaign("ogl", data, [], [ann]), ann, data.items.first(), 1)
    assert api("get", f"/assignments/{mine.pk}/score").status_code == 404


def _score_all(campaign, user, value, bad_value=None):
    for work in _mine(campaign, user):
        assignment_open(assignment=work, user=user)
        copy = PlantedOutput.objects.filter(item=work.item).exists()
        item_score_set(assignment=work, user=user, score=bad_value if copy and bad_value is not None else value(work))
        assignment_finish(assignment=work, user=user)


def test_bad_items_flag_the_annotator_who_does_not_score_them_lower():
    careful, careless = f.user("careful"), f.user("careless")
    campaign = _study([careful, careless], planted=0.3)
    assert PlantedOutput.objects.filter(campaign=campaign, annotator=careful).exists()
    _score_all(campaign, careful, lambda w: 80, bad_value=20)
    _score_all(campaign, careless, lambda w: 90, bad_value=95)
    assert annotator_flags(campaign, careful) == []
    assert PLANTED in annotator_flags(campaign, careless)
    bad = {row["annotator"]: row for row in campaign_da(campaign, exclude_flagged=False)["bad"]}
    assert bad["careful"]["caught"] == bad["careful"]["bad_items"] > 0
    assert bad["careful"]["mean_drop"] == pytest.approx(60.0)
    assert bad["careless"]["caught"] == 0


def test_the_figures_are_raw_and_z_scored_as_computed_by_hand():
    ann, bob = f.user("ann"), f.user("bob")
    campaign = _study([ann, bob])
    # ann: sysA 60, sysB 40 on every segment (mean 50, sd 10: z +1 / -1); bob: sysA 100, sysB 90 (z +1 / -1)
    _score_all(campaign, ann, lambda w: 60 if w.item.system == "sysA" else 40)
    _score_all(campaign, bob, lambda w: 100 if w.item.system == "sysA" else 90)
    result = campaign_da(campaign, n_resamples=50, seed=0)
    raw = {s["system"]: s for s in result["systems"]}
    z = {s["system"]: s for s in result["z_systems"]}
    assert raw["sysA"]["score"] == pytest.approx(80.0) and raw["sysB"]["score"] == pytest.approx(65.0)
    assert z["sysA"]["score"] == pytest.approx(1.0) and z["sysB"]["score"] == pytest.approx(-1.0)
    assert raw["sysA"]["ratings"] == 6 and raw["sysA"]["segments"] == 3
    assert [s["system"] for s in result["z_systems"]] == ["sysA", "sysB"]
    assert result["agreement"]["pairs"][0]["outputs"] == 6 and result["agreement"]["pairs"][0]["pearson"] > 0.9


def test_the_report_and_card_carry_the_da_section_and_the_api_its_json(client):
    ann, bob = f.user("ann"), f.user("bob")
    campaign = _study([ann, bob])
    _score_all(campaign, ann, lambda w: 60 if w.item.system == "sysA" else 40)
    _score_all(campaign, bob, lambda w: 100 if w.item.system == "sysA" else 90)
    files = report_files(campaign, "latex")
    tex = "\n".join(v.decode() for k, v in files.items() if not k.startswith("figures/"))
    assert "DA scores by system" in tex and "z-scores" in tex and "ESA scores" not in tex
    assert any(k.startswith("figures/da_scores") for k in files)
    researcher = f.user("res", role="researcher")
    api = Api(researcher)
    body = api("get", f"/analytics/campaigns/{campaign.pk}/figures/da_scores?resamples=20").json()
    assert {s["system"] for s in body["systems"]} == {"sysA", "sysB"}
    assert api("get", f"/analytics/campaigns/{campaign.pk}/figures/esa_scores").status_code == 422
    assert api("get", f"/analytics/campaigns/{campaign.pk}/esa").status_code == 422
    client.force_login(researcher)
    card = client.get(reverse("labeled_card", args=[campaign.pk])).json()
    assert {r["system"]: r["score"] for r in card["figures"]["da_scores"]} == {
        s["system"]: s["score"] for s in campaign_da(campaign)["systems"]}
    page = client.get(reverse("analytics_campaign", args=[campaign.pk])).content.decode()
    assert "DA z-scores by system" in page and "figures/da_scores" in page


def test_appraise_csv_round_trips_into_a_fresh_campaign(tmp_path):
    ann, bob = f.user("ann"), f.user("bob")
    campaign = _study([ann, bob], options={"source_language": "deu", "target_language": "eng"})
    _score_all(campaign, ann, lambda w: 60 if w.item.system == "sysA" else 40)
    _score_all(campaign, bob, lambda w: 100 if w.item.system == "sysA" else 90)
    out = tmp_path / "scores.csv"
    call_command("export_campaign", campaign=campaign.pk, format="appraise-csv", output=out)
    lines = out.read_text().splitlines()
    assert len(lines) == 12
    first = lines[0].split(",")
    assert first[3:7] == ["TGT", "deu", "eng", first[6]] and first[8] == "True" and len(first) == 12
    # back in: the same ratings in an empty DA campaign over the same dataset
    fresh = f.campaign("imported", campaign.dataset, [], [], protocol=protocols.DA)
    with out.open() as handle:
        counts = CAMPAIGN_FORMATS["appraise-csv"].read(fresh, handle)
    assert counts["ratings"] == 12
    assert campaign_da(fresh)["systems"] == campaign_da(campaign)["systems"]
    with out.open() as handle, pytest.raises(ProtocolError, match="already rated"):
        CAMPAIGN_FORMATS["appraise-csv"].read(fresh, handle)
    with pytest.raises(ProtocolError, match="line 1, score"):
        list(appraise.read_appraise(io.StringIO("ann,sysA,seg0,TGT,deu,eng,101,,True,[],,\n")))


def test_the_campaign_commands_refuse_formats_the_protocol_does_not_declare_and_import_makes_annotators(tmp_path):
    from django.core.management.base import CommandError

    ann = f.user("ann")
    campaign = _study([ann], per_item=1)
    with pytest.raises(CommandError, match="appraise-csv, not 'mqm-tsv'"):
        call_command("export_campaign", campaign=campaign.pk, format="mqm-tsv")
    path = tmp_path / "in.csv"
    path.write_text("annotator,system,item,type,source language,target language,score,document,complete,spans,"
                    "start,end\nnewcomer,sysA,seg0,TGT,deu,eng,33,,True,[],1700000000.5,1700000060\n"
                    "newcomer,sysA,seg0,BAD,deu,eng,3,,True,[],,\n")
    refused = r"unknown annotators newcomer \(--create-annotators makes them\) - nothing was imported"
    with pytest.raises(CommandError, match=refused):
        call_command("import_campaign", str(path), campaign=campaign.pk, format="appraise-csv")
    out = io.StringIO()
    call_command("import_campaign", str(path), campaign=campaign.pk, format="appraise-csv", create_annotators=True,
                 stdout=out)
    assert "1 ratings, 1 skipped, 1 annotators created" in out.getvalue()
    imported = Assignment.objects.get(campaign=campaign, annotator__username="newcomer")
    assert imported.is_done() and imported.item_score.score == 33 and not imported.annotator.has_usable_password()
    assert (imported.opened_at.timestamp(), imported.finished_at.timestamp()) == (1700000000.5, 1700000060.0)
