"""A small MQM study: one talk of three segments translated by two systems, imported from Google's TSV, and an
MQM campaign on it (no evaluator runs: annotators mark the errors themselves)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from accounts.models import User
from annotator.models import Assignment, Campaign
from corpus.models import Dataset
from corpus.services.mqm_import import mqm_import
from studies.setup import CampaignSpec, campaign_create

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
SEGMENTS = [
    ("Hello world.", "Hallo Welt."),
    ("The <b>cat</b> & the dog.", "Die <b>Katze</b> & der Hund."),
    ("Good night.", "Gute Nacht 😀."),
]


@dataclass
class MqmStudy:
    dataset: Dataset
    campaign: Campaign
    annotators: list[User]

    def assignments(self, annotator: User) -> list[Assignment]:
        return list(Assignment.objects.filter(campaign=self.campaign, annotator=annotator).order_by("order"))


def build_mqm_study(tmp_path: Path, annotators: list[User], *, per_item: int = 1, name: str = "MQM study",
                    protocol_options: dict | None = None) -> MqmStudy:
    rows = [f"{system}\ttalk\t{n}\t{n}\tr1\t{src}\t{tgt if system == 'sysA' else tgt.upper()}\tNo-error\tNo-error\n"
            for system in ("sysA", "sysB") for n, (src, tgt) in enumerate(SEGMENTS, 1)]
    path = tmp_path / "talk.tsv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    mqm_import(path=path, dataset_name=f"{name} data", prefix="google")
    dataset = Dataset.objects.get(name=f"{name} data")
    campaign = campaign_create(CampaignSpec(name=name, dataset=dataset, annotators=annotators,
                                            annotators_per_item=per_item, seed=1, protocol="mqm",
                                            protocol_options=protocol_options))
    return MqmStudy(dataset=dataset, campaign=campaign, annotators=annotators)
