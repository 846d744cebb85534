"""An item's first open is claimed once (a conditional update on Assignment.opened_at): its protocol's first-open
hook, MQM's and ESA^AI's pre-fill, runs once however many opens arrive together."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from annotator.models import Assignment
from annotator.services.assignments import assignment_open
from corpus.models import Dataset, ErrorSpan
from studies.setup import CampaignSpec, campaign_create
from tests import factories as make
from tests.mqm_study import build_mqm_study


def _prefilled_mqm(tmp_path, make_user) -> Assignment:
    annotator = make_user("pia")
    base = build_mqm_study(tmp_path, [make_user("other")], name="with runs")
    dataset = Dataset.objects.get(pk=base.dataset.pk)
    item = dataset.items.get(external_id="talk:1", system="sysA")  # "Hallo Welt."
    machine = make.run(dataset, "mt-ensemble")
    answer = make.annotation(item, machine)
    make.span_at(answer, 1, "Welt", category="accuracy/mistranslation", severity=5)
    make.span_at(answer, 2, "Hallo", category="Other", severity=2)
    campaign = campaign_create(CampaignSpec(name="prefilled", dataset=dataset, runs=[machine], aspects=["accuracy"],
                                            annotators=[annotator], protocol="mqm"))
    return Assignment.objects.select_related("campaign", "item").get(campaign=campaign, item=item)


def _copies(assignment: Assignment) -> int:
    return ErrorSpan.objects.filter(annotation__source__added__campaign_id=assignment.campaign_id).count()


def test_assignment_open_claims_the_first_open_only(db, tmp_path, make_user):
    assignment = _prefilled_mqm(tmp_path, make_user)
    assert assignment.opened_at is None
    assert assignment_open(assignment=assignment, user=assignment.annotator) is True
    assert assignment_open(assignment=assignment, user=assignment.annotator) is False
    assert _copies(assignment) == 2
    assert Assignment.objects.get(pk=assignment.pk).opened_at is not None


@pytest.mark.django_db(transaction=True)
def test_assignment_open_prefills_once_when_two_opens_arrive_together(tmp_path, make_user):
    assignment = _prefilled_mqm(tmp_path, make_user)
    barrier = threading.Barrier(2)
    claimed: list[bool] = []

    def open_item() -> None:
        try:
            mine = Assignment.objects.select_related("campaign", "item", "annotator").get(pk=assignment.pk)
            barrier.wait()
            claimed.append(assignment_open(assignment=mine, user=mine.annotator))
        finally:
            connection.close()

    threads = [threading.Thread(target=open_item) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == [False, True]
    assert _copies(assignment) == 2  # "Welt" and "Hallo", once each


def test_an_item_opened_by_its_researcher_is_not_claimed(db, tmp_path, make_user, client):
    assignment = _prefilled_mqm(tmp_path, make_user)
    client.force_login(make_user("rita", role="researcher"))
    assert client.get(f"/work/{assignment.pk}/").status_code == 200
    assert Assignment.objects.get(pk=assignment.pk).opened_at is None and _copies(assignment) == 0
