"""Decoys, planted outputs, telemetry, vigilance and the consequences, through the services and the API."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.core.management import call_command
from django.utils import timezone

from analytics.exports.labeled import labeled_card, labeled_records
from analytics.selectors import Scope, accuracy_report
from annotator.models import Assignment, JudgmentEvent, WorkAction
from annotator.selectors.spans import HANDLE_BASE, item_errors, span_handle
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_finish
from annotator.services.judgments import judgment_set
from corpus.models import ErrorSpan
from quality.engine import figures
from quality.models import CheckSpan, PlantedOutput
from quality.selectors.vigilance import annotator_flags, campaign_checks
from quality.services import CheckSettings
from tests.quality.conftest import Api, build_study

CHECKS = CheckSettings(decoys=0.2, planted=0.2)


def _spans_with_offsets(item_id: int) -> list[tuple[int, int]]:
    return list(ErrorSpan.objects.filter(annotation__item_id=item_id, start__isnull=False)
                .exclude(check_span__role=CheckSpan.Role.DECOY).values_list("start", "end"))


def test_decoys_mark_stretches_no_source_marks_under_the_campaigns_labels(judges):
    study = build_study(list(judges), checks=CHECKS)
    decoys = list(CheckSpan.objects.filter(campaign=study.campaign, role=CheckSpan.Role.DECOY)
                  .select_related("span__annotation__item", "campaign_run"))
    # 20 machine spans, share 0.2: 0.2 * 20 / 0.8 = 5 decoys
    assert len(decoys) == 5
    for decoy in decoys:
        item = decoy.span.annotation.item
        assert item.output[decoy.span.start:decoy.span.end] == decoy.span.text
        # supported by the input (the claim does not hold): each number and name of the stretch is in the input
        facts = re.findall(r"\d+|[A-Z][a-z]+(?: [A-Z][a-z]+)*", decoy.span.text)
        assert facts and all(f in item.inputs["Data"] for f in facts), decoy.span.text
        assert not any(decoy.span.start < b and a < decoy.span.end for a, b in _spans_with_offsets(item.pk))
        assert decoy.campaign_run.label in {"Evaluator A", "Evaluator B"}
        assert (decoy.key_span_verdict, decoy.key_explanation_verdict) == ("not_error", "not_error")


def test_decoys_copy_their_donors_match_tag_with_a_written_location_to_show(judges):
    # Every machine span's location was found only loosely: run A's after normalising, run B's by a fuzzy match.
    # Decoys copy their donor's tag, and the card's "written as" line has a location written with that slip.
    base = build_study(list(judges), name="loose base")
    ErrorSpan.objects.filter(annotation__source=base.runs[0]).update(match="normalized")
    ErrorSpan.objects.filter(annotation__source=base.runs[1]).update(match="fuzzy")
    study = build_study(list(judges), name="loose", checks=CHECKS, data=base.campaign.dataset, runs=base.runs,
                        items=base.items)
    decoys = list(CheckSpan.objects.filter(campaign=study.campaign, role=CheckSpan.Role.DECOY)
                  .select_related("span__annotation__item", "campaign_run"))
    assert decoys
    for decoy in decoys:
        stretch = decoy.span.annotation.item.output[decoy.span.start:decoy.span.end]
        if decoy.span.match == "normalized":
            assert decoy.span.text != stretch and decoy.span.text.lower() == stretch.lower()
        elif decoy.span.match == "fuzzy":
            assert len(decoy.span.text.split()) == len(stretch.split()) - 1
        else:  # a stretch too short to slip stays exact
            assert decoy.span.match == "exact" and decoy.span.text == stretch
    assert {d.span.match for d in decoys} & {"normalized", "fuzzy"}


def test_planted_copies_change_one_fact_outside_every_machine_span(judges):
    study = build_study(list(judges), checks=CHECKS)
    for judge in judges:
        planted = list(PlantedOutput.objects.filter(campaign=study.campaign, annotator=judge))
        # 5 real outputs each, share 0.2: round(0.2 * 5 / 0.8) = 1 planted output, at an ordinary place in the queue
        assert len(planted) == 1
        p = planted[0]
        own = set(Assignment.objects.filter(campaign=study.campaign, annotator=judge, item__derived_from__isnull=True)
                  .values_list("item_id", flat=True))
        assert p.original_id not in own  # never the same output twice
        assert Assignment.objects.filter(campaign=study.campaign, annotator=judge, item=p.item).exists()
        original, copy = p.original.output, p.item.output
        assert copy[:p.start] == original[:p.start] and copy[p.end:] == original[p.start + len(p.before):]
        assert copy[p.start:p.end] == p.after != p.before
        # the machine spans come along, shifted, and none covers the planted stretch
        copies = CheckSpan.objects.filter(campaign=study.campaign, role=CheckSpan.Role.COPY,
                                          span__annotation__item=p.item).select_related("span", "original")
        assert copies.count() == 2
        for c in copies:
            assert copy[c.span.start:c.span.end] == c.original.text
            assert not (c.span.start < p.end and p.start < c.span.end)


class _Cards(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cards: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "article" and "error-card" in dict(attrs).get("class", ""):
            self.cards.append(dict(attrs))


def test_nothing_the_annotator_receives_tells_a_decoy_apart(client, judges):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.5))
    decoy = CheckSpan.objects.filter(campaign=study.campaign, role=CheckSpan.Role.DECOY).select_related(
        "span__annotation").first()
    judge = next(j for j in judges if Assignment.objects.filter(
        campaign=study.campaign, annotator=j, item_id=decoy.span.annotation.item_id).exists())
    work = Assignment.objects.get(campaign=study.campaign, annotator=judge, item_id=decoy.span.annotation.item_id)
    rows, _ = item_errors(work)
    decoy_handle = span_handle(work.pk, decoy.span_id)
    assert decoy_handle in {r.handle for r in rows}
    # cards follow the text, whatever made them
    starts = [r.span.start for r in rows]
    assert starts == sorted(starts)

    client.force_login(judge)
    html = client.get(f"/work/{work.pk}/").content.decode()
    parser = _Cards()
    parser.feed(html)
    by_handle = {int(c["data-span"]): c for c in parser.cards}
    fake = by_handle.pop(decoy_handle)
    for real in by_handle.values():
        assert set(real) == set(fake)  # the same attributes
        assert real["class"] == fake["class"]
        for name in ("data-version", "data-span-verdict", "data-explanation-verdict", "data-has-offsets"):
            assert real[name] == fake[name]
    for card in parser.cards:
        assert int(card["data-span"]) >= HANDLE_BASE  # handles, never database ids
        assert str(card["data-span"]) in card["id"] and str(card["data-span"]) in card["data-save-url"]
    assert str(decoy.span_id) not in {c["data-span"] for c in parser.cards}

    detail = Api(judge)("get", f"/assignments/{work.pk}").json()
    errors = {e["span_id"]: e for e in detail["errors"]}
    fake_json = errors.pop(decoy_handle)
    for real_json in errors.values():
        assert set(real_json) == set(fake_json)
        assert {type(v) for v in real_json.values()} >= {type(v) for v in fake_json.values()} - {type(None)}
    assert fake_json["label"] in {"Evaluator A", "Evaluator B"} and fake_json["match"] == "exact"
    # a verdict saved through the handle lands on the decoy
    r = Api(judge)("patch", f"/assignments/{work.pk}/judgments/{decoy_handle}", {"span_verdict": "not_error"})
    assert r.status_code == 200 and r.json()["span_id"] == decoy_handle
    # the database id is no handle
    assert Api(judge)("patch", f"/assignments/{work.pk}/judgments/{decoy.span_id}",
                      {"span_verdict": "error"}).status_code == 404


def _judge_all(study, judge, *, stamp: bool, ms: int) -> int:
    """Judge every card of the judge's queue: the stamper presses Error on all and adds nothing; the careful one
    follows the truth (decoys and false alarms are not errors) and adds the planted error. Returns spans judged."""
    n = 0
    for work in Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order"):
        rows, _ = item_errors(work)
        for row in rows:
            real_error = row.span.pk in {s.pk for s in study.wrong.values()} or (
                hasattr(row.span, "check_span") and row.span.check_span.original_id in {
                    s.pk for s in study.wrong.values()})
            verdict = "error" if stamp or real_error else "not_error"
            explanation = "correct" if verdict == "error" else "not_error"
            judgment_set(assignment=work, span=row.span, user=judge, ms=ms,
                         changes={"span_verdict": verdict, "explanation_verdict": explanation})
            n += 1
        planted = PlantedOutput.objects.filter(campaign=study.campaign, item=work.item).first()
        if planted and not stamp:
            added_span_create(assignment=work, user=judge, start=planted.start, end=planted.end, ms=ms)
        assignment_finish(assignment=work, user=judge)
    return n


def test_rubber_stamper_is_flagged_and_careful_judge_is_not(judges):
    stamper, careful = judges
    study = build_study(list(judges), checks=CheckSettings(decoys=0.3, planted=0.4))
    n = _judge_all(study, stamper, stamp=True, ms=300)
    assert n <= 30  # flagged within their first 30 spans
    _judge_all(study, careful, stamp=False, ms=4000)
    rows = {r.annotator: r.as_dict() for r in campaign_checks(study.campaign)}
    bad, good = rows["stamper"], rows["careful"]
    assert bad["reasons"] == [figures.RUBBER_STAMP, figures.DECOYS, figures.PLANTED]
    assert bad["median_ms_to_verdict"] == 300.0 and bad["confirm_rate"] == 1.0 and bad["fast_confirm_rate"] == 1.0
    # round(0.4 * 5 / 0.6) = 3 planted outputs, none found: Wilson upper bound of 0/3 is 0.5615 < 0.6
    assert bad["planted"] == {"shown": 3, "found": 0, "rate": 0.0, "ci_low": 0.0,
                              "ci_high": pytest.approx(0.5615, abs=1e-4)}
    assert bad["decoys"]["shown"] >= 3 and bad["decoys"]["rejected"] == 0
    assert not good["flagged"] and good["reasons"] == []
    assert good["planted"]["found"] == 3 and good["decoys"]["rejected"] == good["decoys"]["shown"]
    assert annotator_flags(study.campaign, stamper) == bad["reasons"]
    assert annotator_flags(study.campaign, careful) == []


def test_table_4_with_checks_equals_the_same_work_without_checks(make_user):
    plain_judges = [make_user("p1"), make_user("p2")]
    checked_judges = [make_user("c1"), make_user("c2")]
    plain = build_study(plain_judges, name="plain")
    checked = build_study(checked_judges, name="checked", checks=CHECKS, data=plain.campaign.dataset,
                          runs=plain.runs, items=plain.items)
    for study, (stamper, careful) in ((plain, plain_judges), (checked, checked_judges)):
        _judge_all(study, stamper, stamp=True, ms=300)
        _judge_all(study, careful, stamp=False, ms=4000)
    a = accuracy_report(Scope(campaign_id=plain.campaign.pk), n_resamples=10)
    b = accuracy_report(Scope(campaign_id=checked.campaign.pk), n_resamples=10)
    assert a.pooled.matrix.counts == b.pooled.matrix.counts
    assert a.pooled.matrix.total == 20  # 10 outputs x 2 machine spans, decoys and planted copies left out
    assert {k: g.matrix.counts for k, g in a.by_run.items()} == {k: g.matrix.counts for k, g in b.by_run.items()}
    # the labeled set has no planted output and no decoy either
    records = list(labeled_records(checked.campaign))
    assert len(records) == 10
    assert all(s["origin"] == "machine" and s["text"] != "" for r in records for s in r["rejected"])
    assert sum(len(r["errors"]) + len(r["rejected"]) + len(r["unresolved"]) for r in records) == 20


def test_exclude_flagged_leaves_the_stamper_out_and_the_card_says_so(make_user):
    stamper, careful = make_user("s1"), make_user("k1")
    study = build_study([stamper, careful], checks=CheckSettings(decoys=0.2, planted=0.2, exclude_flagged=True))
    _judge_all(study, stamper, stamp=True, ms=300)
    _judge_all(study, careful, stamp=False, ms=4000)
    report = accuracy_report(Scope(campaign_id=study.campaign.pk), n_resamples=10)
    assert report.pooled.matrix.total == 10  # only the careful judge's 5 outputs x 2 spans
    card = labeled_card(study.campaign, fmt="jsonl")
    qc = card["quality_control"]
    assert qc["excluded"] == ["s1"] and qc["settings"]["exclude_flagged"] is True
    assert "Potato" in qc["rules"]["rubber_stamp"]
    assert {r["annotator"]: r["flagged"] for r in qc["annotators"]} == {"k1": False, "s1": True}


def test_export_labeled_exclude_flagged_for_one_export(make_user, tmp_path):
    stamper, careful = make_user("s2"), make_user("k2")
    study = build_study([stamper, careful], checks=CHECKS, per_item=2)
    _judge_all(study, stamper, stamp=True, ms=300)
    _judge_all(study, careful, stamp=False, ms=4000)
    call_command("export_labeled", "--campaign", str(study.campaign.pk), "-o", str(tmp_path / "all.jsonl"))
    call_command("export_labeled", "--campaign", str(study.campaign.pk), "-o", str(tmp_path / "kept.jsonl"),
                 "--exclude-flagged")
    kept_card = json.loads((tmp_path / "kept.card.json").read_text())
    all_card = json.loads((tmp_path / "all.card.json").read_text())
    assert kept_card["quality_control"]["excluded"] == ["s2"] and all_card["quality_control"]["excluded"] == []
    kept = [json.loads(line) for line in (tmp_path / "kept.jsonl").read_text().splitlines()]
    # with only the careful judge, every false alarm is rejected and every wrong score kept
    assert sum(len(r["errors"]) for r in kept) == 10 and sum(len(r["rejected"]) for r in kept) == 10


def test_ms_is_stored_with_every_save_and_clamped(judges):
    judge = judges[0]
    study = build_study([judge])
    work = Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order").first()
    handle = span_handle(work.pk, study.wrong[work.item_id].pk)
    api = Api(judge)
    assert api("patch", f"/assignments/{work.pk}/judgments/{handle}",
               {"span_verdict": "error", "ms": 1234.6}).status_code == 200
    assert api("post", f"/assignments/{work.pk}/judgments",
               {"span_id": handle, "explanation_verdict": "correct", "ms": 10**9}).status_code == 200
    assert list(JudgmentEvent.objects.order_by("pk").values_list("field", "ms")) == [
        ("span_verdict", 1234), ("explanation_verdict", 600_000)]
    bad = api("patch", f"/assignments/{work.pk}/judgments/{handle}", {"comment": "x", "ms": "soon"})
    assert bad.status_code == 422 and "ms" in bad.content.decode()
    r = api("post", f"/assignments/{work.pk}/added-spans", {"start": 4, "end": 8, "ms": -40})
    assert r.status_code == 201
    assert WorkAction.objects.filter(kind=WorkAction.Kind.ADDED).get().ms == 0


def test_active_time_caps_idle_gaps_at_sixty_seconds(judges):
    judge = judges[0]
    study = build_study([judge])
    work = Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order").first()
    span = study.wrong[work.item_id]
    judgment_set(assignment=work, span=span, user=judge, changes={"span_verdict": "error"})  # starts the clock
    for gap in (20, 500):  # 20 s counts; 500 s counts as 60
        Assignment.objects.filter(pk=work.pk).update(last_active_at=timezone.now() - timedelta(seconds=gap))
        work.refresh_from_db()
        judgment_set(assignment=work, span=span, user=judge, changes={"comment": str(gap)})
    work.refresh_from_db()
    assert work.active_seconds == pytest.approx(80, abs=0.5)


def test_campaign_api_takes_the_check_settings_and_names_bad_ones(researcher, make_user):
    make_user("q1")
    study = build_study([make_user("q0")], name="api base")
    api = Api(researcher)
    body = {"name": "checked via api", "dataset_id": study.campaign.dataset_id,
            "run_ids": [r.pk for r in study.runs], "annotators": ["q1"], "aspects": ["accuracy"],
            "decoys": 0.1, "planted": 0.1, "vigilance_min": 0.7, "exclude_flagged": True,
            "qualification": {"items": [study.items[0].pk], "pass": 0.9}}
    for field, value, words in [("decoys", 0.6, "decoys"), ("planted", -0.1, "planted"),
                                ("vigilance_min", 1.5, "vigilance_min")]:
        r = api("post", "/campaigns", {**body, field: value})
        assert r.status_code == 422 and words in r.json()["detail"], r.content
    r = api("post", "/campaigns", {**body, "qualification": {"items": [study.items[0].pk, 999999, 999998]}})
    assert r.status_code == 422
    assert "qualification.items" in r.json()["detail"] and "999999, 999998" in r.json()["detail"]
    assert api("post", "/campaigns", {**body, "decoys": "many"}).status_code == 422
    r = api("post", "/campaigns", body)
    assert r.status_code == 201, r.content
    from annotator.models import Campaign

    made = Campaign.objects.get(pk=r.json()["id"])
    assert (made.decoys, made.planted, made.vigilance_min, made.exclude_flagged) == (0.1, 0.1, 0.7, True)
    assert made.qualification == {"items": [study.items[0].pk], "pass": 0.9}
    first = Assignment.objects.filter(campaign=made).order_by("order").first()
    assert (first.item_id, first.is_training, first.phase) == (study.items[0].pk, True, "training")


def test_vigilance_and_decoys_are_for_researchers_only_and_the_command_prints_the_same(
        researcher, judges, capsys):
    study = build_study(list(judges), checks=CHECKS)
    _judge_all(study, judges[0], stamp=True, ms=300)
    annotator_api = Api(judges[0])
    for path in (f"/campaigns/{study.campaign.pk}/vigilance", f"/campaigns/{study.campaign.pk}/decoys"):
        assert annotator_api("get", path).status_code == 403
    api = Api(researcher)
    rows = api("get", f"/campaigns/{study.campaign.pk}/vigilance").json()
    assert [r["annotator"] for r in rows] == ["careful", "stamper"]
    assert set(rows[1]) >= {"annotator", "decoys", "planted", "median_ms_to_verdict", "confirm_rate",
                            "fast_confirm_rate", "changed_rate", "active_seconds", "qualification", "flagged",
                            "reasons"}
    assert set(rows[1]["decoys"]) == {"shown", "rejected", "rate", "ci_low", "ci_high"}
    assert set(rows[1]["planted"]) == {"shown", "found", "rate", "ci_low", "ci_high"}
    assert rows[1]["flagged"] and rows[1]["qualification"] is None
    call_command("vigilance", "--campaign", str(study.campaign.pk))
    assert json.loads(capsys.readouterr().out) == rows
    call_command("vigilance", "--campaign", str(study.campaign.pk), "--format", "csv")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("annotator,decoys.shown,decoys.rejected") and lines[2].startswith("stamper,")
    decoys = api("get", f"/campaigns/{study.campaign.pk}/decoys").json()
    assert len(decoys) == 5
    assert decoys[0]["key"] == {"span_verdict": "not_error", "explanation_verdict": "not_error"}
    assert decoys[0]["output"][decoys[0]["start"]:decoys[0]["end"]] == decoys[0]["text"]


def test_deleting_a_campaign_takes_its_hidden_planted_outputs_and_keeps_the_real_ones(judges, client,
                                                                                     django_user_model):
    from corpus.models import Item

    study = build_study(list(judges), checks=CHECKS)
    other = build_study(list(judges), name="twin", checks=CHECKS, data=study.campaign.dataset, runs=study.runs,
                        items=study.items)
    planted = set(PlantedOutput.objects.filter(campaign=study.campaign).values_list("item_id", flat=True))
    kept = set(PlantedOutput.objects.filter(campaign=other.campaign).values_list("item_id", flat=True))
    assert planted and kept
    real = {i.pk for i in study.items}
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.org", "root-pass-2026",
                                                                  role="admin"))
    response = client.post(f"/admin/annotator/campaign/{study.campaign.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    left = set(Item.objects.filter(dataset=study.campaign.dataset).values_list("pk", flat=True))
    assert not planted & left  # the deleted campaign's hidden copies are gone
    assert kept <= left and real <= left  # the twin's copies and every real output stay


def test_the_campaign_page_shows_each_annotators_drift_as_the_api_gives_it(judges, client, researcher):
    stamper, careful = judges
    study = build_study(list(judges), checks=CheckSettings(decoys=0.3, planted=0.4))
    _judge_all(study, stamper, stamp=True, ms=300)
    _judge_all(study, careful, stamp=False, ms=4000)
    rows = {r.annotator: r.as_dict() for r in campaign_checks(study.campaign)}
    client.force_login(researcher)
    page = client.get(f"/campaigns/{study.campaign.pk}/").content.decode()
    for name in ("stamper", "careful"):
        drift = rows[name]["drift"]
        assert any(rate is not None for rate in drift)
        shown = " · ".join("–" if rate is None else f"{rate:.2f}" for rate in drift)
        row = page[page.index(f'id="checks-{name}"'):]
        assert f'<td class="drift">{shown}</td>' in row[:row.index("</tr>")]
    assert rows["stamper"]["drift"] != rows["careful"]["drift"]  # the stamper confirms everything, the other does not
