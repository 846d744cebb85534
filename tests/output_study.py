"""One small study of every kind a command or download reads (an OpeNLGauge campaign with a crossed control arm and
gold spans, an ESA campaign, an MQM dataset, a finished metric comparison and DHP run, a campaign recruited by a
participant link),
with names that begin as spreadsheet formulas, for the tests that read every command's and download's output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotator.models import Campaign
from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from corpus.models import Dataset, Item, Source
from corpus.services.importing import items_import
from corpus.services.mqm_import import mqm_import
from dhp.models import DhpRun
from evaluation.models import EvaluatorRun
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories as f
from tests.annotator.study_links import link_study
from tests.conftest import SAMPLE_DATA
from tests.control_arm_study import build_study, work_study
from tests.esa_study import build_esa_study, work_esa_study
from tests.mqm_study import build_mqm_study

# What a spreadsheet runs: a cell beginning with one of these (OWASP's list, tab and CR included).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
MARK = "SUM(1+1)"  # each injected name holds it, so a test can tell where the injected values came out


def formula(n: int) -> str:
    return f"{FORMULA_STARTS[n % len(FORMULA_STARTS)]}{MARK}{n}"


@dataclass
class OutputStudy:
    campaign: Campaign  # OpeNLGauge, control arm, gold
    esa: Campaign
    mqm: Dataset
    sxs: Dataset  # side-by-side MQM ratings (tests/data/sxs_mqm.tsv), systems renamed to formulas
    job: ComparisonJob
    dhp: DhpRun
    linked: Campaign  # recruited by a participant link

    def values(self) -> list[dict[str, str]]:
        """The values each required option of a command gets, by its dest: once with the OpeNLGauge campaign and
        its dataset, once with the ESA campaign and the MQM dataset, once with the ESA campaign and the side-by-side
        MQM dataset (a command refuses a protocol it has not)."""
        common = {"reference": "gold:gold", "outputs": "6", "judges": "2", "job": str(self.job.pk),
                  "run": str(self.dhp.pk)}
        return [{**common, "campaign": str(c.pk), "from_campaign": str(c.pk), "dataset": d.name}
                for c, d in ((self.campaign, self.campaign.dataset), (self.esa, self.mqm),
                             (self.linked, self.linked.dataset), (self.esa, self.sxs))]


def _formula_systems(dataset: Dataset) -> None:
    for n, item in enumerate(Item.objects.filter(dataset=dataset).order_by("pk")):
        Item.objects.filter(pk=item.pk).update(system=formula(n))


def build_output_study(make_user, tmp_path: Path) -> OutputStudy:
    judges = [make_user(formula(0).replace("\t", "t").replace("\r", "r") + "j"), make_user("@judge2")]
    study = build_study(judges, name="=HYPERLINK(study)")
    work_study(study)
    dataset = study.campaign.dataset
    _formula_systems(dataset)
    EvaluatorRun.objects.filter(dataset=dataset).update(label=f"={MARK}alpha")
    for n, item in enumerate(study.items):
        f.gold(item, [(0, 4)], category=formula(n))
    esa = build_esa_study([make_user("=esa1"), make_user("+esa2")], name="-ESA", control_arm=1.0)
    work_esa_study(esa)
    _formula_systems(esa.dataset)
    mqm = build_mqm_study(tmp_path, [make_user("@mqm1")], name="+MQM")
    _formula_systems(mqm.dataset)
    Source.objects.filter(label="google:r1").update(label="mqm:r1")  # the label mqm_scores reads by default
    mqm_import(path=SAMPLE_DATA / "sxs_mqm.tsv", dataset_name="=SxS data", prefix="mqm")
    sxs = Dataset.objects.get(name="=SxS data")
    _formula_systems(sxs)
    items_import(path=SAMPLE_DATA / "meta_eval" / "dialogue.json", dataset_name="=dialogue", task_slug="dialogue")
    job = comparison_create(dataset=Dataset.objects.get(name="=dialogue"), metrics="length", check=False)
    assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE
    test = {"statistic": 3.0, "p": 0.04}
    dhp = DhpRun.objects.create(
        dataset=dataset, evaluator=f"={MARK}", metrics=[f"@{MARK}"], kinds=[f"-{MARK}typo"], samples=1,
        status=JobStatus.DONE,
        results={"perturbations": [{"kind": f"-{MARK}typo", "level": "character", "method": f"+{MARK}",
                                    "degree": "minor", "n_pairs": 3, "n_zero": 0, "tests": {f"@{MARK}": test},
                                    "p_hmp": 0.04, "p_hmp_ew": None, "D": 1.07, "D_ew": None}],
                 "summary": {"D_avg": 1.07, "D_min": 1.07}, "scores": []})
    linked = link_study(name="@linked")
    return OutputStudy(campaign=study.campaign, esa=esa.campaign, mqm=mqm.dataset, sxs=sxs,
                       job=ComparisonJob.objects.get(pk=job.pk), dhp=dhp, linked=linked.campaign)
