"""`manage.py plan_study --from-campaign ID --outputs N --judges K [--difference D] [--format json]`: a study's
expert time, interval widths and power, planned from a pilot campaign."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from annotator.selectors.campaigns import campaign_named
from annotator.selectors.pilot import campaign_plan
from errors.commands import BaseCommand
from stats.planning import StudyPlan


def plan_dict(plan: StudyPlan, *, campaign_id: int, hourly_rate: float | None = None) -> dict[str, Any]:
    """The JSON the command prints (docs/guides/routing.md#planning-a-study): shares on the 0-1 scale."""
    out: dict[str, Any] = {
        "pilot_campaign": campaign_id, "outputs": plan.outputs, "judges": plan.judges,
        "seconds_per_span": plan.seconds_per_span, "seconds_per_output": plan.seconds_per_output,
        "expert_hours": plan.expert_hours, "ci_width": plan.ci_width, "difference": plan.difference,
        "power": plan.power, "pilot_accuracy": plan.pilot_accuracy,
    }
    if hourly_rate is not None:
        out["cost"] = None if plan.expert_hours is None else plan.expert_hours * hourly_rate
    return out


def _share(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} points"


class Command(BaseCommand):
    help = ("Plan a study of N outputs x K judges from a pilot (or finished) campaign: seconds per span and per "
            "output, expert hours, the 95% interval width of each evaluator's span accuracy, and the power to "
            "separate two evaluators whose accuracy differs by D.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from-campaign", required=True, help="The pilot campaign's id (or name).")
        parser.add_argument("--outputs", type=int, required=True, help="Outputs the study will judge.")
        parser.add_argument("--judges", type=int, required=True, help="Judges per output.")
        parser.add_argument("--difference", type=float, default=None,
                            help="Accuracy difference to detect, as a share (0.05 = 5 points).")
        parser.add_argument("--hourly-rate", type=float, default=None, help="Cost of an expert hour (adds 'cost').")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: object, **options: Any) -> None:
        campaign = campaign_named(str(options["from_campaign"]))
        plan = campaign_plan(campaign, outputs=options["outputs"], judges=options["judges"],
                             difference=options["difference"], seed=options["seed"])
        out = plan_dict(plan, campaign_id=campaign.pk, hourly_rate=options["hourly_rate"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(out, indent=1, ensure_ascii=False))
            return
        per_span, per_output = out["seconds_per_span"], out["seconds_per_output"]
        lines = [f"Plan from campaign {campaign.name!r}: {plan.outputs} outputs x {plan.judges} judges.",
                 f"Active time: {'—' if per_span is None else f'{per_span:.1f}'} s per span, "
                 f"{'—' if per_output is None else f'{per_output:.1f}'} s per output; expert hours: "
                 f"{'—' if plan.expert_hours is None else f'{plan.expert_hours:.1f}'}"
                 + (f"; cost {out['cost']:.2f}" if out.get("cost") is not None else "") + "."]
        lines += [f"  {name}: 95% interval of span accuracy about {_share(width)} wide"
                  for name, width in plan.ci_width.items()]
        if plan.power is not None:
            lines.append(f"Power to separate two evaluators {_share(plan.difference)} apart: {100 * plan.power:.0f}%.")
        self.stdout.write("\n".join(lines))
