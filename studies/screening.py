"""Why a participant is screened out: the reasons that turn their completion code into the fail code."""

from __future__ import annotations

from django.utils import timezone

from accounts.models import User
from annotator.models import Assignment, Campaign
from quality.selectors.vigilance import annotator_flags
from studies.models import Participant


def participant_reasons(participant: Participant | None, *, quality_flags: list[str], finished_any: bool) -> list[str]:
    """Every reason to give this participant the fail code; empty means the pass code.

    A researcher's flag, a time limit reached without one finished item, and the quality checks' flags
    (decoys, planted errors, the rubber-stamp rule: quality.selectors.vigilance; none in a campaign without checks)."""
    reasons: list[str] = []
    if participant is not None and participant.flagged:
        reasons.append(f"flagged by a researcher{': ' + participant.flag_note if participant.flag_note else ''}")
    if (participant is not None and participant.deadline is not None and not finished_any
            and timezone.now() >= participant.deadline):
        reasons.append("the time limit passed before any item was finished")
    return reasons + quality_flags


def participant_flag_reasons(campaign: Campaign, user: User) -> list[str]:
    """`participant_reasons` of one participant (the end page, the completion code)."""
    participant = Participant.objects.filter(user=user, link__campaign=campaign).first()
    finished_any = Assignment.objects.filter(campaign=campaign, annotator=user, is_training=False,
                                             status=Assignment.Status.DONE).exists()
    return participant_reasons(participant, quality_flags=annotator_flags(campaign, user), finished_any=finished_any)
