"""Dashboard pages, CSV/JSON downloads, plots and the analytics API: access, content, escaping."""

from __future__ import annotations

import csv
import io
import json

import pytest

from analytics import plots, tables
from analytics.selectors import Scope, dashboard_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def rita_client(client, researcher):
    client.force_login(researcher)
    return client


def test_campaign_dashboard_shows_tables_and_plots(rita_client, study):
    response = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/?resamples=50")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Accuracy per evaluator (Table 4)" in html
    assert "55.6" in html  # R1 Span OK 5/9
    assert html.count('<img src="data:image/svg+xml;base64,') >= 4
    assert f"/analytics/campaigns/{study.campaign.pk}/tables/accuracy.csv" in html


def test_campaign_dashboard_forbids_annotators(client, study):
    client.force_login(study.ann1)
    assert client.get(f"/analytics/campaigns/{study.campaign.pk}/").status_code == 403
    assert client.get(f"/analytics/campaigns/{study.campaign.pk}/tables/accuracy.csv").status_code == 403
    assert client.get(f"/analytics/datasets/{study.dataset.pk}/").status_code == 403
    assert client.get(f"/api/analytics/campaigns/{study.campaign.pk}").status_code == 403


def test_campaign_table_csv_download_has_the_numbers(rita_client, study):
    response = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/tables/accuracy.csv?resamples=0")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = {row["run"]: row for row in csv.DictReader(io.StringIO(response.content.decode()))}
    assert float(rows["ens-run"]["span_ok_pct"]) == pytest.approx(500 / 9)
    assert float(rows["single-run"]["exp_correct_pct"]) == pytest.approx(25.0)
    assert rows["ens-run"]["shown_as"] == "Evaluator A"
    assert int(rows["All evaluators"]["judged"]) == 13


def test_campaign_table_json_download_matrix(rita_client, study):
    response = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/tables/matrix.json?resamples=0")
    table = json.loads(response.content)
    total = next(r for r in table["rows"] if r["run"] == "ens-run" and r["explanation"] == "Total")
    assert (total["error"], total["no_span"], total["not_error"], total["hallucination"], total["total"]) == (
        5, 2, 1, 1, 9,
    )
    assert rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/tables/nope.json").status_code == 404


def test_campaign_plot_download_svg_and_png(rita_client, study):
    svg = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/plots/accuracy.svg?resamples=20")
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
    assert svg.content.lstrip().startswith(b"<?xml")
    png = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/plots/severity.png?resamples=0")
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_dataset_dashboard_and_campaign_filter(rita_client, study):
    response = rita_client.get(f"/analytics/datasets/{study.dataset.pk}/?resamples=0")
    assert response.status_code == 200
    assert "Evaluator scores against the dataset" in response.content.decode()
    other = rita_client.get(f"/analytics/datasets/{study.dataset.pk}/?campaign=999999")
    assert other.status_code == 404


def test_dashboard_escapes_dataset_and_run_text(rita_client, study):
    run = study.runs["ens-run"]
    run.label = "<script>alert(1)</script>"
    run.save(update_fields=["label"])
    html = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/?resamples=0").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_api_campaign_analytics_returns_every_table(rita_client, study):
    response = rita_client.get(f"/api/analytics/campaigns/{study.campaign.pk}?resamples=0")
    assert response.status_code == 200
    body = response.json()
    assert [t["key"] for t in body["tables"]] == list(tables.TABLE_BUILDERS)
    agreement = next(t for t in body["tables"] if t["key"] == "agreement")
    pooled = next(r for r in agreement["rows"] if r["run"] == "All evaluators")
    assert pooled["alpha_span"] == pytest.approx(30 / 41)
    assert body["reference"] == "gold:gold"


def test_api_table_csv_and_human_reference(rita_client, study):
    url = f"/api/analytics/campaigns/{study.campaign.pk}/tables/overlap"
    response = rita_client.get(url, {"format": "csv", "reference": "human", "resamples": 0})
    assert response.status_code == 200
    rows = {row["run"]: row for row in csv.DictReader(io.StringIO(response.content.decode()))}
    # human reference: R1 exact P 2/5, R 2/3 (see test_selectors)
    assert float(rows["ens-run"]["exact_p"]) == pytest.approx(40.0)
    assert float(rows["ens-run"]["exact_r"]) == pytest.approx(200 / 3)
    assert rita_client.get(f"/api/analytics/datasets/{study.dataset.pk}/tables/scores").status_code == 200


def test_plots_are_deterministic(study):
    data = dashboard_data(Scope(campaign_id=study.campaign.pk), n_resamples=30)
    first = plots.render(plots.accuracy_plot(data))
    second = plots.render(plots.accuracy_plot(data))
    assert first == second


def test_dashboard_of_an_empty_campaign_renders(rita_client, study):
    from annotator.models import Campaign

    empty = Campaign.objects.create(name="empty", dataset=study.dataset)
    response = rita_client.get(f"/analytics/campaigns/{empty.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    # Every table of verdicts says why it is empty (the campaign's own counts) instead of showing zeros.
    for key in tables.FROM_JUDGMENTS:
        section = page.split(f'id="table-{key}"', 1)[1].split("</details>", 1)[0]
        assert "0 judged: figures appear with the first verdicts" in section, key
    assert 'id="table-accuracy"' in page and "<td>All evaluators</td>" not in page


def test_cached_dashboard_reused_until_a_verdict_changes(study, django_assert_max_num_queries):
    from analytics.selectors.cache import cached_dashboard_data
    from annotator.models import SpanJudgment

    scope = Scope(campaign_id=study.campaign.pk)
    first = cached_dashboard_data(scope, reference="", n_resamples=20, seed=0)
    with django_assert_max_num_queries(7):  # the fingerprint only (incl. finished items, actions), no recomputation
        again = cached_dashboard_data(scope, reference="", n_resamples=20, seed=0)
    assert again.accuracy.pooled.matrix.total == first.accuracy.pooled.matrix.total
    judgment = SpanJudgment.objects.filter(span_verdict="error").first()
    judgment.span_verdict = "not_error"
    judgment.save()
    changed = cached_dashboard_data(scope, reference="", n_resamples=20, seed=0)
    errors = lambda data: data.accuracy.pooled.matrix.column_total("error")  # noqa: E731
    assert errors(changed) == errors(first) - 1
