"""The per-item score of a protocol that gives one (its declaration's `score_range`): one row per assignment.

Protocol-agnostic: the range is the declaration's, checked by the one writer (annotator.services.item_scores),
so a new scoring protocol needs no model of its own. ESA keeps its own row (annotator.esa_models), which also
times its span phase.
"""

from __future__ import annotations

from django.db import models


class ItemScore(models.Model):
    """One annotator's score of one item (an assignment), with the telemetry the screens send."""

    assignment = models.OneToOneField("annotator.Assignment", on_delete=models.CASCADE, primary_key=True,
                                      related_name="item_score")
    score = models.SmallIntegerField(null=True, blank=True, help_text="None: given, then undone.")
    first_ms = models.PositiveIntegerField(null=True, blank=True,
                                           help_text="Milliseconds on the page from opening to the first score.")
    score_ms = models.PositiveIntegerField(null=True, blank=True,
                                           help_text="Milliseconds from the previous action to the last change.")
    score_changes = models.PositiveIntegerField(default=0)
    scored_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"score {self.score} on assignment {self.assignment_id}"
