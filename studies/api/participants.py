"""Participant links in the API: the link of a campaign, revoking it, the participant list and flags."""

from __future__ import annotations

from datetime import datetime
from typing import get_type_hints

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Query, Router, Schema
from ninja.errors import HttpError
from pydantic import create_model

from accounts.access import require_researcher
from annotator.models import Campaign
from corpus.spreadsheet import download_filename
from errors import UserError
from studies.models import StudyLink
from studies.participants import LinkSettings, link_revoke, participant_flag_set
from studies.selectors import ParticipantRow, participant_for, participant_rows, participants_csv

router = Router(tags=["participants"])

STUDY_FIELDS = ("consent", "items_per_participant", "time_limit_minutes", "pass_code", "fail_code", "completion_url")


class LinkOut(Schema):
    url: str
    enabled: bool
    cap: int | None
    joined: int
    expires: datetime | None
    resumes_stopped: bool
    sessions_ended: bool


# The API row is the selector's row (the CSV and the page read the same), written once there.
ParticipantOut = create_model(
    "ParticipantOut", __base__=Schema, **{name: (kind, ...) for name, kind in get_type_hints(ParticipantRow).items()}
)


class FlagIn(Schema):
    flagged: bool = True
    note: str = ""


def link_settings_from(payload) -> LinkSettings | None:
    """The link settings of a campaign body (annotator.schemas.CampaignIn); None without `link`."""
    if payload.link is None:
        given = [f for f in STUDY_FIELDS if getattr(payload, f) not in (None, "")]
        if given:
            raise UserError(f"{given[0]}: only with a participant link (give \"link\": {{\"enabled\": true}})",
                            field=given[0])
        return None
    if payload.items_per_participant is None:
        raise UserError("items_per_participant: required with a participant link", field="items_per_participant")
    return LinkSettings(
        enabled=payload.link.enabled, cap=payload.link.cap, expires=payload.link.expires, consent=payload.consent,
        items_per_participant=payload.items_per_participant, release_after_minutes=payload.release_after_minutes,
        time_limit_minutes=payload.time_limit_minutes, pass_code=payload.pass_code, fail_code=payload.fail_code,
        completion_url=payload.completion_url,
    )


def _link(request: HttpRequest, campaign_id: int) -> StudyLink:
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    link = StudyLink.objects.filter(campaign=campaign).first()
    if link is None:
        raise HttpError(404, "this campaign has no participant link")
    return link


def link_out(request: HttpRequest, link: StudyLink) -> LinkOut:
    return LinkOut(url=request.build_absolute_uri(reverse("join", args=[link.token])), enabled=link.enabled,
                   cap=link.cap, joined=link.participants.count(), expires=link.expires,
                   resumes_stopped=link.resumes_stopped, sessions_ended=link.sessions_ended_at is not None)


@router.get("/campaigns/{campaign_id}/link", response=LinkOut, operation_id="retrieve_campaign_link")
def retrieve_campaign_link(request: HttpRequest, campaign_id: int):
    """The participant link to hand out (researchers and admins); 404 when the campaign has none."""
    return link_out(request, _link(request, campaign_id))


@router.post("/campaigns/{campaign_id}/link/revoke", response=LinkOut, operation_id="revoke_campaign_link")
def revoke_campaign_link(
    request: HttpRequest, campaign_id: int,
    stop_resumes: bool = Query(False, description="Also stop those who joined from coming back through the link."),
    end_sessions: bool = Query(False, description="Also end every open participant session: at its next request "
                                                  "it shows the end page with the code the work so far earns."),
):
    """Stop new joins for good: the link answers 410; participants who joined may still finish, unless
    `stop_resumes` (nobody comes back through the link either) or `end_sessions` (everyone still at work is sent
    to the end page, which says the researchers closed the study, and is marked `ended`)."""
    return link_out(request, link_revoke(link=_link(request, campaign_id), stop_resumes=stop_resumes,
                                         end_sessions=end_sessions))


@router.get("/campaigns/{campaign_id}/participants", response=list[ParticipantOut],
            operation_id="list_participants")
def list_participants(request: HttpRequest, campaign_id: int, format: str = "json"):
    """Everyone who joined by the link, for payment: `format=json` (a list) or `format=csv` (flags '; ')."""
    link = _link(request, campaign_id)
    if format not in ("json", "csv"):
        raise UserError("format: json or csv", field="format")
    rows = participant_rows(link)
    if format == "csv":
        name = download_filename(f"{link.campaign.name}-participants", fallback="participants")
        response = HttpResponse("".join(participants_csv(rows)), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
        return response
    return rows


@router.post("/campaigns/{campaign_id}/participants/{participant_id}/flag", response=ParticipantOut,
             operation_id="flag_participant")
def flag_participant(request: HttpRequest, campaign_id: int, participant_id: int, payload: FlagIn):
    """Flag (or unflag) a participant: flagged, they get the fail code unless a code was given already."""
    link = _link(request, campaign_id)
    participant = participant_for(link, participant_id)
    if participant is None:
        raise HttpError(404, "no such participant in this campaign")
    participant_flag_set(participant=participant, flagged=payload.flagged, note=payload.note)
    return next(r for r in participant_rows(link) if r["id"] == participant.pk)
