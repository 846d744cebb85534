"""An ESA campaign's figures equal what the code gave before MQM and ESA shared one statistics core (pinned in
tests/data/system_figures_pinned.json), and the real ratings of MQM and ESA leave derived items out."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from analytics.selectors.esa import campaign_esa
from analytics.selectors.mqm import campaign_ratings, score_rows
from annotator.models import Assignment
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_finish
from corpus.protocols import mqm
from quality.models import Qualification
from tests import factories as f
from tests.esa_study import build_esa_study, work_esa_study
from tests.mqm_study import build_mqm_study

pytestmark = pytest.mark.django_db
PINNED = json.loads((Path(__file__).parents[1] / "data" / "system_figures_pinned.json").read_text())["esa_study"]


def _as_json(result: dict) -> dict:
    return {k: v for k, v in json.loads(json.dumps(result)).items() if k != "campaign"}


def _equal(now: object, pinned: object) -> bool:
    """Equal, a float to within a few units in its last place: the campaign's outputs reach the correlations in
    the order the database and the process give them, and a sum in another order may differ in its last bit.
    Every other value (counts, systems, ranks, flags) must be exactly what was pinned."""
    if isinstance(now, float) and isinstance(pinned, float):
        return math.isclose(now, pinned, rel_tol=1e-14, abs_tol=1e-300)
    if isinstance(now, dict) and isinstance(pinned, dict):
        return now.keys() == pinned.keys() and all(_equal(now[k], pinned[k]) for k in now)
    if isinstance(now, list) and isinstance(pinned, list):
        return len(now) == len(pinned) and all(_equal(a, b) for a, b in zip(now, pinned, strict=True))
    return type(now) is type(pinned) and now == pinned


def test_esa_study_figures_equal_todays_to_the_last_digit(make_user):
    study = build_esa_study([make_user("esa-a"), make_user("esa-b")], name="ESA figures", control_arm=1.0)
    work_esa_study(study)
    assert _equal(_as_json(campaign_esa(study.campaign)), PINNED["counted"])
    Qualification.objects.create(campaign=study.campaign, annotator=study.annotators[1], score=0.1, passed=False)
    assert _equal(_as_json(campaign_esa(study.campaign, exclude_flagged=True)), PINNED["left_out"])


def test_a_derived_item_is_no_rating_of_its_system(tmp_path, make_user):
    """A planted copy (an item derived from a real one, shown to one annotator) with a Major error marked on it
    and finished changes no MQM figure."""
    ann = make_user("mia")
    study = build_mqm_study(tmp_path, [ann], name="MQM derived")
    before = score_rows(campaign_ratings(study.campaign))
    for a in study.assignments(ann):
        assignment_finish(assignment=a, user=ann)
    real = score_rows(campaign_ratings(study.campaign))
    assert {r["system"]: r["score"] for r in real} == {"sysA": 0, "sysB": 0} and before == []
    original = study.assignments(ann)[0].item
    copy = f.item(study.dataset, f"{original.external_id}-copy", original.output, system=original.system,
                  inputs=original.inputs, extra=original.extra, derived_from=original)
    planted = f.assignment(study.campaign, ann, copy, order=99)
    added_span_create(assignment=planted, user=ann, start=0, end=3, category="Accuracy/Mistranslation",
                      severity=mqm.SEVERITY_CODES["major"])
    assignment_finish(assignment=planted, user=ann)
    assert Assignment.objects.get(pk=planted.pk).status == Assignment.Status.DONE
    assert score_rows(campaign_ratings(study.campaign)) == real
