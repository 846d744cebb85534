"""Adjudication: the review queue holds exactly the disagreements, only reviewers reach it, experts never see
names; decisions are audited and undoable; the consensus reaches export_items and the labeled set."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.test import Client

from annotator.models import AdjudicationEvent, Assignment
from annotator.selectors.review import ADDED, MACHINE, review_entry, review_queue
from annotator.services.adjudication import (
    AdjudicationError,
    adjudication_redo,
    adjudication_set,
    adjudication_undo,
)
from annotator.services.exporting import ExportFilter, export_jsonl
from tests.adjudication_study import three_judge_study
from tests.factories import OUTPUT_1, Built, build_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def judges(make_user):
    return make_user("ann1"), make_user("ann2"), make_user("ann3")


@pytest.fixture
def study(judges) -> tuple[Built, dict]:
    return three_judge_study(judges)


def test_review_queue_holds_exactly_the_disagreements(study):
    built, found = study
    queue = review_queue(built.campaign)
    got = {(e.kind, e.span.pk) for e in queue}
    assert got == {(MACHINE, built.spans["a1_missing"].pk), (MACHINE, built.spans["b1_family"].pk),
                   (ADDED, found["italian1"].pk), (ADDED, found["cheap"].pk)}
    italian = next(e for e in queue if e.span.pk == found["italian1"].pk)
    assert [(v.judge, v.span_verdict) for v in italian.verdicts] == [
        ("ann1", "error"), ("ann2", "error"), ("ann3", "not_error")]
    assert italian.consensus.span_verdict == "error" and italian.consensus.method == "majority"
    b1 = next(e for e in queue if e.span.pk == built.spans["b1_family"].pk)
    assert b1.consensus.explanation_verdict is None and b1.consensus.method == "unresolved"


def test_adjudication_overrides_majority_keeps_agreement_and_undoes(study, researcher):
    built, _ = study
    span = built.spans["b1_family"]
    adjudication_set(campaign=built.campaign, span_id=span.pk, user=researcher,
                     changes={"explanation_verdict": "vague", "note": "the data says yes"})
    adjudication_set(campaign=built.campaign, span_id=span.pk, user=researcher,
                     changes={"explanation_verdict": "incorrect"})
    entry = next(e for e in review_queue(built.campaign) if e.span.pk == span.pk)
    assert (entry.consensus.span_verdict, entry.consensus.explanation_verdict) == ("error", "incorrect")
    assert entry.consensus.method == "adjudicated"
    assert entry.consensus.agreement == round(1 / 3, 4)  # the judges' agreement, before adjudication
    events = list(AdjudicationEvent.objects.order_by("id").values_list("field", "old_value", "new_value"))
    assert events == [("explanation_verdict", "", "vague"), ("note", "", "the data says yes"),
                      ("explanation_verdict", "vague", "incorrect")]
    adjudication_undo(campaign=built.campaign, user=researcher)
    entry = next(e for e in review_queue(built.campaign) if e.span.pk == span.pk)
    assert entry.consensus.explanation_verdict == "vague"
    assert AdjudicationEvent.objects.filter(undone=True).count() == 1
    adjudication_redo(campaign=built.campaign, user=researcher)
    assert review_entry(built.campaign, span.pk).consensus.explanation_verdict == "incorrect"
    assert adjudication_redo(campaign=built.campaign, user=researcher) is None  # nothing undone any more
    adjudication_undo(campaign=built.campaign, user=researcher)
    assert AdjudicationEvent.objects.filter(undone=True).count() == 1
    adjudication_undo(campaign=built.campaign, user=researcher)
    adjudication_undo(campaign=built.campaign, user=researcher)
    entry = next(e for e in review_queue(built.campaign) if e.span.pk == span.pk)
    assert entry.consensus.method == "unresolved" and entry.decision.note == ""
    assert adjudication_undo(campaign=built.campaign, user=researcher) is None


def test_adjudication_redo_is_gone_once_something_new_is_decided(study, researcher):
    built, _ = study
    span = built.spans["a1_missing"].pk
    adjudication_set(campaign=built.campaign, span_id=span, user=researcher, changes={"span_verdict": "error"})
    adjudication_undo(campaign=built.campaign, user=researcher)
    adjudication_set(campaign=built.campaign, span_id=span, user=researcher, changes={"note": "new branch"})
    assert adjudication_redo(campaign=built.campaign, user=researcher) is None
    assert review_entry(built.campaign, span).decision.span_verdict == ""


def test_adjudication_refuses_bad_values_and_foreign_spans(study, researcher, make_user):
    built, found = study
    campaign = built.campaign
    with pytest.raises(AdjudicationError, match="span_verdict"):
        adjudication_set(campaign=campaign, span_id=built.spans["b1_family"].pk, user=researcher,
                         changes={"span_verdict": "maybe"})
    with pytest.raises(AdjudicationError, match="added error"):
        adjudication_set(campaign=campaign, span_id=found["cheap"].pk, user=researcher,
                         changes={"explanation_verdict": "correct"})
    other = build_campaign([make_user("ann9")], name="Other campaign")
    with pytest.raises(AdjudicationError, match="not judged"):
        adjudication_set(campaign=campaign, span_id=other.spans["b2_rating"].pk, user=researcher,
                         changes={"span_verdict": "error"})


def test_review_screen_only_for_reviewers(study, judges, researcher, make_user):
    built, _ = study
    url = f"/campaigns/{built.campaign.pk}/adjudicate/"
    client = Client()
    client.force_login(judges[0])
    assert client.get(url).status_code == 403
    assert client.post(f"{url}{built.spans['b1_family'].pk}/", {"field": "span_verdict", "value": "error"}
                       ).status_code == 403
    assert client.get(f"/api/campaigns/{built.campaign.pk}/disputes").status_code == 403
    outsider = make_user("stranger")
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(researcher)
    assert client.get(url).status_code == 200
    # Named reviewers: only they (and admins) adjudicate.
    named = make_user("rev", role="researcher")
    built.campaign.reviewers.set([named])
    assert client.get(url).status_code == 403
    client.force_login(named)
    assert client.get(url).status_code == 200
    client.force_login(make_user("boss", role="admin"))
    assert client.get(url).status_code == 200


def test_reviewers_see_names_and_comments_escaped_experts_never(study, judges, researcher):
    built, _ = study
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{built.campaign.pk}/adjudicate/").content.decode()
    assert "ann3" in page and "made up by ann3&#x27;s reading" in page
    assert "no &lt;b&gt;location&lt;/b&gt; given" in page and "<b>location</b>" not in page
    assert "secret-run-alpha" in page  # reviewers may see which evaluator
    client.force_login(judges[0])
    for a in Assignment.objects.filter(campaign=built.campaign, annotator=judges[0]):
        screen = client.get(f"/work/{a.pk}/").content.decode()
        assert "ann2" not in screen and "ann3" not in screen and "made up by" not in screen


def test_review_screen_save_and_undo_answer_the_card(study, researcher):
    built, _ = study
    client = Client()
    client.force_login(researcher)
    span = built.spans["a1_missing"]
    base = f"/campaigns/{built.campaign.pk}/adjudicate/"
    answer = client.post(f"{base}{span.pk}/", {"field": "span_verdict", "value": "hallucination"})
    assert answer.status_code == 200
    html = answer.content.decode()
    assert f'id="dispute-{span.pk}"' in html and "Decided" in html and "(adjudicated)" in html
    assert client.post(f"{base}{span.pk}/", {"field": "span_verdict", "value": "nope"}).status_code == 422
    assert client.post(f"{base}{span.pk}/", {"field": "flags", "value": "x"}).status_code == 422
    undone = client.post(f"{base}undo/")
    assert "Open" in undone.content.decode() and "(majority)" in undone.content.decode()
    assert undone["HX-Retarget"] == f"#dispute-{span.pk}"  # the undo button does not know which card changed
    assert client.post(f"{base}undo/").status_code == 409


def test_review_card_chips_post_their_value_and_a_pressed_chip_clears(study, researcher):
    built, _ = study
    client = Client()
    client.force_login(researcher)
    span = built.spans["a1_missing"]
    base = f"/campaigns/{built.campaign.pk}/adjudicate/"
    html = client.post(f"{base}{span.pk}/", {"field": "span_verdict", "value": "hallucination"}).content.decode()
    pressed = '{&quot;field&quot;: &quot;span_verdict&quot;, &quot;value&quot;: &quot;&quot;}'
    assert f'hx-vals="{pressed}" data-field="span_verdict" data-value="hallucination" aria-pressed="true"' in html
    assert 'data-value="error" aria-pressed="false"' in html
    assert '&quot;value&quot;: &quot;error&quot;}" data-field="span_verdict" data-value="error"' in html


def test_review_card_history_lists_changes_and_undos_for_reviewers_only(study, researcher, judges):
    built, _ = study
    client = Client()
    client.force_login(researcher)
    span = built.spans["a1_missing"]
    base = f"/campaigns/{built.campaign.pk}/adjudicate/"
    assert client.get(f"{base}{span.pk}/history/").status_code == 404  # nothing decided yet
    client.post(f"{base}{span.pk}/", {"field": "span_verdict", "value": "hallucination"})
    client.post(f"{base}undo/")
    html = client.get(f"{base}{span.pk}/history/").content.decode()
    rows = html.split("<tr")[2:]  # after the header row
    assert len(rows) == 2
    assert "Change (undone)" in rows[0] and "span verdict" in rows[0] and "Hallucination" in rows[0]
    assert "Undo" in rows[1] and researcher.username in rows[1]
    client.force_login(judges[0])
    assert client.get(f"{base}{span.pk}/history/").status_code == 403


def test_review_card_of_a_tie_names_it_once(study, researcher):
    built, _ = study
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{built.campaign.pk}/adjudicate/").content.decode()
    # b1_family: the explanation verdicts tie, so the card says "no majority" and why, never "unresolved (unresolved)"
    card = page.split(f'id="dispute-{built.spans["b1_family"].pk}"')[1].split("</article>")[0]
    assert '<span class="final-explanation">no majority</span>' in card
    assert "(a tie: a decision settles it)" in card
    assert "unresolved" not in page


def test_api_disputes_twins(study, researcher):
    built, found = study
    client = Client()
    client.force_login(researcher)
    rows = client.get(f"/api/campaigns/{built.campaign.pk}/disputes").json()
    assert len(rows) == 4
    cheap = next(r for r in rows if r["span_id"] == found["cheap"].pk)
    assert cheap["kind"] == "added" and cheap["consensus"]["span_verdict"] == "not_error"
    put = client.put(f"/api/campaigns/{built.campaign.pk}/disputes/{found['cheap'].pk}",
                     data=json.dumps({"span_verdict": "error", "note": "ann3 is right"}),
                     content_type="application/json")
    assert put.status_code == 200
    assert put.json()["consensus"] == {"span_verdict": "error", "explanation_verdict": None,
                                       "method": "adjudicated", "agreement": round(2 / 3, 4), "occurrence": None}
    bad = client.put(f"/api/campaigns/{built.campaign.pk}/disputes/{found['cheap'].pk}",
                     data=json.dumps({"span_verdict": "hallucination"}), content_type="application/json")
    assert bad.status_code == 422 and "added error" in bad.json()["detail"]
    assert client.post(f"/api/campaigns/{built.campaign.pk}/disputes/undo").json()["decision"]["note"] == ""


def test_export_items_spans_carry_consensus(study, researcher):
    built, found = study
    adjudication_set(campaign=built.campaign, span_id=built.spans["a1_missing"].pk, user=researcher,
                     changes={"span_verdict": "hallucination"})
    records = [json.loads(line) for line in export_jsonl(built.dataset, ExportFilter(campaign_id=built.campaign.pk))]
    spans = {(s["text"], a["kind"]): s for r in records for a in r["annotations"] for s in a["spans"]}
    assert spans[("serves French food", "ensemble")]["consensus"] == {
        "span_verdict": "hallucination", "explanation_verdict": "correct", "method": "adjudicated",
        "agreement": round(2 / 3, 4)}
    assert spans[("5 out of 5", "ensemble")]["consensus"]["method"] == "single"
    assert spans[("Italian food", "human")]["consensus"]["method"] == "majority"
    assert spans[("cheap", "human")]["consensus"]["span_verdict"] == "not_error"


def test_labeled_set_with_three_judges(study, researcher, tmp_path):
    built, _ = study
    adjudication_set(campaign=built.campaign, span_id=built.spans["b1_family"].pk, user=researcher,
                     changes={"explanation_verdict": "vague"})
    out = tmp_path / "labeled.jsonl"
    call_command("export_labeled", "--campaign", str(built.campaign.pk), "--format", "jsonl", "-o", str(out))
    records = {r["item_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(records) == {"i1", "i2"}
    i1, i2 = records["i1"], records["i2"]
    assert i1["inputs"] == built.items[0].inputs and i1["outputs"] == {"Text": OUTPUT_1}
    assert [(s["text"], s["origin"], s["method"]) for s in i1["errors"]] == [  # in text order
        ("is not family-friendly", "machine", "adjudicated"), ("not family-friendly", "machine", "unanimous")]
    b1 = i1["errors"][0]
    assert (b1["explanation_verdict"], b1["agreement"], b1["judges"]) == ("vague", round(1 / 3, 4), 3)
    assert {(s["text"], s["span_verdict"]) for s in i1["rejected"]} == {
        ("serves French food", "no_span"), ("cheap", "not_error")}
    assert sorted(s["text"] for s in i2["errors"]) == ["5 out of 5", "Italian food", "city centre"]
    italian = next(s for s in i2["errors"] if s["text"] == "Italian food")
    assert italian["found_by"] == ["ann1", "ann2"] and italian["explanation"] == "data: Italian?"
    assert i1["unresolved"] == [] and i2["unresolved"] == []
    card = json.loads((tmp_path / "labeled.card.json").read_text())
    assert card["judges"] == ["ann1", "ann2", "ann3"]
    assert card["counts"]["errors"] == 5 and card["counts"]["rejected"] == 2 and card["counts"]["unresolved"] == 0
    assert card["counts"]["by_method"]["adjudicated"] == 1 and card["counts"]["by_method"]["single"] == 1
    assert card["adjudication"] == {"disagreements": 4, "decided": 1, "open": 3, "changes": 1}
    assert card["guidelines"]["sha256"] and card["campaign"]["sampled"] is False
    # Parquet holds the same records.
    import pyarrow.parquet as pq

    pq_path = tmp_path / "labeled.parquet"
    call_command("export_labeled", "--campaign", str(built.campaign.pk), "--format", "parquet", "-o", str(pq_path))
    rows = pq.read_table(pq_path).to_pylist()
    assert [r["item_id"] for r in rows] == ["i1", "i2"]
    assert [s["text"] for s in rows[0]["errors"]] == [s["text"] for s in i1["errors"]]
    assert dict(rows[0]["inputs"]) == i1["inputs"]


def test_labeled_set_browser_and_api_twins(study, researcher, judges):
    built, _ = study
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/analytics/campaigns/{built.campaign.pk}/labeled.jsonl")
    lines = b"".join(page.streaming_content).decode().splitlines()
    api = client.get(f"/api/analytics/campaigns/{built.campaign.pk}/labeled?format=jsonl")
    assert b"".join(api.streaming_content).decode().splitlines() == lines and len(lines) == 2
    assert client.get(f"/api/analytics/campaigns/{built.campaign.pk}/labeled?format=xml").status_code == 422
    assert client.get(f"/analytics/campaigns/{built.campaign.pk}/labeled.xml").status_code == 400
    card = client.get(f"/api/analytics/campaigns/{built.campaign.pk}/labeled/card").json()
    assert card["counts"]["records"] == 2
    client.force_login(judges[0])
    assert client.get(f"/api/analytics/campaigns/{built.campaign.pk}/labeled").status_code == 403


def test_export_labeled_refuses_unknown_campaign_and_binary_stdout(study):
    built, _ = study
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no campaign"):
        call_command("export_labeled", "--campaign", "999999")
    with pytest.raises(CommandError, match="Parquet"):
        call_command("export_labeled", "--campaign", str(built.campaign.pk), "--format", "parquet")
