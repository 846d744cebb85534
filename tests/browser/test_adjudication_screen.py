"""A reviewer adjudicates a campaign's disagreements by keyboard, undoes a step, and exports the labeled set."""

from __future__ import annotations

import json

import pytest

from annotator.models import Adjudication, AdjudicationEvent
from tests.adjudication_study import three_judge_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _focus(page, span_pk: int) -> None:
    """Move the focus with j to the card of `span_pk` (cards come in item order, then text order)."""
    order = page.locator("#disputes article.dispute").evaluate_all("els => els.map(e => e.id)")
    for _ in range(order.index(f"dispute-{span_pk}")):
        page.keyboard.press("j")
    page.locator(f"#dispute-{span_pk}.is-focus").wait_for()


def test_reviewer_adjudicates_by_keyboard_and_exports_labeled_set(page, live_server, login, make_user, tmp_path):
    judges = make_user("ann1"), make_user("ann2"), make_user("ann3")
    make_user("rita", role="researcher")
    built, found = three_judge_study(judges)
    b1, cheap = built.spans["b1_family"].pk, found["cheap"].pk
    login("rita")
    page.goto(f"{live_server.url}/campaigns/{built.campaign.pk}/adjudicate/")
    assert page.locator("#disputes article.dispute").count() == 4
    # Reviewers see who said what.
    assert "ann3" in page.locator(f"#dispute-{b1}").inner_text()

    _focus(page, b1)
    number = page.locator(f"#dispute-{b1} header strong").inner_text()
    page.keyboard.press("r")  # explanation: Vague
    card = page.locator(f"#dispute-{b1}")
    card.locator("button[aria-pressed='true']", has_text="Vague").wait_for()
    assert card.locator("header strong").inner_text() == number  # the card keeps its place in the queue
    assert "✓" in card.locator("button[aria-pressed='true']").inner_text()  # said in text, not only colour
    assert "Decided" in card.inner_text() and "(adjudicated)" in card.inner_text()
    page.keyboard.press("w")  # change of mind: Partially correct ...
    page.locator(f"#dispute-{b1} button[aria-pressed='true']", has_text="Partially correct").wait_for()
    page.keyboard.press("u")  # ... undone: Vague again
    page.locator(f"#dispute-{b1} button[aria-pressed='true']", has_text="Vague").wait_for()
    page.keyboard.press("Shift+U")  # redo: Partially correct, and undo once more
    page.locator(f"#dispute-{b1} button[aria-pressed='true']", has_text="Partially correct").wait_for()
    page.keyboard.press("u")
    page.locator(f"#dispute-{b1} button[aria-pressed='true']", has_text="Vague").wait_for()
    page.keyboard.press("m")
    page.keyboard.type("Data says family friendly; the explanation only hints at it.")
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('#adj-status').textContent.includes('note')")
    page.locator(f"#dispute-{b1} details.adj-history summary").click()  # the card's audit trail, loaded on open
    page.locator(f"#dispute-history-{b1} tr", has_text="Redo").wait_for()
    assert page.locator(f"#dispute-history-{b1} tr", has_text="(undone)").count() == 1

    page.goto(f"{live_server.url}/campaigns/{built.campaign.pk}/adjudicate/")
    _focus(page, cheap)
    page.keyboard.press("q")  # an added error has no explanation to judge: nothing happens
    assert "does not apply" in page.locator("#adj-status").inner_text()
    page.keyboard.press("1")  # keep ann3's added error
    page.locator(f"#dispute-{cheap} button[aria-pressed='true']", has_text="Error").wait_for()

    decision = Adjudication.objects.get(span_id=b1)
    assert (decision.explanation_verdict, decision.note, decision.reviewer.username) == (
        "vague", "Data says family friendly; the explanation only hints at it.", "rita")
    assert Adjudication.objects.get(span_id=cheap).span_verdict == "error"
    assert AdjudicationEvent.objects.filter(undone=True, field="explanation_verdict").count() == 1

    # The labeled set and its card, downloaded from the campaign page.
    page.goto(f"{live_server.url}/campaigns/{built.campaign.pk}/")
    with page.expect_download() as download:
        page.locator("#labeled-jsonl").click()
    path = tmp_path / "labeled.jsonl"
    download.value.save_as(path)
    records = {r["item_id"]: r for r in map(json.loads, path.read_text().splitlines())}
    i1 = records["i1"]
    b1_out = next(s for s in i1["errors"] if s["text"] == "is not family-friendly")
    assert (b1_out["explanation_verdict"], b1_out["method"]) == ("vague", "adjudicated")
    kept = next(s for s in i1["errors"] if s["origin"] == "added")
    assert (kept["text"], kept["found_by"], kept["method"]) == ("cheap", ["ann3"], "adjudicated")
    card = page.request.get(f"{live_server.url}/analytics/campaigns/{built.campaign.pk}/labeled.card.json").json()
    assert card["adjudication"]["decided"] == 2 and card["adjudication"]["open"] == 2
