"""Disagreeing occurrence picks are a dispute a reviewer decides: the decided place wins in the consensus and
the exports, undo restores the judges' split, and only a candidate of an ambiguous machine span is accepted."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotator.models import Adjudication, AdjudicationEvent
from annotator.selectors.review import review_entry
from annotator.services.adjudication import AdjudicationError, adjudication_set, adjudication_undo
from annotator.services.exporting import ExportFilter, export_jsonl
from tests.annotator.test_occurrence_picks import FIRST, SECOND, N, _picked_span, _two_picks

pytestmark = pytest.mark.django_db


@pytest.fixture
def split(two_annotators):
    """Two judges who agree on the verdicts but pick different occurrences of the ambiguous span."""
    built = _two_picks(two_annotators, [{"index": 0}, {"index": 1}])
    return built, built.spans["a1_family"]


def _put(client, built, span_id, body):
    return client.put(f"/api/campaigns/{built.campaign.pk}/disputes/{span_id}", data=json.dumps(body),
                      content_type="application/json")


def _export_span(built):
    """The ambiguous span as export_items writes it for the campaign (whose decisions apply)."""
    lines = export_jsonl(built.dataset, ExportFilter(campaign_id=built.campaign.pk))
    return _picked_span([json.loads(line) for line in lines])


def test_a_reviewer_decides_a_split_pick_and_the_consensus_and_export_follow(split, researcher):
    built, span = split
    before = review_entry(built.campaign, span.pk)
    assert before is not None and before.consensus.method == "unresolved" and before.consensus.occurrence is None
    adjudication_set(campaign=built.campaign, span_id=span.pk, user=researcher,
                     changes={"occurrence": f"{SECOND}-{SECOND + N}"})
    entry = review_entry(built.campaign, span.pk)
    assert entry is not None and entry.is_decided  # still listed: the judges still disagree
    assert entry.consensus.method == "adjudicated" and entry.consensus.occurrence == (SECOND, SECOND + N)
    assert _export_span(built)["consensus"]["occurrence"] == {"start": SECOND, "end": SECOND + N}
    # "none" is a decision too: the location is not in the output
    adjudication_set(campaign=built.campaign, span_id=span.pk, user=researcher, changes={"occurrence": "none"})
    assert review_entry(built.campaign, span.pk).consensus.occurrence == (None, None)
    assert _export_span(built)["consensus"]["occurrence"] == {"start": None, "end": None}


def test_undo_restores_the_judges_split(split, researcher):
    built, span = split
    adjudication_set(campaign=built.campaign, span_id=span.pk, user=researcher,
                     changes={"occurrence": f"{FIRST}-{FIRST + N}"})
    event = AdjudicationEvent.objects.get(field="occurrence")
    assert (event.old_value, event.new_value, event.version) == ("", f"{FIRST}-{FIRST + N}", 1)
    decision = adjudication_undo(campaign=built.campaign, user=researcher)
    assert decision is not None and decision.occurrence == "" and not decision.is_decided()
    entry = review_entry(built.campaign, span.pk)
    assert entry.consensus.method == "unresolved" and entry.consensus.occurrence is None
    assert "occurrence" not in _export_span(built)["consensus"]


def test_api_decides_the_occurrence_and_lists_the_candidates(split, researcher):
    built, span = split
    client = Client()
    client.force_login(researcher)
    row = next(r for r in client.get(f"/api/campaigns/{built.campaign.pk}/disputes").json()
               if r["span_id"] == span.pk)
    assert row["occurrences"] == [{"start": FIRST, "end": FIRST + N}, {"start": SECOND, "end": SECOND + N}]
    assert sorted(v["occurrence"]["start"] for v in row["verdicts"]) == [FIRST, SECOND]
    put = _put(client, built, span.pk, {"occurrence": f"{FIRST}-{FIRST + N}"})
    assert put.status_code == 200
    body = put.json()
    assert body["decision"]["occurrence"] == f"{FIRST}-{FIRST + N}" and body["versions"] == {"occurrence": 1}
    assert body["consensus"]["occurrence"] == {"start": FIRST, "end": FIRST + N}
    assert body["consensus"]["method"] == "adjudicated" and body["decided"]


@pytest.mark.parametrize("value", ["0-3", "first", f"{FIRST}-{FIRST + N + 1}", "5-2"])
def test_api_refuses_a_place_that_is_no_candidate_naming_the_field(split, researcher, value):
    built, span = split
    client = Client()
    client.force_login(researcher)
    bad = _put(client, built, span.pk, {"occurrence": value})
    assert bad.status_code == 422 and "occurrence" in bad.json()["detail"]
    assert not Adjudication.objects.filter(span=span).exclude(occurrence="").exists()


def test_a_span_that_is_not_ambiguous_has_no_occurrence_to_decide(split, researcher):
    built, span = split
    span.ambiguous = False
    span.save(update_fields=["ambiguous"])
    with pytest.raises(AdjudicationError, match="occurrence: .* not ambiguous"):
        adjudication_set(campaign=built.campaign, span_id=span.pk, user=researcher, override=True,
                         changes={"occurrence": f"{FIRST}-{FIRST + N}"})
    assert not AdjudicationEvent.objects.exists()


def test_an_added_error_has_no_occurrence_to_decide(make_user, researcher):
    from tests.adjudication_study import three_judge_study

    built, found = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    client = Client()
    client.force_login(researcher)
    bad = _put(client, built, found["cheap"].pk, {"occurrence": "none"})
    assert bad.status_code == 422 and "occurrence: an added error" in bad.json()["detail"]


def test_the_review_card_offers_the_candidates_and_posts_the_choice(split, researcher):
    built, span = split
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/campaigns/{built.campaign.pk}/adjudicate/").content.decode()
    assert "Which occurrence the explanation means" in page
    first, second = f"{FIRST}-{FIRST + N}", f"{SECOND}-{SECOND + N}"
    for value in (first, second, "none"):
        assert f'data-field="occurrence" data-value="{value}" aria-pressed="false"' in page
    assert '<span class="final-place">no majority</span>' in page
    card = client.post(f"/campaigns/{built.campaign.pk}/adjudicate/{span.pk}/",
                       {"field": "occurrence", "value": second}, HTTP_HX_REQUEST="true")
    assert card.status_code == 200
    html = card.content.decode()
    assert f'data-field="occurrence" data-value="{second}" aria-pressed="true"' in html
    assert f'<span class="final-place">{SECOND}–{SECOND + N}' in html
    assert Adjudication.objects.get(span=span).occurrence == second
    refused = client.post(f"/campaigns/{built.campaign.pk}/adjudicate/{span.pk}/",
                          {"field": "occurrence", "value": "1-2"})
    assert refused.status_code == 422


@pytest.mark.parametrize("value", ["²-5", "0-²", "١-٥", "1" * 10_000 + "-" + "2" * 10_000, "12345678901-12345678902"])
def test_a_pick_in_other_digits_or_too_long_is_refused_naming_the_field(split, researcher, value):
    """Superscripts and other scripts' digits pass `str.isdigit()` and then break `int()`; 10,000 digits break it
    too: the API and the review page answer 422 naming the field, never 500."""
    built, span = split
    client = Client()
    client.force_login(researcher)
    bad = _put(client, built, span.pk, {"occurrence": value})
    assert bad.status_code == 422, bad.content[:300]
    assert bad.json()["field"] == "occurrence" and len(bad.json()["detail"]) < 300
    page = client.post(f"/campaigns/{built.campaign.pk}/adjudicate/{span.pk}/",
                       {"field": "occurrence", "value": value}, HTTP_HX_REQUEST="true")
    assert page.status_code == 422, page.content[:300]
    assert not Adjudication.objects.filter(span=span).exclude(occurrence="").exists()
