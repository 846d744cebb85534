"""The quality checks' summary of a campaign for its analytics and report: checks in force, each annotator's
vigilance with Wilson intervals, who is flagged and why, and whether the figures count them."""

from __future__ import annotations

from dataclasses import dataclass, field

from analytics.selectors.design import participant_platform
from analytics.selectors.exclusion import Exclusion
from annotator.models import Assignment, Campaign
from corpus import protocols
from quality.engine import figures
from quality.engine.power import CheckPower
from quality.models import CheckSpan, PlantedOutput
from quality.selectors.vigilance import campaign_checks
from stats.intervals import Proportion
from studies.design import checks_power_of
from studies.models import Participant
from studies.screening import participant_reasons


@dataclass
class QualityRow:
    annotator: str
    who: str  # "registered", or the platform a participant came from
    decoys: Proportion  # decoys rejected of those shown
    planted: Proportion  # planted errors found of those finished
    reasons: list[str]  # the quality checks' reason codes (quality.engine.figures): these exclude
    screening: list[str] = field(default_factory=list)  # a participant's other reasons for the fail code
    excluded: bool = False  # left out of the figures


@dataclass
class QualitySummary:
    checks: list[str]  # the checks in force, in words, with what was made of them
    rows: list[QualityRow]
    exclusion: Exclusion
    power: list[CheckPower] = field(default_factory=list)  # each check's power as set up (studies.design)

    @property
    def flagged(self) -> list[QualityRow]:
        return [row for row in self.rows if row.reasons or row.screening]


def quality_summary(campaign: Campaign, exclusion: Exclusion) -> QualitySummary:
    """The checks of `campaign` as run, and every annotator's row (by name)."""
    decoys = CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY).count()
    planted = PlantedOutput.objects.filter(campaign=campaign).count()
    training = (campaign.qualification or {}).get("items") or []
    verdicts = protocols.get(campaign.protocol).judges_machine_spans  # decoys and rubber-stamping need verdicts
    checks = [
        *([f"Decoys: {decoys} known non-errors shown under the evaluators' labels" if decoys else "Decoys: none"]
          if verdicts else []),
        f"Planted errors: {planted} outputs copied with one known error planted" if planted
        else "Planted errors: none",
        (f"Qualification: {len(training)} training items, pass mark {campaign.qualification.get('pass')}"
         if training else "Qualification: none"),
        f"Vigilance: an annotator is flagged when the upper bound of the Wilson 95% interval of their "
        f"{'decoy rejection rate or of their ' if verdicts else ''}planted-error find rate is below "
        f"{campaign.vigilance_min:g}",
        *([f"Rubber-stamp rule: {figures.STAMP_RULE.describe()}"] if verdicts else []),
    ]
    participants = {p.user_id: p for p in Participant.objects.filter(link__campaign=campaign)}
    finished = set(Assignment.objects.filter(campaign=campaign, is_training=False, status=Assignment.Status.DONE)
                   .values_list("annotator_id", flat=True).distinct())
    rows = []
    for check in campaign_checks(campaign):
        participant = participants.get(check.user_id)
        screening = participant_reasons(participant, quality_flags=[], finished_any=check.user_id in finished)
        rows.append(QualityRow(
            annotator=check.annotator,
            who=f"participant ({participant_platform(participant)})" if participant else "registered",
            decoys=check.figures.decoys, planted=check.figures.planted, reasons=list(check.reasons),
            screening=screening if participant else [], excluded=check.user_id in exclusion.excluded_ids,
        ))
    return QualitySummary(checks=checks, rows=rows, exclusion=exclusion, power=checks_power_of(campaign))
