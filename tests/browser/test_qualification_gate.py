"""The qualification gate in the browser: training first, the key after each training item, real work after
the pass mark."""

from __future__ import annotations

import pytest

from annotator.models import Assignment
from annotator.services.campaigns import ControlKey, campaign_control_set
from quality.models import Qualification
from quality.services import CheckSettings
from tests.quality.conftest import build_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_training_key_and_pass_gate_in_the_browser(page, live_server, login, make_user):
    judge = make_user("trainee")
    base = build_study([make_user("other")], name="gate base", n_items=3)
    training = base.items[0]
    study = build_study([judge], name="gate", data=base.campaign.dataset, runs=base.runs, items=base.items,
                        checks=CheckSettings(qualification_items=(training.pk,), qualification_pass=1.0))
    campaign_control_set(campaign=study.campaign, keys=[
        ControlKey(base.wrong[training.pk].pk, "error", "correct", note="The data gives another score."),
        ControlKey(base.false_alarm[training.pk].pk, "not_error", "incorrect", note="The assists are in the data."),
    ])
    first, real = Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order")[:2]
    assert first.is_training and not real.is_training
    login("trainee")
    page.goto(f"{live_server.url}/work/{real.pk}/")
    assert "Finish the training items first" in page.locator("#qualification-gate").inner_text()

    page.goto(f"{live_server.url}/work/{first.pk}/")
    assert "Training item" in page.locator("#training-key").inner_text()
    # Reading order: the score (the real error) comes before the assists (the false alarm).
    page.keyboard.press("1")
    page.keyboard.press("q")
    page.keyboard.press("j")
    page.keyboard.press("2")
    page.keyboard.press("t")
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")
    page.keyboard.press("f")
    page.locator("#training-key table").wait_for()
    key = page.locator("#training-key").inner_text()
    assert "Answer key of this training item" in key and "The assists are in the data." in key
    assert page.locator("#training-key tr.key-right").count() == 2
    assert Qualification.objects.get(campaign=study.campaign, annotator=judge).passed is True

    page.goto(f"{live_server.url}/work/{real.pk}/")
    page.locator("#errors .error-card.is-focus").wait_for()
    assert page.locator("#qualification-gate").count() == 0
