"""Joining a study by its link: consent and Start, returning participants, the end screen with the code,
and the researcher's participant page."""

from __future__ import annotations

from urllib.parse import urlsplit

from axes.helpers import get_client_ip_address
from axes.models import AccessLog
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_not_required
from django.core import signing
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_ratelimit.decorators import ratelimit

from annotator.models import Campaign
from annotator.rendering import markdown_html
from annotator.selectors.campaigns import queue_for
from annotator.views.common import AppRequest, require_researcher
from studies.models import Participant, StudyLink
from studies.participants import (
    PLATFORM_PARAMS,
    LinkClosed,
    NotFinished,
    ParticipationError,
    completion_redirect,
    is_mturk_preview,
    link_closed_reason,
    link_revoke,
    participant_finish,
    participant_flag_set,
    participant_is_finished,
    participant_join,
    participant_recognise,
    platform_ids,
    session_proof,
)
from studies.pool import link_has_room, newcomer_promise, participant_top_up
from studies.selectors import participant_for, participant_rows

SESSION_KEY = "sj_participant"  # {"user", "participant", "campaign", "deadline"}: the session of a participant
COOKIE_SALT = "spanjudge.join"
COOKIE_DAYS = 30
BACKEND = "django.contrib.auth.backends.ModelBackend"  # a participant has no password to check
CLOSED_STATUS = {"revoked": 410, "expired": 410, "full": 409, "not_open": 409, "proof": 403, "stopped": 410,
                 "signed_in": 409}


def _client_ip(group: str, request: AppRequest) -> str:
    """The address that is rate-limited: the one django-axes sees (AXES_PROXY_COUNT applies to both)."""
    return get_client_ip_address(request) or "unknown"


def _join_rate(group: str, request: AppRequest) -> str:
    return settings.JOIN_RATE_LIMIT


def _cookie_name(link: StudyLink) -> str:
    return f"sj_join_{link.pk}"


def _cookie_participant(request: AppRequest, link: StudyLink) -> int | None:
    try:
        return int(request.get_signed_cookie(_cookie_name(link), salt=COOKIE_SALT, max_age=COOKIE_DAYS * 86400))
    except (KeyError, signing.BadSignature, ValueError):
        return None


def _enter(request: AppRequest, participant: Participant) -> HttpResponse:
    """Sign the participant in (a session of their own) and send them to their queue; remember the browser."""
    login(request, participant.user, backend=BACKEND)
    # django-axes logs every sign-in with the address and browser; a participant's are data the platform did
    # not pass, and nothing is kept about a participant beyond the platform's ids.
    AccessLog.objects.filter(username=participant.user.username).delete()
    request.session[SESSION_KEY] = {
        "user": participant.user_id, "participant": participant.pk, "campaign": participant.link.campaign_id,
        "deadline": participant.deadline.isoformat() if participant.deadline else None,
    }
    response = redirect("campaign_entry", pk=participant.link.campaign_id)
    response.set_signed_cookie(_cookie_name(participant.link), str(participant.pk), salt=COOKIE_SALT,
                               max_age=COOKIE_DAYS * 86400, httponly=True, samesite="Lax",
                               secure=settings.SESSION_COOKIE_SECURE)
    return response


def _closed(request: AppRequest, link: StudyLink, reason: str, *, status: int | None = None,
            **context: object) -> HttpResponse:
    return render(request, "studies/join_closed.html", {"campaign": link.campaign, "reason": reason, **context},
                  status=status or CLOSED_STATUS[reason])


def _bad_request(request: AppRequest, link: StudyLink, message: str) -> HttpResponse:
    return render(request, "studies/join_closed.html", {"campaign": link.campaign, "reason": "bad",
                                                          "message": message}, status=400)


@login_not_required
@ratelimit(key=_client_ip, rate=_join_rate, method="POST", group="join", block=False)
@require_http_methods(["GET", "POST"])
def join(request: AppRequest, token: str) -> HttpResponse:
    """The study link. GET only shows a page (consent and Start, or Continue for someone recognised) and writes
    nothing; joining and coming back are POSTs with the CSRF token. Coming back needs proof: this browser's
    signed cookie, or the platform's session secret beside the platform id. Starting is rate-limited per
    address."""
    link = StudyLink.objects.select_related("campaign").filter(token=token).first()
    if link is None:
        raise Http404("No such study link.")
    try:
        ids = platform_ids(request.POST if request.method == "POST" else request.GET)
    except ParticipationError as exc:
        return _bad_request(request, link, str(exc))
    if participant_in(request, link.campaign_id) is not None:
        return redirect("campaign_entry", pk=link.campaign_id)  # already signed in as this link's participant
    if request.user.is_authenticated and SESSION_KEY not in request.session:
        # A registered account is never signed out by a link someone sent; a participant of another study is
        # an account without a password and may become this study's participant.
        return _closed(request, link, "signed_in", status=200 if request.method == "GET" else None,
                       url=request.build_absolute_uri())
    returning = participant_recognise(link=link, ids=ids, known_pk=_cookie_participant(request, link))
    if returning is not None:
        if not returning.proven:
            return _closed(request, link, "proof")
        if link.resumes_stopped:
            return _closed(request, link, "stopped")
        if request.method == "POST":
            return _enter(request, returning.participant)
        return _page(request, link, ids, returning=True)
    if request.method == "GET":
        return _page(request, link, ids, returning=False)
    if getattr(request, "limited", False):
        return _closed(request, link, "limited", status=429)
    try:
        participant, created = participant_join(link=link, ids=ids)
    except LinkClosed as exc:
        return _closed(request, link, exc.reason)
    except ParticipationError as exc:
        return _bad_request(request, link, str(exc))
    if not created and not session_proof(participant, ids):
        return _closed(request, link, "proof")  # the same id joined a moment ago, from elsewhere
    return _enter(request, participant)


def _page(request: AppRequest, link: StudyLink, ids: dict[str, str], *, returning: bool) -> HttpResponse:
    """The link's page (read only): Continue for a proven returning participant, else consent and Start."""
    if not returning:
        reason = link_closed_reason(link, timezone.now())
        if reason is None and link.campaign.status != Campaign.Status.OPEN:
            reason = "not_open" if link.campaign.status == Campaign.Status.DRAFT else "revoked"
        if reason is None and not link_has_room(link=link):
            reason = "full"
        if reason:
            return _closed(request, link, reason)
    hidden = [(param, ids[field]) for param, field in PLATFORM_PARAMS.items() if field in ids]
    return render(request, "studies/join.html", {
        "link": link, "campaign": link.campaign, "hidden": hidden, "preview": is_mturk_preview(ids),
        "returning": returning,
        # Researchers write the consent text; nh3 strips anything active, so the HTML may be trusted.
        "consent_html": mark_safe(markdown_html(link.consent)), "time_limit": link.time_limit_minutes,
        "promise": newcomer_promise(link=link),
    })


def participant_in(request: AppRequest, campaign_pk: int) -> Participant | None:
    """The signed-in participant of this campaign, or None for everyone else (registered users)."""
    data = request.session.get(SESSION_KEY)
    if not data or data.get("campaign") != campaign_pk or data.get("user") != request.user.pk:
        return None
    return Participant.objects.select_related("link", "user").filter(pk=data["participant"]).first()


def participant_queue(request: AppRequest, participant: Participant) -> HttpResponse:
    """A participant's queue: topped up from the pool first; once everything is done, the end screen."""
    participant_top_up(participant=participant)
    campaign = participant.link.campaign
    if participant_is_finished(participant):
        return redirect("participant_end", pk=campaign.pk)
    rows, summary = queue_for(campaign, request.user)
    if not rows:
        return _closed(request, participant.link, "full")
    return render(request, "studies/queue.html", {"campaign": campaign, "rows": rows, "summary": summary,
                                                    "participant": participant})


@require_GET
def participant_end(request: AppRequest, pk: int) -> HttpResponse:
    """The end screen: the code (pass or fail) and the way back to the platform; never before the items are
    done (then the queue instead)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    participant = participant_in(request, campaign.pk)
    if participant is None:
        raise Http404("Only participants who joined by the study link have an end screen.")
    try:
        participant = participant_finish(participant=participant)
    except NotFinished:
        return redirect("campaign_entry", pk=campaign.pk)
    target = completion_redirect(participant.link, participant.code_given)
    return render(request, "studies/join_end.html", {
        "campaign": campaign, "participant": participant, "redirect_url": target,
        "redirect_host": urlsplit(target).hostname if target else None,
        "ended": participant.ended_at is not None,
        "timed_out": participant.deadline is not None and participant.finished_at >= participant.deadline,
        "judged": queue_for(campaign, participant.user)[1],
    })


@require_http_methods(["GET", "POST"])
def campaign_participants(request: AppRequest, pk: int) -> HttpResponse:
    """The researcher's page of a link: its address, revoking it, everyone who joined, flags, the CSV."""
    require_researcher(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    link = StudyLink.objects.filter(campaign=campaign).first()
    if link is None:
        raise Http404("This campaign has no participant link.")
    return render(request, "studies/participants.html", {
        "campaign": campaign, "link": link, "rows": participant_rows(link),
        "url": request.build_absolute_uri(reverse("join", args=[link.token])),
        "closed": link_closed_reason(link, timezone.now()),
    })


@require_POST
def campaign_link_revoke(request: AppRequest, pk: int) -> HttpResponse:
    require_researcher(request)
    link = get_object_or_404(StudyLink, campaign_id=pk)
    stop, end = request.POST.get("stop_resumes") == "true", request.POST.get("end_sessions") == "true"
    link_revoke(link=link, stop_resumes=stop, end_sessions=end)
    messages.success(request, "The link is revoked: nobody new can join" +
                     (", nobody who joined can come back through it" if stop else "") +
                     (", and everyone still at work is sent to the end page with their code" if end else "") + ".")
    return redirect("campaign_participants", pk=pk)


@require_POST
def participant_flag(request: AppRequest, pk: int, participant_pk: int) -> HttpResponse:
    """A researcher flags (or unflags) a participant: flagged, they get the fail code."""
    require_researcher(request)
    link = get_object_or_404(StudyLink, campaign_id=pk)
    participant = participant_for(link, participant_pk)
    if participant is None:
        raise Http404("No such participant.")
    try:
        participant_flag_set(participant=participant, flagged=request.POST.get("flagged") == "true",
                             note=request.POST.get("note", ""))
    except ParticipationError as exc:
        messages.error(request, str(exc))
    return redirect("campaign_participants", pk=pk)
