"""Browser Back on the item screen: the page comes back showing the item as the server holds it (re-read when the
browser restores it from its back-forward cache, asked again otherwise), so the next key stores what the screen
shows. Another tab changes the verdict meanwhile, which a screen kept from before would not show."""

from __future__ import annotations

import re

import pytest

from annotator.models import Assignment, SpanJudgment
from annotator.selectors.spans import span_handle
from annotator.services.judgments import judgment_set
from corpus.models import AnnotationKind
from studies.setup import CampaignSpec, campaign_create
from tests.factories import annotation, dataset, item, run, span_at

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RESTORED = "window.addEventListener('pageshow', (e) => { if (e.persisted) window.__restored = true; });"


def _idle(page) -> None:
    """The screen has started (a card in focus) and nothing typed is on its way."""
    page.wait_for_function("() => document.querySelector('#errors .error-card.is-focus')"
                           " && document.getElementById('work').dataset.busy !== 'true'")


def _shown(card) -> tuple[str, str]:
    """The span and explanation verdicts the card shows pressed ("" when none)."""
    def pressed(field: str) -> str:
        chip = card.locator(f"button.chip[data-field='{field}'][aria-pressed='true']")
        return chip.get_attribute("data-value") if chip.count() else ""
    return pressed("span_verdict"), pressed("explanation_verdict")


def test_back_after_a_verdict_shows_the_stored_card_and_the_next_key_stores_what_it_shows(page, live_server, login,
                                                                                          make_user):
    expert = make_user("back-expert")
    data = dataset("back data", input_headers=["Data"], output_header="Text")
    judge = run(data, "back run")
    items = []
    for n in (1, 2):
        made = item(data, f"b{n}", f"The Olive Grove {n} is a cheap pub by the river.", position=n)
        merged = annotation(made, judge, kind=AnnotationKind.ENSEMBLE)
        span_at(merged, 0, "cheap", explanation="The price is high.", severity=3)
        span_at(merged, 1, "river", explanation="No river is given.", severity=2)
        items.append(made)
    campaign_create(CampaignSpec(name="back", dataset=data, runs=[judge], annotators=[expert], aspects=["accuracy"]))
    first, second = Assignment.objects.select_related("campaign", "item").filter(annotator=expert).order_by("order")
    cheap = next(s for s in first.item.annotations.get().spans.all() if s.text == "cheap")

    page.add_init_script(RESTORED)
    login(expert.username)
    page.goto(f"{live_server.url}/work/{first.pk}/")
    card = page.locator(f"#error-{span_handle(first.pk, cheap.pk)}")
    assert "is-focus" in card.get_attribute("class")
    page.keyboard.press("1")  # Error
    _idle(page)
    assert _shown(card) == ("error", "")
    assert page.locator("#work").get_attribute("data-next-url") == f"/work/{second.pk}/"
    page.keyboard.press("n")
    page.wait_for_url(re.compile(rf"/work/{second.pk}/$"))
    _idle(page)

    # Another tab of the same expert changes the verdict while this one shows the next item.
    judgment_set(assignment=first, span=cheap, user=expert, changes={"span_verdict": "not_error"})

    page.go_back()
    page.wait_for_url(re.compile(rf"/work/{first.pk}/$"))
    _idle(page)
    card = page.locator(f"#error-{span_handle(first.pk, cheap.pk)}")
    card.locator("button.chip[data-value='not_error'][aria-pressed='true']").wait_for()
    assert _shown(card) == ("not_error", "")
    page.keyboard.press("q")  # Correct, typed on the card as the screen shows it
    _idle(page)
    stored = SpanJudgment.objects.get(assignment=first, span=cheap)
    assert (stored.span_verdict, stored.explanation_verdict) == _shown(card) == ("not_error", "correct")
    assert "not saved" not in card.inner_text()
    print(f"back-forward cache restore: {bool(page.evaluate('() => window.__restored === true'))}")


def test_a_stale_save_rereads_the_whole_screen_before_the_next_key(page, live_server, login, make_user):
    expert = make_user("stale-expert")
    data = dataset("stale data", input_headers=["Data"], output_header="Text")
    judge = run(data, "stale run")
    made = item(data, "s1", "The Olive Grove is a cheap pub by the river.", position=1)
    merged = annotation(made, judge, kind=AnnotationKind.ENSEMBLE)
    cheap = span_at(merged, 0, "cheap", explanation="The price is high.", severity=3)
    river = span_at(merged, 1, "river", explanation="No river is given.", severity=2)
    campaign_create(CampaignSpec(name="stale", dataset=data, runs=[judge], annotators=[expert], aspects=["accuracy"]))
    work = Assignment.objects.select_related("campaign", "item").get(item=made)

    login(expert.username)
    page.goto(f"{live_server.url}/work/{work.pk}/")
    _idle(page)
    # Another tab judges both errors; this screen still shows neither.
    for span in (cheap, river):
        judgment_set(assignment=work, span=span, user=expert, changes={"span_verdict": "hallucination"})
    page.keyboard.press("1")  # typed against version 0 of the first card: refused (409)
    _idle(page)
    first = page.locator(f"#error-{span_handle(work.pk, cheap.pk)}")
    other = page.locator(f"#error-{span_handle(work.pk, river.pk)}")
    assert "not saved" in first.locator(".save-state").inner_text()
    # The card that was not typed on came back as stored too: the next key there lands on what it shows.
    assert _shown(other) == ("hallucination", "")
    page.keyboard.press("j")
    page.keyboard.press("w")  # Partially correct, on the second card
    _idle(page)
    stored = SpanJudgment.objects.get(assignment=work, span=river)
    assert (stored.span_verdict, stored.explanation_verdict) == _shown(other) == ("hallucination",
                                                                                 "partially_correct")


def test_a_page_restored_from_the_back_forward_cache_reads_the_item_again(page, live_server, login, make_user):
    """Where the browser keeps the page itself (its back-forward cache), `pageshow` says so (`persisted`); the
    event is sent here as the browser would, since this test's browser gives pages that say no-store no cache."""
    expert = make_user("bfcache-expert")
    data = dataset("bfcache data", input_headers=["Data"], output_header="Text")
    judge = run(data, "bfcache run")
    made = item(data, "c1", "The Olive Grove is a cheap pub by the river.", position=1)
    merged = annotation(made, judge, kind=AnnotationKind.ENSEMBLE)
    cheap = span_at(merged, 0, "cheap", explanation="The price is high.", severity=3)
    campaign_create(CampaignSpec(name="bfcache", dataset=data, runs=[judge], annotators=[expert],
                                 aspects=["accuracy"]))
    work = Assignment.objects.select_related("campaign", "item").get(item=made)
    login(expert.username)
    page.goto(f"{live_server.url}/work/{work.pk}/")
    _idle(page)
    judgment_set(assignment=work, span=cheap, user=expert, changes={"span_verdict": "no_span"})
    page.evaluate("() => window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))")
    page.keyboard.press("t")  # Incorrect: typed while the screen reads the item again, applied after it
    _idle(page)
    card = page.locator(f"#error-{span_handle(work.pk, cheap.pk)}")
    stored = SpanJudgment.objects.get(assignment=work, span=cheap)
    assert (stored.span_verdict, stored.explanation_verdict) == _shown(card) == ("no_span", "incorrect")
