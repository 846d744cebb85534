"""What a campaign's study really was, counted from its data: judges per output, arms, who judged, checks shown.

The report's design paragraph is written from these counts and from nothing the researcher asked for: a
setting (judges per item, a control-arm share, a decoy rate) says what was hoped, the rows say what happened.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from annotator.models import Assignment, AutoResolved, Campaign, CampaignRun, SampledSpan, SpanDraw
from corpus import protocols
from quality.models import CheckSpan, PlantedOutput
from quality.selectors.vigilance import campaign_checks
from studies.models import Participant

PROLIFIC, MTURK, LINK = "Prolific", "MTurk", "the link alone"


def participant_platform(participant: Participant) -> str:
    """Where a participant came from, by the platform ids the link received."""
    if participant.prolific_pid:
        return PROLIFIC
    if participant.worker_id:
        return MTURK
    return LINK


@dataclass
class StudyDesign:
    outputs: int  # real outputs handed to at least one judge
    judges_per_output: dict[int, int]  # number of judges who finished an output -> outputs with that many
    primed: int  # finished judgments with the machine spans shown from the start
    unprimed: int  # finished judgments of the control arm: marked before the machine spans were shown
    crossed: int  # outputs judged both ways
    registered: int  # annotators with an account of their own who had work
    platforms: dict[str, int] = field(default_factory=dict)  # participants from the link, by platform
    decoys_made: int = 0
    decoys_shown: int = 0  # (annotator, decoy) pairs on outputs they finished or judged
    planted_made: int = 0
    planted_shown: int = 0  # planted outputs their annotator finished
    training_done: int = 0  # qualification items finished
    excluded: int = 0  # annotators left out of the counts (flagged, excluded)
    neutral_labels: int = 0  # evaluators shown under a neutral label
    sampled: int | None = None  # machine spans in a designed sample
    strata: str = ""
    auto_resolved: int = 0  # a routed campaign's spans resolved without a judge
    active: bool = False  # the active routing design: batches drawn by the predicted uncertainty
    batches: int = 0
    verdicts: bool = True  # the protocol puts machine spans to the judges (else they may only pre-fill the screen)

    @property
    def participants(self) -> int:
        return sum(self.platforms.values())


def study_design(campaign: Campaign, *, excluded: Collection[int] = ()) -> StudyDesign:
    """Count the campaign's study as it ran; the `excluded` annotators (flagged, left out) count nowhere."""
    work = Assignment.objects.filter(campaign=campaign).exclude(annotator_id__in=list(excluded))
    real = work.filter(is_training=False, is_control=False, item__derived_from__isnull=True)
    finished = real.filter(status=Assignment.Status.DONE)
    judges = Counter(finished.values_list("item_id", flat=True))
    handed = set(real.values_list("item_id", flat=True))
    per_output = Counter(judges.values())
    if unjudged := len(handed - set(judges)):
        per_output[0] = unjudged
    arms: dict[int, set[bool]] = {}
    for item_id, unprimed in finished.values_list("item_id", "in_control_arm"):
        arms.setdefault(item_id, set()).add(unprimed)
    people = set(work.values_list("annotator_id", flat=True))
    participants = list(Participant.objects.filter(link__campaign=campaign, user_id__in=people))
    checks = [row for row in campaign_checks(campaign) if row.user_id not in set(excluded)]
    design = getattr(campaign, "sample_design", None) if campaign.is_sampled else None
    return StudyDesign(
        outputs=len(handed), judges_per_output=dict(per_output),
        primed=finished.filter(in_control_arm=False).count(), unprimed=finished.filter(in_control_arm=True).count(),
        crossed=sum(1 for seen in arms.values() if len(seen) == 2),
        registered=len(people - {p.user_id for p in participants}),
        platforms=dict(Counter(participant_platform(p) for p in participants)),
        decoys_made=CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY).count(),
        decoys_shown=sum(row.figures.decoys.n for row in checks),
        planted_made=PlantedOutput.objects.filter(campaign=campaign).count(),
        planted_shown=sum(row.figures.planted.n for row in checks),
        training_done=work.filter(is_training=True, status=Assignment.Status.DONE).count(),
        excluded=len(set(excluded)),
        neutral_labels=CampaignRun.objects.filter(campaign=campaign).count(),
        sampled=SampledSpan.objects.filter(design=design).count() if design is not None else None,
        strata=design.get_strata_display().lower() if design is not None else "",
        auto_resolved=AutoResolved.objects.filter(design=design).count() if design is not None else 0,
        active=design is not None and design.is_active,
        batches=(SpanDraw.objects.filter(design=design).values("batch").distinct().count()
                 if design is not None and design.is_active else 0),
        verdicts=protocols.get(campaign.protocol).judges_machine_spans,
    )


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _listing(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _priming(d: StudyDesign) -> str:
    """Who saw the machine's spans first: verdicts on them (primed) or a pre-filled screen; nothing where no run
    showed any."""
    judgments = d.primed + d.unprimed
    if not judgments:
        return ""
    if not d.verdicts and not d.neutral_labels:
        return f"In all {_n(judgments, 'finished judgment')} the judges marked every error themselves. "
    seen = "saw the machine's spans from the start" if d.verdicts else "opened pre-filled with the machine's spans"
    if d.unprimed:
        without = ("first marked errors without them" if d.verdicts
                   else "opened empty and marked every error themselves")
        return (f"Of {_n(judgments, 'finished judgment')}, {d.primed} {seen} (primed) and {d.unprimed} {without} "
                f"(unprimed, the control arm); {_n(d.crossed, 'output was', 'outputs were')} judged both ways. ")
    return f"All {_n(judgments, 'finished judgment')} {seen} (primed). "


def design_paragraph(d: StudyDesign) -> str:
    """The sample design in words, every number counted (StudyDesign), none of them a setting."""
    if not d.outputs:
        return "No output has been handed to a judge yet."
    spread = [f"{_n(outputs, 'output')} had {_n(k, 'judge')}"
              for k, outputs in sorted(d.judges_per_output.items(), reverse=True) if k]
    if none := d.judges_per_output.get(0):
        spread.append(f"{_n(none, 'output')} no finished judgment yet")
    text = (f"{_n(d.outputs, 'output')} went to the judges: {_listing(spread)} (a judge is an annotator who "
            "finished the output" + (f"; {_n(d.excluded, 'flagged annotator')} left out" if d.excluded else "")
            + "). ")
    text += _priming(d)
    who = []
    if d.registered:
        who.append(_n(d.registered, "registered annotator"))
    if d.platforms:
        where = _listing([f"{n} from {name}" for name, n in sorted(d.platforms.items())])
        who.append(f"{_n(d.participants, 'participant')} who joined by the study link ({where})")
    if who:
        text += f"The judges were {_listing(who)}. "
    checks = []
    if d.decoys_made:
        checks.append(f"{_n(d.decoys_made, 'decoy')} made, shown {_n(d.decoys_shown, 'time')}")
    if d.planted_made:
        checks.append(f"{_n(d.planted_made, 'planted output')} made, {d.planted_shown} of them finished")
    if d.training_done:
        checks.append(f"{_n(d.training_done, 'qualification item')} finished")
    text += ("Known answers: " + "; ".join(checks) + ". ") if checks else "No decoy or planted output was shown. "
    if d.neutral_labels and d.verdicts:
        text += "Evaluator names were hidden from the judges behind neutral labels. "
    if not d.verdicts:
        if d.neutral_labels:
            text += ("The evaluator runs' spans only pre-filled the screens: the judges kept, changed or deleted "
                     "them as their own errors, and gave no verdict on any.")
    elif d.sampled is not None and d.active:
        text += (f"The judges saw {_n(d.sampled, 'machine span')} drawn in {_n(d.batches, 'batch', 'batches')} with "
                 "probabilities that follow a calibrated predictor's uncertainty (active routing; the first batch "
                 "uniform); the figures below describe the judged spans.")
        if d.auto_resolved:
            text += (f" {_n(d.auto_resolved, 'span')} {'was' if d.auto_resolved == 1 else 'were'} labelled by the "
                     "model without a judge; the routing section estimates the figures for all spans.")
    elif d.sampled is not None:
        text += (f"The judges saw a stratified random sample of {_n(d.sampled, 'machine span')} (strata: "
                 f"{d.strata}); the figures below describe the judged sample.")
        if d.auto_resolved:
            text += (f" {_n(d.auto_resolved, 'span')} that enough of the ensemble's models flagged "
                     f"{'was' if d.auto_resolved == 1 else 'were'} resolved as errors without a judge (routed "
                     "judging); the routing section estimates the figures for all spans.")
    else:
        text += "Every machine span of the campaign's evaluator runs was put to the judges."
    return text.strip()
