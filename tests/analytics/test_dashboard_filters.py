"""Dashboard filters say each system once; without gold spans the default reference is not a table of zeros."""

from __future__ import annotations

import pytest

from analytics.selectors import Scope, dashboard_data
from analytics.tables import overlap_table
from corpus.models import Annotation, AnnotationKind, Source, SourceKind
from tests.factories import build_campaign, item

pytestmark = pytest.mark.django_db


def test_system_filter_lists_each_system_once(client, researcher, make_user):
    built = build_campaign([make_user("sys1")], name="systems")
    item(built.dataset, "i9", "Another output.", position=9, system="sys-b")  # a second item of system sys-b
    client.force_login(researcher)
    response = client.get(f"/analytics/datasets/{built.dataset.pk}/")
    assert response.context["systems"] == ["sys-b", "sys-visible-only-to-staff"]


def test_without_gold_spans_the_campaign_compares_with_its_humans_and_says_why(make_user):
    built = build_campaign([make_user("ref1")], name="no gold")
    # A gold annotation without a single span (an import of items without spans) is no reference.
    source = Source.objects.create(label="gold", kind=SourceKind.IMPORT)
    Annotation.objects.create(item=built.items[0], source=source, kind=AnnotationKind.GOLD, aspect="")
    data = dashboard_data(Scope(campaign_id=built.campaign.pk, dataset_id=built.dataset.pk), n_resamples=10)
    assert [value for value, _ in data.references] == ["human", "human-added"]
    assert data.reference_value == "human"
    assert "no gold spans" in overlap_table(data).note
