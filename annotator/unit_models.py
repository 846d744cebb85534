"""Comparison units: outputs of one input that one annotator judges together on one screen (a comparing protocol's
declaration says how many), with the positions they were shown in and what the annotator decided about them.

Spans, severities and scores stay on each output's assignment, so every per-output figure, export and check reads
them as before; the unit adds what only a comparison has: the positions (counterbalanced when the campaign is made,
annotator.engine.positions), the choice (the better output's position, or a tie) with its reason, and its timings.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ComparisonUnit(models.Model):
    """One screen of outputs of one input, for one annotator."""

    campaign = models.ForeignKey("annotator.Campaign", on_delete=models.CASCADE, related_name="units")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="units")
    segment = models.CharField(max_length=200, help_text="The input's id: its outputs' external_id.")
    number = models.PositiveIntegerField(help_text="1-based: the annotator's screens in queue order.")
    choice = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The better output's position (1 the first); 0 a tie; None not yet.")
    reason = models.TextField(blank=True, default="")
    first_ms = models.PositiveIntegerField(null=True, blank=True,
                                           help_text="Milliseconds on the page from opening to the first choice.")
    choice_ms = models.PositiveIntegerField(null=True, blank=True,
                                            help_text="Milliseconds from the previous action to the last change.")
    changes = models.PositiveIntegerField(default=0)
    chosen_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="A preference screen's finish (its choice "
                                       "made); a screen without one is finished when its outputs are.")

    class Meta:
        ordering = ["campaign", "annotator", "number"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator", "number"], name="unit_unique_annotator_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="comparisonunit_number_from_1"),
        ]

    def __str__(self) -> str:
        return f"unit {self.number} of {self.annotator_id} on {self.segment}"


class UnitOutput(models.Model):
    """One output of a unit, through the annotator's assignment of it, at its position on the screen."""

    unit = models.ForeignKey(ComparisonUnit, on_delete=models.CASCADE, related_name="outputs")
    assignment = models.ForeignKey("annotator.Assignment", on_delete=models.CASCADE, related_name="unit_outputs")
    position = models.PositiveSmallIntegerField(help_text="1-based, left to right (or top to bottom).")

    class Meta:
        ordering = ["unit", "position"]
        constraints = [
            models.UniqueConstraint(fields=["unit", "position"], name="unitoutput_unique_position"),
            models.UniqueConstraint(fields=["unit", "assignment"], name="unitoutput_unique_assignment"),
            models.CheckConstraint(condition=Q(position__gte=1), name="unitoutput_position_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.unit_id} #{self.position}: assignment {self.assignment_id}"
