"""Fresh analytics: finishing an item (or any write an expert makes) changes the cached dashboard at once, and
the page says when its numbers were computed."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from analytics.selectors import Scope, dashboard_data
from analytics.selectors.cache import cached_dashboard_data
from annotator.models import Assignment
from annotator.services.judgments import judgment_set
from tests.factories import build_campaign

pytestmark = pytest.mark.django_db

PARAMS = {"reference": "", "n_resamples": 20, "seed": 0}


def _judge_all(assignment: Assignment, user) -> None:
    from annotator.selectors.spans import error_rows

    for row in error_rows(assignment):
        judgment_set(assignment=assignment, span=row.span, user=user,
                     changes={"span_verdict": "error", "explanation_verdict": "correct"})


def test_finishing_an_item_refreshes_the_cached_overlap_and_the_page_says_when(client, make_user, researcher):
    cache.clear()
    expert = make_user("fresh-expert")
    built = build_campaign([expert], per_item=1, name="fresh campaign")
    scope = Scope(campaign_id=built.campaign.pk)
    assignment = Assignment.objects.get(annotator=expert, item=built.items[0])
    _judge_all(assignment, expert)
    before = cached_dashboard_data(scope, **PARAMS)
    assert cached_dashboard_data(scope, **PARAMS).computed_at == before.computed_at  # a cache hit

    client.force_login(expert)
    finish = client.post(reverse("assignment_finish", args=[assignment.pk]))
    assert finish.status_code == 302

    after = cached_dashboard_data(scope, **PARAMS)
    fresh = dashboard_data(scope, **PARAMS)
    assert after.computed_at > before.computed_at
    assert after.overlap == fresh.overlap
    assert after.overlap != before.overlap  # the finished item now counts in the human reference

    client.force_login(researcher)
    html = client.get(f"/analytics/campaigns/{built.campaign.pk}/?resamples=20").content.decode()
    assert 'id="computed-at"' in html and "Numbers computed" in html


def test_an_edit_of_an_added_error_refreshes_the_cache(make_user):
    from annotator.services.added_spans import added_span_create, added_span_update

    cache.clear()
    expert = make_user("fresh-editor")
    built = build_campaign([expert], per_item=1, name="fresh edits")
    scope = Scope(campaign_id=built.campaign.pk)
    assignment = Assignment.objects.get(annotator=expert, item=built.items[0])
    added = added_span_create(assignment=assignment, user=expert, start=0, end=3, aspect=None, category="",
                              severity=2, note="")
    before = cached_dashboard_data(scope, **PARAMS)
    added_span_update(span=added, assignment=assignment, user=expert, start=0, end=3, category="", severity=5,
                      note="")
    assert cached_dashboard_data(scope, **PARAMS).computed_at > before.computed_at
