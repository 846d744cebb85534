"""The `quality_control` section of every data card: check settings, rules in words, figures, exclusions."""

from __future__ import annotations

from typing import Any

from annotator.engine import telemetry
from annotator.models import Campaign
from corpus import protocols
from quality.engine import figures, power
from quality.selectors.vigilance import campaign_checks, excluded_annotator_ids
from studies.design import checks_power_of

# What an annotator's verdicts on machine spans give: no figure at all under a protocol that asks for none.
VERDICT_FIGURES = ("decoys", "median_ms_to_verdict", "confirm_rate", "fast_confirm_rate", "changed_rate", "drift")


def quality_control(campaign: Campaign, *, excluded: list[int] | None = None) -> dict[str, Any]:
    """The data card's `quality_control`: the check settings, the rules in words, each annotator's figures,
    and who was left out of this export."""
    rows = campaign_checks(campaign)
    left_out = set(excluded_annotator_ids(campaign.pk) if excluded is None else excluded)
    card = {
        "settings": {"decoys": campaign.decoys, "planted": campaign.planted, "vigilance_min": campaign.vigilance_min,
                     "qualification": campaign.qualification or None, "exclude_flagged": campaign.exclude_flagged,
                     "planted_near_duplicates": campaign.planted_near_duplicates},
        "rules": {
            "rubber_stamp": figures.STAMP_RULE.describe(),
            "vigilance": f"flagged when the upper bound of the Wilson 95% interval of the decoy rejection rate or "
                         f"of the planted-error find rate is below {campaign.vigilance_min:g}",
            "active_time": f"time between the annotator's signals on an item (opening it starts a new clock; every "
                           f"action, the reveal, finishing, and the item screen's heartbeat while in use), each gap "
                           f"capped at {telemetry.IDLE_CAP_SECONDS} s (Pearmut)",
            "wall_time": "clock time from the first signal on an item to the last (time away included)",
        },
        # Each check's power as set up: known answers met per participant, chances of flagging each kind of
        # participant (quality.engine.power), and the speed rule that stands beside them.
        "checks_power": [row.as_dict() for row in checks_power_of(campaign)],
        "checks_power_condition": power.SPEED_RULE,
        "annotators": [row.as_dict() for row in rows],
        "excluded": sorted(row.annotator for row in rows if row.user_id in left_out),
    }
    if not protocols.get(campaign.protocol).judges_machine_spans:
        del card["settings"]["decoys"], card["rules"]["rubber_stamp"]
        card["annotators"] = [{k: v for k, v in row.items() if k not in VERDICT_FIGURES} for row in card["annotators"]]
    return card
