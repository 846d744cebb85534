"""The new-campaign form in a browser: picking a dataset swaps in its runs (htmx on the select's widget) and keeps
what was typed, the protocol picked included; the form is sent and the campaign made."""

from __future__ import annotations

import re

import pytest

from annotator.models import Campaign
from tests.factories import build_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_picking_a_dataset_lists_its_runs_and_the_campaign_is_made(page, live_server, login, make_user):
    ann = make_user("cf-ann")
    built = build_campaign([ann], name="browser form")
    make_user("cf-res", role="researcher", password="pass-1234")
    login("cf-res")
    page.goto(f"{live_server.url}/campaigns/new/")
    assert page.locator("input[name=runs]").count() == 0
    page.fill("#id_name", "Picked in a browser")
    page.select_option("#id_protocol", "esa")
    page.select_option("#id_dataset", label=built.dataset.name)
    page.locator("input[name=runs]").first.wait_for()
    assert page.locator("input[name=runs]").count() == len(built.runs)
    assert page.input_value("#id_name") == "Picked in a browser"  # the swap kept what was typed
    assert page.input_value("#id_protocol") == "esa"
    page.check(f"input[name=runs][value='{built.runs[0].pk}']")
    page.check("input[name=aspects][value=accuracy]")
    page.check(f"input[name=annotators][value='{ann.pk}']")
    page.fill("#id_annotators_per_item", "1")
    page.click("#campaign-form button[type=submit]")
    page.wait_for_url(re.compile(r"/campaigns/\d+/"))
    campaign = Campaign.objects.get(name="Picked in a browser")
    assert list(campaign.runs.values_list("pk", flat=True)) == [built.runs[0].pk]
    assert campaign.protocol == "esa"
