"""The campaign analytics page at 1280 and 390 px: nothing wider than its card, every table reachable by
scrolling inside its card with the first column kept in view; sections fold and open from the contents."""

from __future__ import annotations

import os

import pytest

from tests.analytics.conftest import study  # noqa: F401  (the hand-built campaign, with its verdicts)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every element either fits inside its card or sits in a horizontal scroller that does; every table's scroller
# lets it be scrolled (overflow-x auto) and keeps its first column sticky.
_PROBLEMS = """() => {
  const out = [];
  const scroller = (el, card) => {
    for (let p = el.parentElement; p && p !== card; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') return p;
    }
    return null;
  };
  for (const card of document.querySelectorAll('main .card')) {
    const edge = card.getBoundingClientRect().right + 1;
    for (const el of card.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= edge) continue;
      const box = scroller(el, card);
      if (!box || box.getBoundingClientRect().right > edge) {
        const where = card.id || card.className;
        out.push(`${el.tagName.toLowerCase()} in #${where} ends at ${Math.round(r.right)} > ${Math.round(edge)}`);
      }
    }
    for (const table of card.querySelectorAll('table')) {
      const box = scroller(table, card);
      const tableRight = table.getBoundingClientRect().right;
      if (tableRight > edge && !box) out.push(`table in #${card.id} cut off`);
      const first = table.querySelector('tbody td:first-child');
      if (first && getComputedStyle(first).position !== 'sticky') {
        out.push(`table in #${card.id}: first column not sticky`);
      }
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth) out.push('page scrolls sideways');
  return out.slice(0, 12);
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_campaign_analytics_page_fits_its_cards(browser, live_server, study, make_user, width):  # noqa: F811
    make_user("rita-browser", role="researcher")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "rita-browser")
        page.fill("#id_password", "pass-1234")
        page.press("#id_password", "Enter")
        page.wait_for_url(f"{live_server.url}/")
        page.goto(f"{live_server.url}/analytics/campaigns/{study.campaign.pk}/?resamples=50")
        # folded by default except Table 4
        assert page.locator("details#table-accuracy").get_attribute("open") is not None
        assert page.locator("details#table-overlap").get_attribute("open") is None
        # the overview's first table (evaluators), then its quality table (vigilance per annotator)
        overview = page.locator("#overview table")
        assert overview.count() == 2 and all(overview.nth(k).is_visible() for k in range(2))
        assert "decoys rejected" in overview.nth(1).inner_text().lower()
        assert page.locator("#ranking table").first.is_visible()
        # a link in the contents opens its folded section
        page.locator("#contents a[href='#table-overlap']").click()
        page.wait_for_function("document.querySelector('details#table-overlap').open")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        problems = page.evaluate(_PROBLEMS)
        if os.environ.get("SPANJUDGE_SCREENSHOTS"):
            page.screenshot(path=f"{os.environ['SPANJUDGE_SCREENSHOTS']}/analytics-{width}.png", full_page=True)
        assert problems == []
        # the overlap table is wider than a phone: its scroller scrolls, and the first column stays put
        box = page.locator("#table-overlap .table-scroll")
        if width == 390:
            assert box.evaluate("b => b.scrollWidth > b.clientWidth")
            first = page.locator("#table-overlap tbody td:first-child").first
            before = first.bounding_box()["x"]
            box.evaluate("b => b.scrollLeft = 400")
            assert abs(first.bounding_box()["x"] - before) < 1
    finally:
        context.close()
