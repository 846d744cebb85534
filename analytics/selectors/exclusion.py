"""Whether a campaign's figures count the annotators its quality checks flag: its setting, or one request's choice.

Every analytics answer of a campaign (page, tables, ranking, priming, estimates, labeled set, report) takes
one `exclude_flagged` choice: None follows the campaign's `exclude_flagged` setting, True leaves the flagged
annotators out, False counts them. The edges read it from `?exclude_flagged=` (or `export_report
--exclude-flagged / --include-flagged`) with `exclude_flagged_param`, and the answer says which it used.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from annotator.models import Campaign
from errors import UserError
from quality.vigilance import campaign_checks

PARAM = "exclude_flagged"
_VALUES = {"1": True, "0": False}


def exclude_flagged_param(raw: str | None) -> bool | None:
    """Read `?exclude_flagged=`: absent or empty = None (the campaign's setting), 1 = exclude, 0 = include."""
    if raw is None or raw == "":
        return None
    if raw in _VALUES:
        return _VALUES[raw]
    raise UserError(f"{PARAM}: {raw[:40]!r} is neither 1 (leave flagged annotators out) nor 0 (count them); "
                    "leave it out for the campaign's setting", field=PARAM)


@dataclass(frozen=True)
class Exclusion:
    """The choice a set of figures was computed under, and whom it left out. Who is flagged is asked of the
    quality checks only when needed (leaving out, or naming them), so an answer that counts everyone costs
    nothing more."""

    campaign: Campaign
    exclude: bool  # flagged annotators are left out of every figure
    asked: bool  # chosen for this request; False: the campaign's setting

    @cached_property
    def _flagged(self) -> list:
        return [row for row in campaign_checks(self.campaign) if row.reasons]

    @property
    def flagged(self) -> tuple[str, ...]:
        """Every annotator the quality checks flag, by name."""
        return tuple(row.annotator for row in self._flagged)

    @property
    def excluded(self) -> tuple[str, ...]:
        return self.flagged if self.exclude else ()

    @property
    def excluded_ids(self) -> tuple[int, ...]:
        return tuple(row.user_id for row in self._flagged) if self.exclude else ()

    @property
    def origin(self) -> str:
        return "chosen for these figures" if self.asked else "the campaign's setting"

    def sentence(self) -> str:
        """One sentence a reader of any report format needs before the first figure."""
        who = ", ".join(self.flagged)
        if self.exclude:
            left = (f"left out of every figure: {who}" if self.flagged
                    else "to be left out of every figure, and nobody is flagged")
            return f"Flagged annotators are {left} ({self.origin})."
        counted = f"counted in every figure: {who}" if self.flagged else "counted; nobody is flagged"
        return f"Flagged annotators are {counted} ({self.origin})."


def exclusion_for(campaign: Campaign, exclude_flagged: bool | None) -> Exclusion:
    """Resolve a request's choice against the campaign (None: its setting)."""
    exclude = campaign.exclude_flagged if exclude_flagged is None else exclude_flagged
    return Exclusion(campaign=campaign, exclude=exclude, asked=exclude_flagged is not None)
