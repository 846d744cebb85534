"""The decoy audit: a cross-validated classifier tries to tell decoy cards from real ones; the product reports how
well it does (command, API, decoys page) and will not open a campaign whose decoys give themselves away."""

from __future__ import annotations

import json
import random
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.models import Campaign
from quality.campaign_audit import campaign_audit, campaign_cards
from quality.engine.audit import Card, decoy_audit
from quality.engine.decoys import span_kind
from quality.services import CheckSettings
from tests.quality.conftest import Api, build_study

WORDS = ["the", "team", "scored", "points", "in", "a", "game", "while", "each", "player", "took", "rebounds", "and",
         "assists", "in", "every", "quarter"]


@pytest.fixture(autouse=True)
def fresh_results_cache(settings):
    """Audits are cached across processes; each test starts with an empty in-process cache of its own."""
    settings.CACHES = {**settings.CACHES, "audit-test": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                                         "LOCATION": "audit-test"}}
    settings.RESULTS_CACHE = "audit-test"
    from django.core.cache import caches

    caches["audit-test"].clear()


def _card(rng: random.Random, *, decoy: bool, giveaway: bool) -> Card:
    if decoy and giveaway:
        n = str(rng.randint(1, 99))
        return Card(explanation=f'The figure "{n}" does not match the input.', text=n, label=rng.choice("AB"),
                    severity=2, category="", ambiguous=False, match="exact", position=rng.random(), decoy=True)
    return Card(explanation=" ".join(rng.choices(WORDS, k=12)), text=" ".join(rng.choices(WORDS, k=rng.randint(1, 5))),
                label=rng.choice("AB"), severity=rng.randint(1, 3), category="", ambiguous=False, match="exact",
                position=rng.random(), decoy=decoy)


def test_audit_finds_a_giveaway_and_names_it():
    rng = random.Random(3)
    cards = [_card(rng, decoy=False, giveaway=True) for _ in range(120)]
    cards += [_card(rng, decoy=True, giveaway=True) for _ in range(60)]
    result = decoy_audit(cards, resamples=200)
    assert result.auc is not None and result.auc > 0.95
    assert result.ci_low is not None and result.ci_low > 0.9 and result.ci_high <= 1.0
    assert (result.decoys, result.real, result.folds, result.resamples) == (60, 120, 5, 200)
    assert any("does not match" in name or name == "kind=number" for name, _ in result.features[:5]), result.features
    assert result.level == "block"


def test_audit_of_indistinguishable_cards_is_near_chance():
    rng = random.Random(4)
    cards = [_card(rng, decoy=rng.random() < 0.4, giveaway=False) for _ in range(300)]
    result = decoy_audit(cards, resamples=300)
    assert result.ci_low < 0.5 < result.ci_high, result.as_dict()
    assert result.level == "ok"


def test_too_few_decoys_give_no_audit_and_say_why():
    rng = random.Random(5)
    result = decoy_audit([_card(rng, decoy=i < 3, giveaway=True) for i in range(40)])
    assert result.auc is None and result.level == "none" and "has 3 and 37" in result.reason


@pytest.mark.parametrize(("text", "kind"), [("112", "number"), ("Kyle Lowry", "name"), ("led the team", "phrase"),
                                            ("the home side never trailed in the game", "clause")])
def test_span_kind(text, kind):
    assert span_kind(text) == kind


@pytest.fixture
def decoy_study(judges):
    return build_study(list(judges), name="audit study", checks=CheckSettings(decoys=0.4), n_items=10, opened=False)


def test_campaign_cards_are_every_real_span_and_every_decoy(decoy_study):
    cards = campaign_cards(decoy_study.campaign)
    real = [c for c in cards if not c.decoy]
    assert len(real) == 20  # two machine spans on each of the 10 outputs
    assert sum(c.decoy for c in cards) == decoy_study.campaign.check_spans.filter(role="decoy").count() > 0
    assert {c.label for c in cards} <= {"Evaluator A", "Evaluator B"}


def test_api_command_and_page_report_the_same_audit(researcher, decoy_study, client):
    campaign = decoy_study.campaign
    r = Api(researcher)("get", f"/campaigns/{campaign.pk}/decoys/audit")
    assert r.status_code == 200, r.content
    body = r.json()
    assert set(body) >= {"decoys", "real", "auc", "ci_low", "ci_high", "level", "features"}
    out = StringIO()
    call_command("decoy_audit", "--campaign", str(campaign.pk), "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["auc"] == body["auc"]  # cached per state of the cards: the same result
    client.force_login(researcher)
    panel = client.get(f"/campaigns/{campaign.pk}/decoys/audit/").content.decode()
    assert 'id="decoy-audit"' in panel
    page = client.get(f"/campaigns/{campaign.pk}/decoys/").content.decode()
    assert f"/campaigns/{campaign.pk}/decoys/audit/" in page
    judge = campaign.annotators.first()
    assert Api(judge)("get", f"/campaigns/{campaign.pk}/decoys/audit").status_code == 403


def test_open_is_refused_above_the_block_level_unless_accepted(researcher, decoy_study, monkeypatch, client):
    from quality import campaign_audit as audit_module
    from quality.engine.audit import AuditResult

    campaign = decoy_study.campaign
    monkeypatch.setattr(audit_module, "decoy_audit", lambda cards, **kw: AuditResult(decoys=7, real=20, auc=0.91))
    url = f"/campaigns/{campaign.pk}/open"
    refused = Api(researcher)("post", url)
    assert refused.status_code == 409 and "0.91" in refused.json()["detail"], refused.content
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.DRAFT
    client.force_login(researcher)
    page = client.post(f"/campaigns/{campaign.pk}/open/", {"next": "decoys"}, follow=True).content.decode()
    assert "ROC AUC 0.91" in page
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.DRAFT
    accepted = Api(researcher)("post", url, {"accept_audit": True})
    assert accepted.status_code == 200 and accepted.json()["status"] == "open", accepted.content


def test_open_passes_below_the_block_level(researcher, decoy_study, monkeypatch):
    from quality import campaign_audit as audit_module
    from quality.engine.audit import AuditResult

    monkeypatch.setattr(audit_module, "decoy_audit", lambda cards, **kw: AuditResult(decoys=7, real=20, auc=0.7))
    r = Api(researcher)("post", f"/campaigns/{decoy_study.campaign.pk}/open")
    assert r.status_code == 200 and r.json()["status"] == "open", r.content


def test_audit_is_cached_per_state_of_the_cards(decoy_study, monkeypatch):
    from quality import campaign_audit as audit_module

    calls = []
    real = audit_module.decoy_audit
    monkeypatch.setattr(audit_module, "decoy_audit", lambda cards, **kw: calls.append(1) or real(cards, **kw))
    campaign = decoy_study.campaign
    campaign_audit(campaign)
    campaign_audit(campaign)
    assert len(calls) == 1
    decoy = campaign.check_spans.filter(role="decoy").first().span
    decoy.explanation = "A new wording."
    decoy.save()
    campaign_audit(campaign)
    assert len(calls) == 2


def test_cards_without_explanations_still_audit():
    rng = random.Random(6)
    cards = [Card(**{**_card(rng, decoy=i < 30, giveaway=True).__dict__, "explanation": ""}) for i in range(90)]
    result = decoy_audit(cards, resamples=50)
    assert result.auc is not None and not any(name.startswith("explanation:") for name, _ in result.features)
