"""The quality checks' answers to the judging flow's questions (annotator.checks), installed at start-up."""

from __future__ import annotations

from annotator.models import Assignment
from corpus.models import ErrorSpan
from quality import services
from quality.models import CheckSpan, Qualification
from quality.selectors import vigilance


class QualityChecks:
    def gate(self, assignment: Assignment) -> str | None:
        if assignment.is_training or not (assignment.campaign.qualification or {}).get("items"):
            return None
        row = Qualification.objects.filter(campaign_id=assignment.campaign_id,
                                           annotator_id=assignment.annotator_id).first()
        if row is not None and row.passed:
            return None
        if row is not None and row.passed is False:
            return (f"Your training score ({row.score:.0%}) is below this campaign's pass mark; the real items "
                    "stay closed until the researcher re-opens training for you.")
        return "Finish the training items first: the real items open once you reach the pass mark."

    def hidden_spans(self, assignment: Assignment, span_pk: int | None = None) -> list[tuple[ErrorSpan, str]]:
        rows = CheckSpan.objects.filter(campaign_id=assignment.campaign_id,
                                        span__annotation__item_id=assignment.item_id)
        if assignment.campaign.aspects:
            rows = rows.filter(span__annotation__aspect__in=[*assignment.campaign.aspects, ""])
        if span_pk is not None:
            rows = rows.filter(span_id=span_pk)
        return [(row.span, row.campaign_run.label) for row in rows.select_related("span__annotation", "campaign_run")]

    def item_finished(self, assignment: Assignment) -> None:
        if assignment.is_training:
            services.qualification_grade(campaign=assignment.campaign, annotator=assignment.annotator)

    def training_key(self, assignment: Assignment, rows: list) -> list[vigilance.KeyRow]:
        return vigilance.training_key(assignment, rows)

    def excluded_annotator_ids(self, campaign_id: int | None) -> list[int]:
        return vigilance.excluded_annotator_ids(campaign_id)
