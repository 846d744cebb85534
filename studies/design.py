"""What a study's design can deliver, checked when it is created: refusals and warnings, with numbers.

A refusal is a design that cannot run at all (a link nobody could ever join); a warning is one that runs but
not as asked (a cap the pool cannot use, checks that could not all be made, an arm that cannot be crossed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from annotator.models import Assignment, Campaign, ControlVerdict
from annotator.services.campaigns import CampaignError
from quality.engine import power
from quality.engine.power import CheckPower
from quality.models import PlantedOutput
from quality.services import ChecksMade, decoys_per_output, planted_count
from studies.models import SetupReport, StudyLink


@dataclass(frozen=True)
class Pool:
    """A participant link's pool as the design sets it up."""

    outputs: int  # outputs handed out by the link
    judges: int  # places per output left for participants (annotators_per_item less the registered judges)
    registered: int  # registered annotators judging each output
    per_participant: int  # items_per_participant
    cap: int | None
    unit: str = "outputs"  # what the pool hands out and the share counts: "inputs" under a comparing protocol

    @property
    def places(self) -> int:
        return self.outputs * self.judges

    @property
    def share(self) -> int:
        """Outputs one participant holds: their share, or every output when the pool is smaller."""
        return min(self.per_participant, self.outputs)

    def admits(self) -> int:
        """How many participants the pool can take before it is full (the last may get fewer outputs)."""
        return math.ceil(self.places / self.share) if self.share else 0

    def expected(self) -> int:
        """How many participants the study will have once full: the pool's, or fewer under a cap."""
        return min(self.admits(), self.cap) if self.cap is not None else self.admits()


def pool_refusal(pool: Pool, per_item: int) -> None:
    """Refuse a link that can never admit anyone, naming the field and the numbers."""
    if pool.judges == 0:
        raise CampaignError(
            f"link: the {pool.registered} registered annotators already give every output its {per_item} "
            f"judge{'s' if per_item != 1 else ''} (annotators_per_item), so nobody could ever join by the link; "
            "raise annotators_per_item or register fewer annotators", field="link")
    if pool.outputs == 0:
        raise CampaignError("link: the pool is empty, so nobody could ever join by the link: the campaign has no "
                            "output to hand out (none the runs annotated, or all are control or training items)",
                            field="link")


def pool_warnings(pool: Pool) -> list[str]:
    """What a link's settings promise that its pool cannot keep."""
    warnings = []
    if pool.per_participant > pool.outputs:
        warnings.append(f"items_per_participant: {pool.per_participant}, but the pool has {pool.outputs} {pool.unit} "
                        f"and nobody judges one twice: each participant gets at most {pool.outputs}")
    if pool.cap is not None and pool.cap > pool.admits():
        warnings.append(f"link.cap: {pool.cap}, but the pool's {pool.places} places ({pool.outputs} {pool.unit} x "
                        f"{pool.judges} participant judges) at {pool.share} {pool.unit} each admit at most "
                        f"{pool.admits()} participants; the link says the study is full after that")
    elif pool.cap is not None and pool.cap * pool.share < pool.places:
        left = pool.places - pool.cap * pool.share
        warnings.append(f"link.cap: {pool.cap} participants x {pool.share} {pool.unit} fill {pool.cap * pool.share} of "
                        f"the pool's {pool.places} places; {left} stay unjudged unless the cap is raised")
    return warnings


def arm_warnings(*, share: float, outputs: int, judges: int) -> list[str]:
    """An arm with nothing in it, or one that cannot be crossed with `judges` judges per output."""
    if share <= 0 or outputs == 0:
        return []
    if round(share * outputs) == 0:
        return [f"control_arm: {share:g} of {outputs} outputs rounds to 0, so no output is in the arm"]
    if judges < 2:
        return [f"control_arm: with 1 judge per output the arm cannot be crossed: its {round(share * outputs)} "
                "outputs are seen unprimed only, so priming is compared between different outputs, not on the "
                "same ones (annotators_per_item 2 or more crosses it)"]
    return []


def checks_warnings(made: ChecksMade, *, decoys: float, planted: float) -> list[str]:
    """Checks asked for but not all made, with how many and why."""
    warnings = []
    if decoys and made.decoys.made < max(made.decoys.asked, 1):
        warnings.append(f"decoys: {decoys:g} asked for {made.decoys.asked}, {made.decoys.made} made: "
                        f"{made.decoys.why or 'no output offers a stretch to use'}")
    if planted and made.planted.made < made.planted.asked:
        warnings.append(f"planted: {planted:g} asked for {made.planted.asked} planted outputs, {made.planted.made} "
                        f"made: {made.planted.why}")
    return warnings


# ---- the checks' power -------------------------------------------------------------------------------------


def checks_power_of(campaign: Campaign) -> list[CheckPower]:
    """Each check's power as the campaign is set up (quality.engine.power): what a participant of its link meets
    (the pool's decoys per output over their share, their planted copies), or without a link the registered
    annotators' mean; the training key as stored now (a key set later changes it)."""
    link = StudyLink.objects.filter(campaign=campaign).first()
    decoys = decoys_per_output(campaign)
    copies = list(PlantedOutput.objects.filter(campaign=campaign).values_list("annotator_id", "item_id"))
    on_copies = sum(decoys.get(item_id, 0) for _, item_id in copies) / len(copies) if copies else 0.0
    if link is not None and link.items:
        share = min(link.items_per_participant, len(link.items))
        rate = sum(decoys.get(i, 0) for i in link.items) / len(link.items)
        report = SetupReport.objects.filter(campaign=campaign).first()
        made = report.planted_made / report.planted_asked if report and report.planted_asked else 1.0
        planted = planted_count(campaign.planted, share) * min(made, 1.0)  # none when no output takes one
        per, decoys_met = share, rate * share + planted * on_copies
    else:
        real: dict[int, list[int]] = {}
        for annotator_id, item_id in (Assignment.objects.filter(campaign=campaign, is_training=False, is_control=False,
                                                                 item__derived_from__isnull=True)
                                      .values_list("annotator_id", "item_id")):
            real.setdefault(annotator_id, []).append(item_id)
        people = max(len(real), 1)
        per = round(sum(len(v) for v in real.values()) / people)
        rate = sum(decoys.get(i, 0) for v in real.values() for i in v) / max(sum(len(v) for v in real.values()), 1)
        planted = sum(1 for holder, _ in copies if holder is not None) / people
        decoys_met = rate * per + planted * on_copies
    training = list((campaign.qualification or {}).get("items", []))
    keys = tuple(ControlVerdict.objects.filter(campaign=campaign, span__annotation__item_id__in=training)
                 .order_by("pk").values_list("span_verdict", flat=True)) if training else ()
    design = power.Design(
        vigilance_min=campaign.vigilance_min, per_participant=per, decoys=campaign.decoys, decoys_met=decoys_met,
        planted=campaign.planted, planted_met=planted, training_keys=keys,
        training_pass=float((campaign.qualification or {}).get("pass", 0.8)), training_items=len(training),
        decoy_rate=rate,
    )
    return power.checks_power(design)


def weak_checks(rows: list[CheckPower]) -> tuple[str, tuple[str, ...]] | None:
    """When the checks can flag nobody: the warning saying so with each check's smallest fix, and the fields
    it is about; None when some check can flag someone (or there are no checks)."""
    if not rows or any(row.flags_anyone for row in rows):
        return None
    fields = tuple(dict.fromkeys(f for row in rows for f in _fix_fields(row.check)))
    fixes = "; ".join(f"{row.check}: {row.smallest_fix}" for row in rows if row.smallest_fix)
    met = ", ".join(f"{_MET_WORDS[row.check]} {row.met_per_participant:g}" for row in rows)
    return (f"{', '.join(fields)}: the checks can flag nobody: {met} per participant are too few for the vigilance "
            f"rule to flag anyone ({fixes})"), fields


def checks_power_refusal(rows: list[CheckPower], *, link: StudyLink | None, accept_weak: bool) -> list[str]:
    """Refuse a link study with pass and fail codes whose checks can flag nobody, naming the fields and the
    smallest fix, unless the researcher accepts weak checks; elsewhere (and then) return it as a warning. Also
    warn of each kind of participant no check can flag."""
    if not rows:  # no check asked: nothing to be weak
        return []
    weak = weak_checks(rows)
    if weak is not None:
        message, fields = weak
        if link is not None and link.fail_code and not accept_weak:
            raise WeakChecks(message + "; or set accept_weak_checks to create it anyway", field=fields)
        return [message]
    return [f"checks_power: no check can flag a participant who {_WHO[b]}" for b in power.weak_for(rows)]


class WeakChecks(CampaignError):
    """A link study whose checks can flag nobody (studies.design.checks_power_refusal)."""


def _fix_fields(check: str) -> tuple[str, ...]:
    """The request fields a check's smallest fix changes."""
    return {power.DECOY_CHECK: ("decoys", "items_per_participant"),
            power.PLANTED_CHECK: ("planted", "items_per_participant"),
            power.TRAINING_CHECK: ("qualification.items",)}[check]


_MET_WORDS = {power.DECOY_CHECK: "decoys", power.PLANTED_CHECK: "planted outputs",
              power.TRAINING_CHECK: "keyed training spans"}  # a count follows each
_WHO = {"accept_all": "accepts everything", "reject_all": "rejects everything", "random": "answers at random"}
