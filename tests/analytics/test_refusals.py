"""Bad analytics parameters are refused with a 422 naming them (the API) or fall back to defaults (the page)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def rita_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.mark.parametrize("seed", ["-1", "4294967296", "1e20", "x"])
def test_bad_seed_on_the_analytics_api_is_422(rita_client, study, seed):
    for path in (f"/api/analytics/campaigns/{study.campaign.pk}",
                 f"/api/analytics/datasets/{study.dataset.pk}",
                 f"/api/analytics/campaigns/{study.campaign.pk}/tables/accuracy"):
        response = rita_client.get(f"{path}?seed={seed}&resamples=10")
        assert response.status_code == 422, (path, response.content)
        assert "seed" in response.content.decode()


def test_good_seed_on_the_analytics_api_answers(rita_client, study):
    response = rita_client.get(f"/api/analytics/campaigns/{study.campaign.pk}?seed=7&resamples=10")
    assert response.status_code == 200 and response.json()["seed"] == 7


def test_negative_seed_on_the_dashboard_page_is_not_a_500(rita_client, study):
    response = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/?seed=-1&resamples=10")
    assert response.status_code == 200
    response = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/tables/accuracy.csv?seed=-1&resamples=10")
    assert response.status_code == 200


@pytest.mark.parametrize("query", ["aspect=%00", "system=a%00b", "reference=%00", "a%00=1"])
def test_nul_in_a_query_parameter_is_400_naming_it(rita_client, study, query):
    for path in (f"/analytics/campaigns/{study.campaign.pk}/", f"/api/analytics/campaigns/{study.campaign.pk}",
                 f"/api/datasets/{study.dataset.pk}/items"):
        response = rita_client.get(f"{path}?{query}")
        assert response.status_code == 400, (path, response.status_code)
        body = response.content.decode()
        assert "NUL" in body and query.split("=")[0].replace("%00", "") in body
