"""Saving a verdict costs the same queries whatever the span is: a machine span on a real output, a decoy, or a
machine span copied onto a planted output. A different count is a timing a patient annotator could notice."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotator.models import Assignment
from annotator.selectors.spans import item_errors
from quality.models import CheckSpan, PlantedOutput
from quality.services import CheckSettings
from tests.quality.conftest import build_study

pytestmark = pytest.mark.django_db


def _save_queries(client: Client, assignment: Assignment, handle: int, value: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        answer = client.post(f"/work/{assignment.pk}/errors/{handle}/", {"field": "span_verdict", "value": value},
                             HTTP_HX_REQUEST="true")
    assert answer.status_code == 200, answer.content
    return len(queries)


def test_a_verdict_on_a_planted_copy_or_a_decoy_costs_the_queries_of_a_real_one(judges):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.3, planted=0.4))
    judge = judges[0]
    planted_items = set(PlantedOutput.objects.filter(annotator=judge).values_list("item_id", flat=True))
    kinds: dict[str, tuple[Assignment, int]] = {}
    for assignment in Assignment.objects.filter(annotator=judge, campaign=study.campaign).select_related(
            "campaign", "item"):
        rows, _ = item_errors(assignment)
        for row in rows:
            role = CheckSpan.objects.filter(span=row.span).values_list("role", flat=True).first()
            kind = "planted copy" if assignment.item_id in planted_items else (role or "real")
            # one assignment per kind: an assignment's first verdict also marks it started, whatever the span
            if kind not in kinds and assignment.pk not in {a.pk for a, _ in kinds.values()}:
                kinds[kind] = (assignment, row.handle)
    assert {"real", "planted copy", CheckSpan.Role.DECOY} <= set(kinds), kinds
    client = Client()
    client.force_login(judge)
    counts = {}
    for kind, (assignment, handle) in kinds.items():
        assert client.get(f"/work/{assignment.pk}/").status_code == 200  # as an annotator does before judging
        counts[kind] = (_save_queries(client, assignment, handle, "error"),  # the first creates the judgment
                        _save_queries(client, assignment, handle, "not_error"),
                        _save_queries(client, assignment, handle, "error"))
    assert len(set(counts.values())) == 1, counts
