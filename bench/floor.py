"""The floor of the study benches: each hot path done by the smallest honest implementation, served by the same
server beside the real one, so a bench can print today's figure, the floor's and their ratio.

- A join's floor is the place claim alone: the link's row locked, the cap counted, an account and a participant
  made, the first free places of distinct outputs claimed as assignments, the session signed in. No platform-id
  checks, no training items, planted copies or control items, no balancing of arms or decoys.
- A save's floor authenticates the session, checks that the assignment is the user's, open and holds the span,
  writes the judgment and its audit row and renders the card. No quality port, no telemetry, no vigilance, no
  undo stack, no versions.

Only models that every checkout of the project has are used (Assignment, SpanJudgment, JudgmentEvent,
StudyLink, PoolSlot, Participant), so `study_burst.py --compare REF` serves the same floor from an older tree:
the module is imported as `floor` from a directory put first on the server's path, and its URLs sit in front
of the project's (`floor_urls`). Bench code only: nothing in the product imports it.
"""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_not_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseNotFound
from django.urls import include, path
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_POST

FIELDS = {"span_verdict", "explanation_verdict"}


@login_not_required
@require_POST
def join(request: HttpRequest, token: str) -> HttpResponse:
    from annotator.models import Assignment
    from studies.models import Participant, PoolSlot, StudyLink

    with transaction.atomic():
        link = StudyLink.objects.select_for_update(no_key=True, of=("self",)).filter(token=token).first()
        if link is None:
            return HttpResponseNotFound("no such link")
        if link.cap is not None and Participant.objects.filter(link=link).count() >= link.cap:
            return HttpResponse("full", status=409)
        user = get_user_model().objects.create(username="f-" + secrets.token_hex(6))
        Participant.objects.create(link=link, user=user, last_seen_at=timezone.now())
        free = PoolSlot.objects.filter(link=link, assignment__isnull=True).order_by("pk").values_list("pk", "item_id")
        chosen: dict[int, int] = {}
        for pk, item_id in free[: link.items_per_participant * 4]:
            if item_id not in chosen and len(chosen) < link.items_per_participant:
                chosen[item_id] = pk
        if not chosen:
            return HttpResponse("full", status=409)
        made = Assignment.objects.bulk_create(
            Assignment(campaign_id=link.campaign_id, item_id=item_id, annotator=user, order=n)
            for n, item_id in enumerate(chosen, start=1))
        PoolSlot.objects.bulk_update([PoolSlot(pk=chosen[a.item_id], assignment=a) for a in made], ["assignment"])
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return HttpResponse(" ".join(f"{a.pk}:{a.item_id}" for a in made), status=201)


@require_POST
def save(request: HttpRequest, assignment_pk: int, span_pk: int) -> HttpResponse:
    from annotator.models import Assignment, JudgmentEvent, SpanJudgment

    if not request.user.is_authenticated:
        return HttpResponse("sign in", status=401)
    field, value = request.POST.get("field", ""), request.POST.get("value", "")
    if field not in FIELDS or not value:
        return HttpResponseBadRequest("field and value")
    assignment = (Assignment.objects.filter(pk=assignment_pk, annotator_id=request.user.pk)
                  .exclude(status=Assignment.Status.DONE).select_related("item").first())
    if assignment is None:
        return HttpResponseNotFound("no open assignment of yours")
    from corpus.models import ErrorSpan

    span = ErrorSpan.objects.filter(pk=span_pk, annotation__item_id=assignment.item_id).first()
    if span is None:
        return HttpResponseNotFound("no such span on this item")
    with transaction.atomic():
        judgment, _ = SpanJudgment.objects.select_for_update().get_or_create(
            assignment=assignment, span=span, defaults={"annotator_id": request.user.pk})
        old = getattr(judgment, field)
        setattr(judgment, field, value)
        judgment.save(update_fields=[field, "updated_at"])
        JudgmentEvent.objects.create(judgment=judgment, user_id=request.user.pk, field=field, old_value=old,
                                     new_value=value)
    return HttpResponse(format_html(
        '<div class="card" id="span-{}"><mark>{}</mark><p>{}</p><span>{}: {}</span></div>',
        span.pk, assignment.item.output[span.start or 0:span.end or 0], span.explanation, field, value))


def floor_urls(project_urls: str) -> list:
    """The floor's URLs in front of the project's."""
    return [path("bench-floor/join/<str:token>/", join), path("bench-floor/save/<int:assignment_pk>/<int:span_pk>/",
                                                              save), path("", include(project_urls))]
