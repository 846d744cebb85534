"""Keeps a participant (someone who joined by a study link) inside their study: their queue and items, the
guidelines and the end screen; nothing else of the site answers them. Sends them to the end screen once their
time is up or the researchers ended the study. Also notes that they are still there, which is how abandoned work
is told from slow work."""

from __future__ import annotations

from datetime import datetime

from django.http import Http404, HttpResponseRedirect
from django.urls import Resolver404, resolve, reverse
from django.utils import timezone
from django_htmx.http import HttpResponseClientRedirect

from annotator.views.marks import own_work_of
from studies.participants import participant_touch
from studies.selectors import participant_ended
from studies.views.join import SESSION_KEY

# The pages of a participant's own study. Their work pages are the views marked as an annotator's action on
# their own work (annotator.views.marks), each of which checks that the object is theirs.
END_PAGE = "participant_end"
STUDY_PAGES = frozenset({"campaign_entry", "campaign_resume", "campaign_guidelines", END_PAGE})
OPEN_PAGES = frozenset({"join", "logout"})
TOUCH_EVERY_SECONDS = 60
SEEN_KEY = "sj_participant_seen"


def _to_end(request, data: dict):
    target = reverse(END_PAGE, args=[data["campaign"]])
    return HttpResponseClientRedirect(target) if request.headers.get("HX-Request") else HttpResponseRedirect(target)


class ParticipantScopeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        data = request.session.get(SESSION_KEY)
        if not data or not request.user.is_authenticated or request.user.pk != data.get("user"):
            return self.get_response(request)
        try:
            match = resolve(request.path_info)
        except Resolver404:
            raise Http404("Not part of this study.") from None
        name = match.url_name if not match.namespace else None
        if name in STUDY_PAGES and match.kwargs.get("pk") != data.get("campaign"):
            raise Http404("Not part of this study.")
        work = own_work_of(match.func) is not None  # the allow-list is the marks: a new action cannot be missed
        if not work and name not in STUDY_PAGES | OPEN_PAGES:
            raise Http404("Not part of this study.")
        now = timezone.now()
        deadline = data.get("deadline")
        if work and deadline and now >= datetime.fromisoformat(deadline):
            return _to_end(request, data)
        if name not in OPEN_PAGES and name != END_PAGE and participant_ended(data["participant"]):
            return _to_end(request, data)  # the researchers ended the study: this request is the session's last
        if now.timestamp() - request.session.get(SEEN_KEY, 0) >= TOUCH_EVERY_SECONDS:
            participant_touch(participant_pk=data["participant"], now=now)
            request.session[SEEN_KEY] = now.timestamp()
        return self.get_response(request)
