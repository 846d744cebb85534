"""An item opened by its annotator: the first opening pre-fills it where the protocol says so (MQM's and ESA^AI's
machine spans), and every opening starts a new active-time clock. The item screen and the API's open operation
both open an item here."""

from __future__ import annotations

from accounts.models import User
from annotator.models import Assignment, Campaign
from annotator.services.actions import activity_record
from annotator.services.esa import esa_open
from annotator.services.mqm_prefill import mqm_prefill
from corpus import protocols


def assignment_open(*, assignment: Assignment, user: User) -> None:
    """Open the annotator's own item of an open campaign; a finished item, or someone else's, is left as it is."""
    if assignment.annotator_id != user.pk or assignment.campaign.status != Campaign.Status.OPEN or assignment.is_done():
        return
    if assignment.campaign.protocol == protocols.MQM and assignment.last_active_at is None:
        mqm_prefill(assignment=assignment, user=user)  # first opening: machine spans pre-fill it
    if assignment.campaign.protocol == protocols.ESA:
        esa_open(assignment=assignment, user=user)  # first opening: ESA^AI pre-fills it
    activity_record(assignment=assignment, opening=True)  # opening the item starts a new active-time clock
