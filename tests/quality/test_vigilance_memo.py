"""The checks are computed once per state of a campaign's data: asked again, they are not recomputed; after any
change they read, they are."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.engine.phases import Phase
from annotator.models import Assignment
from annotator.services.judgments import judgment_set
from annotator.services.phases import assignments_move
from quality.selectors.vigilance import campaign_checks
from quality.services import CheckSettings
from tests.quality.conftest import build_study
from tests.quality.test_checks import _judge_all

pytestmark = pytest.mark.django_db


def test_asking_again_reads_only_the_fingerprint_and_a_change_is_seen(make_user):
    stamper = make_user("memo-stamper")
    study = build_study([stamper], name="memo study", checks=CheckSettings(decoys=0.3, vigilance_min=0.6))
    _judge_all(study, stamper, stamp=True, ms=200)
    first = campaign_checks(study.campaign)
    assert first[0].reasons, "a stamper who confirms every decoy is flagged"
    with CaptureQueriesContext(connection) as fresh:
        again = campaign_checks(study.campaign)
    assert again is first
    assert len(fresh) <= 7  # the fingerprint's aggregates, not the checks' own queries
    # the stamper changes their mind on every decoy: the checks see it at once
    decoys = study.campaign.check_spans.filter(role="decoy").select_related("span")
    for decoy in decoys:
        work = Assignment.objects.get(campaign=study.campaign, annotator=stamper, item=decoy.span.annotation.item)
        # a finished item keeps its verdicts: it is reopened first, as an undo reopens it
        assignments_move(Assignment.objects.filter(pk=work.pk), Phase.DONE, work.reopened_phase())
        work.refresh_from_db()
        judgment_set(assignment=work, span=decoy.span, user=stamper, ms=5000,
                     changes={"span_verdict": "not_error", "explanation_verdict": "not_error"})
    after = campaign_checks(study.campaign)
    assert after is not first
    assert after[0].figures.decoys.k == after[0].figures.decoys.n > first[0].figures.decoys.k
