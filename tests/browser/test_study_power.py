"""A link study with every check on, set up in the browser: the form shows the checks' power before anything is
made, the study runs at cap 50 with 8 participants, the consent page counts what the queue holds, and an
always-accept and an always-reject participant are flagged as the form predicted."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotator.models import Assignment, Campaign
from annotator.services.campaigns import ControlKey, campaign_control_set
from corpus.models import ErrorSpan
from quality.engine import power
from quality.engine.figures import DECOYS, PLANTED
from quality.selectors.vigilance import annotator_flags
from studies.models import Participant
from tests.quality.conftest import Api
from tests.studies.box_study import answer_everything, box_scores, judge_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASS, FAIL = "PASS-P8", "FAIL-P8"
# 17 box scores: b0 trains, 16 outputs x 4 participant judges at 8 each admit 8 participants (the cap is 50).
N_OUTPUTS, JUDGES, EACH, CAP = 17, 4, 8, 50
SETUP_MS = 120_000  # drawing decoys (with the audit's redraw) takes seconds on a shared CPU


def _fill(page, boxes) -> None:
    page.fill("#id_name", "Powered study")
    page.select_option("#id_dataset", label=boxes.data.name)
    page.locator("input[name=runs]").first.wait_for()
    for run in boxes.runs:
        page.check(f"input[name=runs][value='{run.pk}']")
    page.check("input[name=aspects][value=accuracy]")
    fields = {"#id_annotators_per_item": JUDGES, "#id_control_arm": "0.5", "#id_link_cap": CAP,
              "#id_items_per_participant": EACH, "#id_pass_code": PASS, "#id_fail_code": FAIL,
              "#id_consent": "You judge short game reports.", "#id_decoys": "0.3", "#id_planted": "0.3",
              "#id_qualification_items": "b0", "#id_qualification_pass": "0.5", "#id_seed": "3"}
    page.check("#id_link_enabled")
    for selector, value in fields.items():
        page.fill(selector, str(value))


def _shown_power(page) -> dict[str, dict[str, float]]:
    """The form's power table: per check, the percent it flags each kind of participant."""
    table = {}
    for check in ("decoys", "planted", "qualification"):
        row = page.locator(f"#power-{check}")
        table[check] = {b: float(row.locator(f".p-{b.replace('_', '-')}").inner_text().rstrip("%"))
                        for b in power.BEHAVIOURS}
    return table


def _join(token: str, pid: str) -> tuple[Client, Participant]:
    client = Client()
    ids = {"PROLIFIC_PID": pid, "STUDY_ID": "powered", "SESSION_ID": f"session-{pid}"}
    assert client.post(f"/join/{token}/", ids).status_code == 302
    return client, Participant.objects.get(prolific_pid=pid)


def test_a_link_study_shows_its_power_first_and_flags_as_predicted(page, live_server, login, researcher, settings):
    settings.RATELIMIT_USE_CACHE = "default"
    boxes = box_scores(N_OUTPUTS, "powered")
    researcher.set_password("pass-1234")
    researcher.save()
    login(researcher.username)
    page.goto(f"{live_server.url}/campaigns/new/")
    _fill(page, boxes)
    # Check the design: the power table comes back with the form, and nothing is made.
    with page.expect_navigation(timeout=SETUP_MS):  # the dry run draws the decoys as creation would
        page.click("#check-design", no_wait_after=True)
    page.locator("#checks-power").wait_for()
    shown = _shown_power(page)
    assert not Campaign.objects.filter(name="Powered study").exists()
    # 16 outputs x 2 machine spans at 0.3 ask for 14 decoys (7 of 8 outputs carry one), so 7 or so each;
    # round(0.3 x 8 / 0.7) = 3 planted copies: failing all 3 flags (0 of 3 is below 0.6).
    assert shown["decoys"]["accept_all"] == 100.0 and shown["decoys"]["reject_all"] == 0.0
    assert shown["planted"] == {"accept_all": 100.0, "reject_all": 100.0, "random": 100.0}
    with page.expect_navigation(timeout=SETUP_MS):  # Create campaign: decoys wait for review on their page
        page.click("#campaign-form button[type=submit]", no_wait_after=True)
    page.wait_for_url(re.compile(r"/campaigns/\d+/decoys/"))
    campaign = Campaign.objects.get(name="Powered study")
    api = Api(researcher)
    detail = api("get", f"/campaigns/{campaign.pk}").json()
    stored = {row["check"]: {b: round(100 * p, 1) for b, p in row["p_flag"].items()} for row in detail["checks_power"]}
    assert {c: v for c, v in stored.items() if c != "qualification"} == {
        c: v for c, v in shown.items() if c != "qualification"}
    # The training key, set before anyone has joined: the score span is the error, the assists span is not.
    spans = list(ErrorSpan.objects.filter(annotation__item=boxes.items[0]).order_by("annotation__source_id"))
    campaign_control_set(campaign=campaign, keys=[
        ControlKey(span_id=s.pk, span_verdict="error" if s.explanation == "The score is wrong." else "not_error")
        for s in spans])
    audit = api("get", f"/campaigns/{campaign.pk}/decoys/audit").json()
    assert api("post", f"/campaigns/{campaign.pk}/open", {"accept_audit": audit["level"] == "block"}).status_code == 200
    token = campaign.study_link.token

    # P8 reads the consent page in the browser: the count it gives is what the queue then holds.
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/join/{token}/?PROLIFIC_PID=P8&STUDY_ID=powered&SESSION_ID=session-P8")
    told = int(page.locator("#n-items").inner_text())
    page.click("#start")
    page.wait_for_url(f"{live_server.url}/campaigns/{campaign.pk}/")
    assert page.locator(".queue-row").count() == told == 1 + EACH + 3
    people = {"P8": Participant.objects.get(prolific_pid="P8")}
    clients = {pid: _join(token, pid) for pid in ("P1", "P2", "P3", "P4", "P5", "P6", "P7")}
    people |= {pid: participant for pid, (_, participant) in clients.items()}
    assert Participant.objects.filter(link__campaign=campaign).count() == 8

    # P1 accepts everything, P2 rejects everything, slowly enough that speed flags neither; the rest work carefully.
    for pid, person in people.items():
        for work in Assignment.objects.filter(campaign=campaign, annotator=person.user).order_by("order"):
            if pid == "P1":
                answer_everything(work, verdict="error", ms=2500)
            elif pid == "P2":
                answer_everything(work, verdict="not_error", ms=2500)
            else:
                judge_item(work, stamp=False, ms=2500)
    print(f"\nThe form's power (percent flagged): {shown}")
    for pid, behaviour in (("P1", "accept_all"), ("P2", "reject_all")):
        reasons = annotator_flags(campaign, people[pid].user)
        print(f"{pid} ({behaviour}) flagged for: {reasons}")
        for check, reason in (("decoys", DECOYS), ("planted", PLANTED)):
            assert (reason in reasons) == (shown[check][behaviour] == 100.0), (pid, check, reasons)
    codes = {pid: clients[pid][0].get(f"/campaigns/{campaign.pk}/end/").content.decode() for pid in clients}
    assert f'id="completion-code">{FAIL}<' in codes["P1"] and f'id="completion-code">{FAIL}<' in codes["P2"]
    assert all(f'id="completion-code">{PASS}<' in codes[pid] for pid in ("P3", "P4", "P5", "P6", "P7"))
    # P8's end page in the browser agrees with the consent page and the queue.
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/end/")
    assert int(page.locator("#n-judged").inner_text()) == told
    assert page.locator("#completion-code").inner_text() == PASS
