"""What the ESA protocol stores beside an assignment's spans: the segment score, and where ESA^AI's pre-filled
spans came from (so that what the annotator kept, deleted, resized or re-graded can be counted).

The spans themselves are the annotator's own spans of the item in the campaign (annotator.services.added_spans),
so undo, redo, exports and the report treat them as every protocol's; every change to one is a WorkAction with
its milliseconds, as a verdict is.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from corpus.protocols import esa


class EsaScore(models.Model):
    """One annotator's ESA answers on one item (an assignment is one item for one annotator): the 0-100 score given
    after the spans, and its telemetry. Made when the item is first opened. Where the item is (marking, scoring,
    done) is its assignment's phase (annotator.services.phases), not a field here."""

    assignment = models.OneToOneField("annotator.Assignment", on_delete=models.CASCADE, primary_key=True,
                                      related_name="esa")
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    opened_at = models.DateTimeField(auto_now_add=True)
    spans_ms = models.PositiveIntegerField(null=True, blank=True,
                                           help_text="Milliseconds on the page from opening to spans done.")
    scored_at = models.DateTimeField(null=True, blank=True)
    score_ms = models.PositiveIntegerField(null=True, blank=True,
                                           help_text="Milliseconds from spans done to the last score change.")
    score_changes = models.PositiveIntegerField(default=0)
    prefilled = models.BooleanField(default=False, help_text="Opened with the machine's spans marked (ESA^AI).")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=esa.SCORE_MIN, score__lte=esa.SCORE_MAX),
                name="esascore_score_0_to_100"),
        ]

    def __str__(self) -> str:
        return f"ESA score {self.score} on assignment {self.assignment_id}"

    @property
    def spans_done_at(self):
        """When the spans were declared done: the assignment's move into scoring (its last closing move)."""
        return self.assignment.boundary_at


class EsaPrefill(models.Model):
    """A machine span copied onto an ESA^AI item as one of the annotator's spans, as it arrived.

    `span_id` names the annotator's copy without a foreign key: deleting the copy must leave this row (a deleted
    pre-filled span is a figure), and an undone delete recreates the copy under a new id, which the undo renumbers
    here (annotator.services.esa.esa_prefill_renumber)."""

    assignment = models.ForeignKey("annotator.Assignment", on_delete=models.CASCADE, related_name="esa_prefills")
    span_id = models.PositiveBigIntegerField(help_text="The annotator's copy (an ErrorSpan id; gone when deleted).")
    machine_span = models.ForeignKey("corpus.ErrorSpan", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    severity = models.PositiveSmallIntegerField(help_text="The ESA severity code it arrived with.")
    machine_severity = models.PositiveSmallIntegerField(null=True, blank=True,
                                                        help_text="The machine's own 1-5 severity, if any.")

    class Meta:
        ordering = ["assignment_id", "start", "id"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "span_id"], name="esaprefill_one_per_span"),
            models.CheckConstraint(condition=Q(start__lt=models.F("end")), name="esaprefill_start_before_end"),
        ]
