"""Keeps a participant (someone who joined by a study link) inside their study: their queue and items, the
guidelines and the end screen; nothing else of the site answers them. Also notes that they are still there,
which is how abandoned work is told from slow work."""

from __future__ import annotations

from datetime import datetime

from django.http import Http404, HttpResponseRedirect
from django.urls import Resolver404, resolve, reverse
from django.utils import timezone
from django_htmx.http import HttpResponseClientRedirect

from studies.services import participant_touch
from studies.views.join import SESSION_KEY

# The pages of a participant's own study; work pages also check that the assignment is theirs.
STUDY_PAGES = frozenset({"campaign_entry", "campaign_resume", "campaign_guidelines", "participant_end"})
WORK_PAGES = frozenset({
    "item_screen", "judgment_save", "action_undo", "action_redo", "added_span_add", "added_span_edit",
    "added_span_remove", "assignment_finish", "assignment_time", "assignment_reveal", "auto_advance",
})
OPEN_PAGES = frozenset({"join", "logout"})
TOUCH_EVERY_SECONDS = 60
SEEN_KEY = "sj_participant_seen"


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
        if name not in STUDY_PAGES | WORK_PAGES | OPEN_PAGES:
            raise Http404("Not part of this study.")
        now = timezone.now()
        deadline = data.get("deadline")
        if name in WORK_PAGES and deadline and now >= datetime.fromisoformat(deadline):
            target = reverse("participant_end", args=[data["campaign"]])
            return HttpResponseClientRedirect(target) if request.headers.get("HX-Request") else \
                HttpResponseRedirect(target)
        if now.timestamp() - request.session.get(SEEN_KEY, 0) >= TOUCH_EVERY_SECONDS:
            participant_touch(participant_pk=data["participant"], now=now)
            request.session[SEEN_KEY] = now.timestamp()
        return self.get_response(request)
