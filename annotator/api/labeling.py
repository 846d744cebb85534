"""API of a dataset's labeling campaign: the one campaign whose judges and reviewers give an export's consensus."""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Router, Schema

from accounts.access import require_researcher
from annotator.models import Campaign
from annotator.services.campaigns import campaign_set_labeling
from corpus.models import Dataset

router = Router(tags=["datasets"])


class LabelingIn(Schema):
    campaign_id: int | None  # null: the dataset has no labeling campaign


class LabelingOut(Schema):
    dataset_id: int
    campaign_id: int | None
    campaign: str | None


def _out(dataset: Dataset, campaign: Campaign | None) -> LabelingOut:
    return LabelingOut(dataset_id=dataset.pk, campaign_id=campaign.pk if campaign else None,
                       campaign=campaign.name if campaign else None)


@router.get("/datasets/{dataset_id}/labeling-campaign", response=LabelingOut,
            operation_id="retrieve_labeling_campaign")
def retrieve_labeling_campaign(request: HttpRequest, dataset_id: int):
    """Which campaign gives the dataset export's consensus when the export names none (null: none)."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return _out(dataset, Campaign.objects.filter(dataset=dataset, is_labeling=True).first())


@router.put("/datasets/{dataset_id}/labeling-campaign", response=LabelingOut, operation_id="update_labeling_campaign")
def update_labeling_campaign(request: HttpRequest, dataset_id: int, payload: LabelingIn):
    """Mark one campaign of the dataset as its labeling campaign (researchers and admins); null clears it."""
    require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    campaign = None
    if payload.campaign_id is not None:
        campaign = get_object_or_404(Campaign, pk=payload.campaign_id, dataset=dataset)
    return _out(dataset, campaign_set_labeling(dataset=dataset, campaign=campaign))
