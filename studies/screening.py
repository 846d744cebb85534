"""Why a participant is screened out: the reasons that turn their completion code into the fail code."""

from __future__ import annotations

from django.utils import timezone

from accounts.models import User
from annotator.models import Assignment, Campaign
from quality.vigilance import annotator_flags
from studies.models import Participant


def quality_check_flags(campaign: Campaign, user: User) -> list[str]:
    """The reasons the campaign's quality checks (decoys, planted errors, the rubber-stamp rule) give against
    this annotator (quality.vigilance); a campaign without checks names none, so it gives the pass code."""
    return annotator_flags(campaign, user)


def participant_flag_reasons(campaign: Campaign, user: User) -> list[str]:
    """Every reason to give this participant the fail code; empty means the pass code.

    A researcher's flag, a time limit reached without one finished item, and the quality checks' flags."""
    participant = Participant.objects.filter(user=user, link__campaign=campaign).first()
    reasons: list[str] = []
    if participant is not None and participant.flagged:
        reasons.append(f"flagged by a researcher{': ' + participant.flag_note if participant.flag_note else ''}")
    if participant is not None and participant.deadline is not None:
        done = Assignment.objects.filter(campaign=campaign, annotator=user, is_training=False,
                                         status=Assignment.Status.DONE).exists()
        if not done and timezone.now() >= participant.deadline:
            reasons.append("the time limit passed before any item was finished")
    reasons += quality_check_flags(campaign, user)
    return reasons

