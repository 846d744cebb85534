"""A small ESA^AI study: three source segments, each translated by two systems, an ensemble run whose spans
pre-fill ESA^AI items, and an ESA campaign with a crossed control arm (control-arm assignments are plain ESA).

Words are four letters apart by single spaces where offsets matter: word k starts at 5k. The machine marks:

    sysA seg1 "aaaa bbbb cccc"       bbbb severity 5 (Major)
    sysB seg1 "dddd eeee ffff gggg"  dddd severity 2 (Minor), ffff severity 4 (Major), "eeee ffff" severity 1
                                     (overlaps ffff: left out of the pre-fill)
    sysA seg2 "hhhh iiii"            none
    sysB seg2 "jjjj kkkk llll"       llll no severity (Minor)
    sysA seg3 "mmmm nnnn"            nnnn severity 3 (Minor)
    sysB seg3 "oooo pppp 😀 qqqq"    pppp severity 4 (Major); the emoji lies outside the BMP
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accounts.models import User
from annotator.models import Assignment, Campaign
from annotator.selectors.spans import added_spans
from annotator.services.actions import activity_record
from annotator.services.assignments import assignment_finish
from annotator.services.esa import (
    esa_missing_add,
    esa_open,
    esa_score_set,
    esa_span_add,
    esa_span_change,
    esa_span_delete,
    esa_spans_done,
)
from corpus.models import Dataset, ErrorSpan, Item
from evaluation.models import EvaluatorRun
from quality.services import CheckSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.control_arm_study import script_clock, spend

SOURCES = ("The first sentence.", "A second one.", "And a third.")
OUTPUTS = {
    "sysA": ("aaaa bbbb cccc", "hhhh iiii", "mmmm nnnn"),
    "sysB": ("dddd eeee ffff gggg", "jjjj kkkk llll", "oooo pppp 😀 qqqq"),
}
MACHINE = {  # (system, segment) -> [(text, severity)]
    ("sysA", 1): [("bbbb", 5)],
    ("sysB", 1): [("dddd", 2), ("ffff", 4), ("eeee ffff", 1)],
    ("sysB", 2): [("llll", None)],
    ("sysA", 3): [("nnnn", 3)],
    ("sysB", 3): [("pppp", 4)],
}


def word(k: int) -> tuple[int, int]:
    return 5 * k, 5 * k + 4


@dataclass
class EsaStudy:
    dataset: Dataset
    campaign: Campaign
    run: EvaluatorRun | None
    annotators: list[User]
    items: dict[tuple[str, int], Item] = field(default_factory=dict)
    machine: dict[tuple[str, int], list[ErrorSpan]] = field(default_factory=dict)

    def assignments(self, annotator: User) -> list[Assignment]:
        return list(Assignment.objects.filter(campaign=self.campaign, annotator=annotator)
                    .select_related("campaign", "item").order_by("order"))


def build_esa_study(annotators: list[User], *, name: str = "ESA study", control_arm: float = 0.5,
                    per_item: int = 2, with_run: bool = True, seed: int = 3,
                    protocol_options: dict | None = None, checks: CheckSettings | None = None) -> EsaStudy:
    data = f.dataset(f"{name} data", input_headers=["Source"], output_header="Translation")
    run = f.run(data, f"{name} ensemble") if with_run else None
    study = EsaStudy(dataset=data, campaign=None, run=run, annotators=annotators)  # type: ignore[arg-type]
    for segment, source in enumerate(SOURCES, start=1):
        for system, outputs in OUTPUTS.items():
            it = f.item(data, f"seg{segment}", outputs[segment - 1], system=system, inputs={"Source": source})
            study.items[(system, segment)] = it
            marks = MACHINE.get((system, segment), []) if run else []
            if run is not None:
                answer = f.annotation(it, run, score=2.0, score_label="Poor")
                study.machine[(system, segment)] = [
                    f.span_at(answer, k, text, severity=severity, explanation=f"machine says {text}")
                    for k, (text, severity) in enumerate(marks, start=1)]
    study.campaign = campaign_create(CampaignSpec(
        name=name, dataset=data, runs=[run] if run else [], annotators=annotators, aspects=["accuracy"],
        annotators_per_item=per_item, seed=seed, control_arm=control_arm, protocol="esa",
        protocol_options=protocol_options, checks=checks or CheckSettings()))
    return study


# Every output is seen once in each arm (control_arm 1.0, two annotators per output). Scores by (system, segment):
# ESA (control arm), ESA^AI. sysA: 60/70, 80/80, 50/70 -> ESA^AI mean 220/3, ESA 190/3; all of sysA 410/6.
# sysB: 30/50, 40/40, 20/30 -> all of sysB 210/6.
SCORES = {("sysA", 1): (60, 70), ("sysA", 2): (80, 80), ("sysA", 3): (50, 70),
          ("sysB", 1): (30, 50), ("sysB", 2): (40, 40), ("sysB", 3): (20, 30)}


def work_esa_study(study: EsaStudy) -> None:
    """ESA (control arm): mark `bbbb` Major on sysA seg1 and missing content Minor on sysB seg2, nothing else.
    ESA^AI: on sysB seg1 re-grade dddd (Minor -> Major) and resize ffff to "ffff gggg"; on sysB seg2 delete llll;
    on sysA seg2 add hhhh Minor; keep the rest. Working time: 40 s per ESA item, 20 s per ESA^AI item."""
    with script_clock() as clock:
        _work(study, clock)


def _work(study: EsaStudy, clock) -> None:
    where = {it.pk: key for key, it in study.items.items()}
    for a in Assignment.objects.filter(campaign=study.campaign).select_related("campaign", "item"):
        user, key = a.annotator, where[a.item_id]
        activity_record(assignment=a, opening=True)  # the screen's opening starts the item's clock
        esa_open(assignment=a, user=user)
        if a.in_control_arm:
            if key == ("sysA", 1):
                esa_span_add(assignment=a, user=user, start=5, end=9, severity="major")
            if key == ("sysB", 2):
                esa_missing_add(assignment=a, user=user, severity="minor")
        else:
            spans = {s.text: s for s in added_spans(a)}
            if key == ("sysB", 1):
                esa_span_change(span=spans["dddd"], assignment=a, user=user, severity="major", ms=1000)
                esa_span_change(span=spans["ffff"], assignment=a, user=user, start=word(2)[0], end=word(3)[1],
                                ms=2000)
            if key == ("sysB", 2):
                esa_span_delete(span=spans["llll"], assignment=a, user=user, ms=500)
            if key == ("sysA", 2):
                esa_span_add(assignment=a, user=user, start=0, end=4, severity="minor")
        spend(clock, a, user, 40 if a.in_control_arm else 20)  # active time, counted from the screen's signals
        a.refresh_from_db()
        esa_spans_done(assignment=a, user=user, ms=10_000 if a.in_control_arm else 4_000)
        a.refresh_from_db()
        esa_score_set(assignment=a, user=user, score=SCORES[key][0 if a.in_control_arm else 1])
        assignment_finish(assignment=a, user=user)
