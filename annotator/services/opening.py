"""An item opened by its annotator: the first opening is claimed once and runs the protocol's first-open hook
(MQM's and ESA^AI's pre-fill), and every opening starts a new active-time clock. The item screen and the API's
open operation both open an item here."""

from __future__ import annotations

from accounts.models import User
from annotator.models import Assignment, Campaign
from annotator.services.actions import activity_record
from annotator.services.assignments import assignment_open


def item_open(*, assignment: Assignment, user: User) -> None:
    """Open the annotator's own item of an open campaign; a finished item, or someone else's, is left as it is."""
    if assignment.annotator_id != user.pk or assignment.campaign.status != Campaign.Status.OPEN or assignment.is_done():
        return
    assignment_open(assignment=assignment, user=user)  # the first open pre-fills, once
    activity_record(assignment=assignment, opening=True)  # opening the item starts a new active-time clock
