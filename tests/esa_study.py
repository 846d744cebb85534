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
from corpus.models import Dataset, ErrorSpan, Item
from evaluation.models import EvaluatorRun
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

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
                    protocol_options: dict | None = None) -> EsaStudy:
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
        protocol_options=protocol_options))
    return study
