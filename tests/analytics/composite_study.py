"""A study with every feature on at once, answered by the simulated server: the report's hardest case.

Ten box-score outputs (tests/quality/conftest.py), two runs both marked simulated, two judges per output,
decoys 0.3, planted 0.3, a control arm of 0.5, and three judges: a careful registered expert, a careful
participant who joined from Prolific, and a rubber-stamper who joined by the bare link (every machine span
confirmed in 300 ms, no planted error found: the quality checks flag them). Every assignment is worked through
the services: marked and revealed where unprimed, judged, the planted error added by the careful ones,
finished.
"""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import User
from annotator.models import Assignment, Campaign
from annotator.selectors.spans import item_errors
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_finish
from annotator.services.control_arm import assignment_reveal
from annotator.services.judgments import judgment_set
from quality.models import PlantedOutput
from quality.services import CheckSettings
from studies.models import Participant, StudyLink
from tests.quality.conftest import Study, build_study

SIMULATED_LABELS = ("composite-alpha", "composite-beta")


@dataclass
class Composite:
    study: Study
    careful: User
    prolific: User
    stamper: User

    @property
    def campaign(self) -> Campaign:
        return self.study.campaign


def _work(study: Study, judge: User, *, stamp: bool) -> None:
    wrong = {s.pk for s in study.wrong.values()}
    for work in Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order"):
        if work.in_control_arm:
            added_span_create(assignment=work, user=judge, start=0, end=3)  # "The": a mark made unprimed
            assignment_reveal(assignment=work, user=judge)
            work.refresh_from_db()
        rows, _ = item_errors(work)
        for row in rows:
            check = getattr(row.span, "check_span", None)
            real = row.span.pk in wrong or (check is not None and check.original_id in wrong)
            verdict = "error" if stamp or real else "not_error"
            judgment_set(assignment=work, span=row.span, user=judge, ms=300 if stamp else 4000,
                         changes={"span_verdict": verdict,
                                  "explanation_verdict": "correct" if verdict == "error" else "not_error"})
        planted = PlantedOutput.objects.filter(campaign=study.campaign, item=work.item).first()
        if planted and not stamp:
            added_span_create(assignment=work, user=judge, start=planted.start, end=planted.end, ms=4000)
        assignment_finish(assignment=work, user=judge)


def build_composite(make_user, *, exclude_flagged: bool = False) -> Composite:
    careful, prolific, stamper = make_user("careful-expert"), make_user("p-7f3a"), make_user("p-91bc")
    study = build_study([careful, prolific, stamper], name="composite", per_item=2,
                        checks=CheckSettings(decoys=0.3, planted=0.3, exclude_flagged=exclude_flagged),
                        control_arm=0.5)
    for run, label, judge in zip(study.runs, SIMULATED_LABELS, ("box judge one", "box judge two"), strict=True):
        run.simulated = True
        run.label = label
        run.save(update_fields=["simulated", "label"])
        run.evaluator.name = judge  # not the label, so that every occurrence of a label names the run
        run.evaluator.save(update_fields=["name"])
    link = StudyLink.objects.create(campaign=study.campaign, token="c0ffee" * 5 + "00", pass_code="PASS",
                                    items_per_participant=10)
    Participant.objects.create(link=link, user=prolific, prolific_pid="5f1a2b3c4d5e6f7a8b9c0d1e")
    Participant.objects.create(link=link, user=stamper)
    for judge, stamp in ((careful, False), (prolific, False), (stamper, True)):
        _work(study, judge, stamp=stamp)
    return Composite(study=study, careful=careful, prolific=prolific, stamper=stamper)
