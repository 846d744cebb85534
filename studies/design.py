"""What a study's design can deliver, checked when it is created: refusals and warnings, with numbers.

A refusal is a design that cannot run at all (a link nobody could ever join); a warning is one that runs but
not as asked (a cap the pool cannot use, checks that could not all be made, an arm that cannot be crossed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from annotator.services.campaigns import CampaignError
from quality.services import ChecksMade


@dataclass(frozen=True)
class Pool:
    """A participant link's pool as the design sets it up."""

    outputs: int  # outputs handed out by the link
    judges: int  # places per output left for participants (annotators_per_item less the registered judges)
    registered: int  # registered annotators judging each output
    per_participant: int  # items_per_participant
    cap: int | None

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
        warnings.append(f"items_per_participant: {pool.per_participant}, but the pool has {pool.outputs} outputs "
                        f"and nobody judges one twice: each participant gets at most {pool.outputs}")
    if pool.cap is not None and pool.cap > pool.admits():
        warnings.append(f"link.cap: {pool.cap}, but the pool's {pool.places} places ({pool.outputs} outputs x "
                        f"{pool.judges} participant judges) at {pool.share} outputs each admit at most "
                        f"{pool.admits()} participants; the link says the study is full after that")
    elif pool.cap is not None and pool.cap * pool.share < pool.places:
        left = pool.places - pool.cap * pool.share
        warnings.append(f"link.cap: {pool.cap} participants x {pool.share} outputs fill {pool.cap * pool.share} of "
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
