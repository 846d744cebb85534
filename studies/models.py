"""A campaign's participant link, the participants who joined by it, and the work handed to them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotator.models import Assignment, Campaign
from corpus import protocols
from corpus.models import Item


class StudyLink(models.Model):
    """A campaign's participant link (`/join/<token>/`) and the study settings of everyone who joins by it."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="study_link")
    token = models.CharField(max_length=32, unique=True, help_text="128 random bits, hex.")
    enabled = models.BooleanField(default=True, help_text="Off: nobody new may join (a revoked link answers 410).")
    revoked_at = models.DateTimeField(null=True, blank=True)
    resumes_stopped = models.BooleanField(
        default=False, help_text="Set when revoking: participants who joined cannot come back through the link either.")
    sessions_ended_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when revoking: every open participant session ended at its next request.")
    cap = models.PositiveIntegerField(null=True, blank=True, help_text="At most this many participants; empty: no cap.")
    expires = models.DateTimeField(null=True, blank=True, help_text="No new joins from this moment; empty: never.")
    consent = models.TextField(blank=True, default="", help_text="Markdown shown before the Start button.")
    items_per_participant = models.PositiveIntegerField(default=10)
    release_after_minutes = models.PositiveIntegerField(default=30)
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)
    pass_code = models.CharField(max_length=64)
    fail_code = models.CharField(max_length=64, blank=True, default="")
    completion_url = models.CharField(max_length=2000, blank=True, default="")
    items = models.JSONField(default=list, help_text="The pool: item ids handed out to participants, in item order.")
    controls = models.JSONField(default=list, blank=True,
                                help_text="Control items (known answers) that every participant gets.")
    screens = models.JSONField(
        default=list, blank=True, help_text="Under a comparing protocol, the pool's screens as planned with the "
        "campaign: {segment, judge (the place k), items (in position order)}; a participant who takes place k of an "
        "input gets its screens.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotator_studylink"
        constraints = [
            models.CheckConstraint(condition=Q(items_per_participant__gte=1), name="studylink_items_positive"),
            models.CheckConstraint(condition=Q(release_after_minutes__gte=1), name="studylink_release_positive"),
        ]

    def __str__(self) -> str:
        return f"link of {self.campaign}"

    @property
    def share_noun(self) -> str:
        """What `items_per_participant` counts: inputs (all of their outputs) under a comparing protocol."""
        return "inputs" if protocols.get(self.campaign.protocol).comparing else "items"


class Participant(models.Model):
    """Someone who joined by a campaign's link: an annotator account without a password, under a random handle.

    Platform ids are stored exactly as the platform passed them; nothing else about the person is kept."""

    link = models.ForeignKey(StudyLink, on_delete=models.CASCADE, related_name="participants")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant")
    prolific_pid = models.CharField(max_length=64, blank=True, default="")
    study_id = models.CharField(max_length=64, blank=True, default="")
    session_id = models.CharField(max_length=64, blank=True, default="")
    worker_id = models.CharField(max_length=64, blank=True, default="")
    mturk_assignment_id = models.CharField(max_length=64, blank=True, default="")
    hit_id = models.CharField(max_length=64, blank=True, default="")
    joined_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(null=True, blank=True, help_text="Last request, to the minute.")
    deadline = models.DateTimeField(null=True, blank=True, help_text="joined_at + the time limit, if any.")
    finished_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(
        null=True, blank=True, help_text="The researchers ended the study before this participant finished.")
    outcome = models.CharField(max_length=4, blank=True, default="", help_text="pass or fail, once the code is given.")
    code_given = models.CharField(max_length=64, blank=True, default="")
    flagged = models.BooleanField(default=False, help_text="Set by a researcher: the participant gets the fail code.")
    flag_note = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        db_table = "annotator_participant"
        ordering = ["link_id", "joined_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["link", "prolific_pid"], condition=~Q(prolific_pid=""),
                                    name="participant_one_per_prolific_pid"),
            models.UniqueConstraint(fields=["link", "worker_id"], condition=~Q(worker_id=""),
                                    name="participant_one_per_mturk_worker"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.link.campaign}"


class Handout(models.Model):
    """An assignment handed to a participant from the link's pool; released when they went idle or ran out
    of time. A released assignment keeps its work but counts towards the item's overlap only once finished."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="handout")
    handed_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotator_handout"


class PoolSlot(models.Model):
    """One judge's place on one output of the link's pool (judge k of output i), decided when the campaign is
    created: whether that judge sees the output unprimed (the control arm's crossing). A participant takes it at
    join; released, it returns to the pool with its arm, so the design holds whoever comes and goes.

    Free while it has no assignment, or its assignment went back unfinished (released, not done)."""

    link = models.ForeignKey(StudyLink, on_delete=models.CASCADE, related_name="slots")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    judge = models.PositiveSmallIntegerField(help_text="k of the output's pool judges, from 1.")
    unprimed = models.BooleanField(default=False, help_text="In the control arm: marked before the spans show.")
    assignment = models.OneToOneField(Assignment, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="pool_slot")

    class Meta:
        ordering = ["link_id", "item_id", "judge"]
        constraints = [
            models.UniqueConstraint(fields=["link", "item", "judge"], name="poolslot_one_per_judge"),
            models.CheckConstraint(condition=Q(judge__gte=1), name="poolslot_judge_positive"),
        ]

    def __str__(self) -> str:
        return f"judge {self.judge} of item {self.item_id}"


class SetupReport(models.Model):
    """What a campaign's creation asked for and could make, and what it warned about (the campaign page and
    `GET /api/campaigns/ID` show it): the design as planned, not as it ran."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="setup_report")
    warnings = models.JSONField(default=list, blank=True)
    decoys_asked = models.PositiveIntegerField(default=0)
    decoys_made = models.PositiveIntegerField(default=0)
    decoys_why = models.TextField(blank=True, default="")
    planted_asked = models.PositiveIntegerField(default=0)
    planted_made = models.PositiveIntegerField(default=0)
    planted_why = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"setup of {self.campaign}"
