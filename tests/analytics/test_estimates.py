"""A sampled campaign: the drawn sample is what experts judge, and the analytics estimate every span from it."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.access import AccessError
from analytics.selectors.estimates import sample_estimates
from annotator.models import Assignment, Campaign, SampledSpan
from annotator.selectors.spans import judged_span_for_assignment, judged_spans
from annotator.services.sampling import SampleSpec
from corpus.models import ErrorSpan
from errors import UserError
from stats.sampling import SamplingError
from studies.setup import CampaignSpec, campaign_create
from tests import factories as make

pytestmark = pytest.mark.django_db

OUTPUT = " ".join(f"word{i}" for i in range(10))


@pytest.fixture
def population(db):
    """20 outputs; run alpha marks 2 'Incorrect' and 1 'Omission' error on each, run beta 1 'Incorrect'."""
    data = make.dataset("Sampled data")
    alpha, beta = make.run(data, "alpha-run"), make.run(data, "beta-run")
    for n in range(20):
        item = make.item(data, f"o{n}", OUTPUT)
        a = make.annotation(item, alpha)
        make.span(a, 1, 0, 5, text="word0", category="Incorrect", explanation="e")
        make.span(a, 2, 6, 11, text="word1", category="Incorrect", explanation="e")
        make.span(a, 3, 12, 17, text="word2", category="Omission", explanation="e")
        make.span(make.annotation(item, beta), 1, 18, 23, text="word3", category="Incorrect", explanation="e")
    return data, alpha, beta


def _sampled(population, annotator, **spec):
    data, alpha, beta = population
    return campaign_create(CampaignSpec(name="Sampled", dataset=data, runs=[alpha, beta], annotators=[annotator],
                           aspects=["accuracy"], sample=SampleSpec(**spec)))


def test_sampled_campaign_judges_only_the_drawn_spans(population, annotator_user):
    campaign = _sampled(population, annotator_user, strata="evaluator+category", per_stratum=6, seed=4)
    _, alpha, beta = population
    drawn = SampledSpan.objects.filter(design__campaign=campaign)
    counts = {(r, h): drawn.filter(run_id=r, stratum=h).count() for r, h in
              [(alpha.pk, "Incorrect"), (alpha.pk, "Omission"), (beta.pk, "Incorrect")]}
    assert counts == {(alpha.pk, "Incorrect"): 6, (alpha.pk, "Omission"): 6, (beta.pk, "Incorrect"): 6}
    assert campaign.sample_design.population == {str(alpha.pk): {"Incorrect": 40, "Omission": 20},
                                                 str(beta.pk): {"Incorrect": 20}}
    drawn_ids = set(drawn.values_list("span_id", flat=True))
    shown: set[int] = set()
    assignments = list(Assignment.objects.filter(campaign=campaign).select_related("campaign"))
    for a in assignments:
        shown |= {s.pk for s, _ in judged_spans(a)}
    assert shown == drawn_ids
    # Only outputs holding a drawn span are assigned, and an undrawn span cannot be judged.
    assert {a.item_id for a in assignments} == set(drawn.values_list("span__annotation__item_id", flat=True))
    assigned = {a.item_id: a for a in assignments}
    undrawn = ErrorSpan.objects.filter(annotation__item_id__in=list(assigned)).exclude(pk__in=drawn_ids).first()
    assert undrawn is not None  # 18 of 80 spans drawn: assigned outputs hold undrawn spans too
    with pytest.raises(AccessError):
        judged_span_for_assignment(assigned[undrawn.annotation.item_id], undrawn.pk)
    drawn_span = drawn.select_related("span__annotation").first().span
    assert judged_span_for_assignment(assigned[drawn_span.annotation.item_id], drawn_span.pk)[0].pk == drawn_span.pk


def test_sample_draw_is_seeded_and_refuses_bad_specs(population, annotator_user, make_user):
    first = _sampled(population, annotator_user, total=9, seed=11)
    drawn = sorted(SampledSpan.objects.filter(design__campaign=first).values_list("span_id", flat=True))
    assert len(drawn) == 18  # 9 per evaluator
    data, alpha, beta = population
    again = campaign_create(CampaignSpec(name="Again", dataset=data, runs=[alpha, beta], annotators=[annotator_user],
                            sample=SampleSpec(total=9, seed=11)))
    assert sorted(SampledSpan.objects.filter(design__campaign=again).values_list("span_id", flat=True)) == drawn
    with pytest.raises(SamplingError):
        campaign_create(CampaignSpec(name="Bad", dataset=data, runs=[alpha], annotators=[annotator_user],
                        sample=SampleSpec(per_stratum=3, total=3)))
    with pytest.raises(SamplingError):
        campaign_create(CampaignSpec(name="Bad2", dataset=data, runs=[alpha], annotators=[annotator_user],
                        sample=SampleSpec(strata="evaluator+colour", per_stratum=3)))


@pytest.fixture
def judged(population, annotator_user):
    """alpha: every drawn 'Incorrect' span is an error with a correct explanation, 3 of 6 'Omission' spans are
    errors, all with vague explanations; beta: 4 of its 6 drawn spans judged, errors explained incorrectly."""
    campaign = _sampled(population, annotator_user, strata="evaluator+category", per_stratum=6, seed=4)
    _, alpha, beta = population
    work = {a.item_id: a for a in Assignment.objects.filter(campaign=campaign)}
    omissions = beta_done = 0
    for row in SampledSpan.objects.filter(design__campaign=campaign).select_related("span__annotation").order_by("pk"):
        a = work[row.span.annotation.item_id]
        if row.run_id == alpha.pk and row.stratum == "Incorrect":
            make.judgment(row.span, a, "error", "correct")
        elif row.run_id == alpha.pk:
            make.judgment(row.span, a, "error" if omissions < 3 else "not_error", "vague")
            omissions += 1
        elif beta_done < 4:
            make.judgment(row.span, a, "error", "incorrect")
            beta_done += 1
    return campaign, alpha, beta


def test_sample_estimates_weight_strata_and_sit_beside_plain_figures(judged):
    campaign, alpha, beta = judged
    rows = {r.run_id: r for r in sample_estimates(campaign, half_width=0.05)}
    a = rows[alpha.pk]
    assert (a.spans, a.sampled) == (60, 12)
    assert a.span_ok.plain == pytest.approx(9 / 12)
    assert a.span_ok.estimate.point == pytest.approx(40 / 60 * 1 + 20 / 60 * 0.5)
    assert a.exp_correct.plain == pytest.approx(6 / 12)
    assert a.exp_correct.estimate.point == pytest.approx(40 / 60)
    assert a.span_ok.estimate.method == "bootstrap"  # 6 judged per stratum: small cells
    assert a.span_ok.estimate.low <= a.span_ok.estimate.point <= a.span_ok.estimate.high
    assert a.span_ok.plan.more > 0
    b = rows[beta.pk]
    assert (b.span_ok.estimate.judged, b.span_ok.estimate.point, b.exp_correct.estimate.point) == (4, 1.0, 0.0)


def test_estimates_api_dashboard_and_refusals(judged, researcher, population):
    campaign, alpha, _ = judged
    client = Client()
    client.force_login(researcher)
    rows = client.get(f"/api/analytics/campaigns/{campaign.pk}/estimates?half_width=0.1").json()
    alpha_row = next(r for r in rows if r["run_id"] == alpha.pk)
    assert alpha_row["span_ok"]["estimate"] == pytest.approx(5 / 6)
    assert alpha_row["span_ok"]["plain"] == pytest.approx(0.75)
    assert alpha_row["span_ok"]["estimator"] == "ht"
    assert {s["name"]: s["spans"] for s in alpha_row["span_ok"]["strata"]} == {"Incorrect": 40, "Omission": 20}
    wide = alpha_row["span_ok"]["needed"]
    narrow = client.get(f"/api/analytics/campaigns/{campaign.pk}/estimates?half_width=0.03").json()
    assert next(r for r in narrow if r["run_id"] == alpha.pk)["span_ok"]["needed"] > wide
    assert client.get(f"/api/analytics/campaigns/{campaign.pk}/estimates?half_width=2").status_code == 422
    page = client.get(f"/analytics/campaigns/{campaign.pk}/").content.decode()
    assert "Estimates for all spans (designed sample)" in page and "83.3" in page and "75.0" in page
    assert "these describe the sample only" in page  # Table 4 says which figures it shows
    # the page and the API refuse a half-width the same way (422 naming it), tiny ones included: (z/d)^2
    # overflowed a float at d = 1e-200 and gave NaN at d = 5e-324
    assert client.get(f"/analytics/campaigns/{campaign.pk}/?half_width=abc").status_code == 422
    for tiny in ("1e-200", "5e-324", "0.0009", "nan", "-0.1"):
        api = client.get(f"/api/analytics/campaigns/{campaign.pk}/estimates?half_width={tiny}")
        assert api.status_code == 422 and "half_width" in api.json()["detail"], tiny
        shown = client.get(f"/analytics/campaigns/{campaign.pk}/?half_width={tiny}")
        assert shown.status_code == 422 and b"half_width" in shown.content, tiny
    assert client.get(f"/analytics/campaigns/{campaign.pk}/?half_width=0.001").status_code == 200
    data, alpha_run, beta_run = population
    full = campaign_create(CampaignSpec(name="Everything", dataset=data, runs=[alpha_run],
                           annotators=[make.user("everyone", role="annotator")]))
    assert client.get(f"/api/analytics/campaigns/{full.pk}/estimates").status_code == 409


def test_campaign_form_creates_a_sampled_campaign_with_reviewers(population, researcher, make_user, client):
    data, alpha, beta = population
    ann = make_user("sampler")
    reviewer = make_user("reviewer1", role="researcher")
    client.force_login(researcher)
    form = {"name": "Form sample", "dataset": data.pk, "runs": [str(alpha.pk), str(beta.pk)],
            "aspects": ["accuracy"], "annotators": [ann.pk], "annotators_per_item": 1, "seed": 2,
            "guidelines": "x", "reviewers": [reviewer.pk], "sample_strata": "evaluator", "sample_total": 5}
    response = client.post("/campaigns/new/", form)
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="Form sample")
    assert campaign.is_sampled and list(campaign.reviewers.all()) == [reviewer]
    assert SampledSpan.objects.filter(design__campaign=campaign).count() == 10
    assert campaign.sample_design.seed == 2
    page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert "Reviewers: reviewer1." in page and "5 spans per evaluator" in page and "10 spans drawn" in page
    both = client.post("/campaigns/new/", form | {"name": "Both sizes", "sample_per_stratum": 3})
    assert both.status_code == 200 and "either a size per stratum or a total" in both.content.decode()
    assert not Campaign.objects.filter(name="Both sizes").exists()


def test_a_judge_cannot_review_the_same_campaign(population, researcher):
    data, alpha, _ = population
    # roles keep judges and reviewers apart: a researcher is refused as a judge before anything else
    with pytest.raises(UserError, match="rita cannot judge"):
        campaign_create(CampaignSpec(name="Self review", dataset=data, runs=[alpha], annotators=[researcher],
                        reviewers=[researcher]))
