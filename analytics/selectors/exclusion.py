"""Whether a campaign's figures count the annotators its quality checks flag, and the real ratings that follow.

Every analytics answer of a campaign (page, tables, ranking, priming, estimates, labeled set, report) takes
one `exclude_flagged` choice: None follows the campaign's `exclude_flagged` setting, True leaves the flagged
annotators out, False counts them. The edges read it from `?exclude_flagged=` (or `export_report
--exclude-flagged / --include-flagged`) with `exclude_flagged_param`, and the answer says which it used. The
choice is resolved in one place, quality.selectors.vigilance.exclusion_for, which the judging flow's own figures (review
queue, pilot, exports) use too.
"""

from __future__ import annotations

from django.db.models import QuerySet

from annotator.models import Assignment
from errors import UserError
from quality.selectors.vigilance import Exclusion, exclusion_for

__all__ = ["Exclusion", "exclude_flagged_param", "exclusion_for", "rated_assignments"]

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


def rated_assignments(exclusion: Exclusion) -> QuerySet[Assignment]:
    """The campaign's real ratings: finished assignments that are neither training nor a known-answer control item
    nor on a derived item (a planted copy is a hidden item derived from a real one: its errors are the check's, not
    the system's), less the annotators the exclusion leaves out. MQM's and ESA's figures and exports read these."""
    return (Assignment.objects.filter(campaign=exclusion.campaign, status=Assignment.Status.DONE, is_training=False,
                                      is_control=False, item__derived_from__isnull=True)
            .exclude(annotator_id__in=list(exclusion.excluded_ids)))
