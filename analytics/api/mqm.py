"""MQM system scores of a dataset over HTTP: the JSON `manage.py mqm_scores` prints."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema

from accounts.access import require_researcher
from analytics.api.systems import SystemScoreOut
from analytics.selectors.mqm import dataset_scores
from corpus.models import Dataset

router = Router(tags=["analytics"])


class MqmScoresOut(Schema):
    systems: list[SystemScoreOut]


@router.get("/datasets/{dataset_id}/mqm", response=MqmScoresOut, operation_id="retrieve_dataset_mqm_scores")
def retrieve_dataset_mqm_scores(request: HttpRequest, dataset_id: int, source: str = "mqm"):
    """Each system's MQM score (lower is better) over the ratings of the sources labelled SOURCE:*, with a 95%
    bootstrap interval over segments (1,000 resamples, seed 0) and its rank range; default weights."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return dataset_scores(dataset, prefix=source)
