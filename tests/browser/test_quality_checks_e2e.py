"""End to end: two scripted experts in the browser on one campaign with decoys and planted errors, a real
worker exporting it. The one who presses Error on everything within 300 ms is flagged within their first 30
spans; the one who judges from the truth and adds the planted error is not; Table 4 equals the same work on a
campaign without checks; the export holds neither decoys nor planted outputs."""

from __future__ import annotations

import json
import time

import pytest
from celery import current_app
from django.test import Client

from accounts.services.tokens import token_create
from analytics.models import ExportJob
from analytics.selectors import Scope, accuracy_report
from annotator.models import Assignment
from annotator.selectors.spans import judged_spans, span_handle
from quality.engine import figures
from quality.models import CheckSpan, PlantedOutput
from quality.selectors.vigilance import campaign_checks
from quality.services import CheckSettings
from tests.integration.conftest import celery_worker_factory, wait_for  # noqa: F401 - the fixture, used by name
from tests.quality.conftest import build_study
from tests.quality.test_checks import _judge_all

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SELECT_OFFSETS = """([start, end]) => {
  const root = document.getElementById('output-text');
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let seen = 0, node, started = false;
  while ((node = walker.nextNode())) {
    const next = seen + node.data.length;
    if (!started && start < next) { range.setStart(node, start - seen); started = true; }
    if (started && end <= next) { range.setEnd(node, end - seen); break; }
    seen = next;
  }
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  root.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
}"""


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")


def _work_queue(page, live_server, study, judge, decide, *, pause_ms: int, add_planted: bool) -> int:
    """Open each of the judge's items in order, give every card the verdicts `decide` picks (after `pause_ms`),
    add the planted error if asked, and finish; return how many machine spans were judged."""
    n = 0
    for work in Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order"):
        page.goto(f"{live_server.url}/work/{work.pk}/")
        cards = page.locator("#errors .error-card").evaluate_all("els => els.map(e => Number(e.dataset.span))")
        for index, handle in enumerate(cards):
            if index:
                page.keyboard.press("j")
                page.locator(f"#error-{handle}.is-focus").wait_for()
            if pause_ms:
                page.wait_for_timeout(pause_ms)
            span_key, explanation_key = decide(work, handle)
            page.keyboard.press(span_key)
            page.keyboard.press(explanation_key)
            n += 1
        _idle(page)
        planted = PlantedOutput.objects.filter(campaign=study.campaign, item_id=work.item_id).first()
        if planted is not None and add_planted:
            page.evaluate(SELECT_OFFSETS, [planted.start, planted.end])
            page.locator("#add-at-selection").wait_for(state="visible")
            page.keyboard.press("a")
            page.locator("#add-dialog[open]").wait_for()
            page.keyboard.press("Enter")
            page.locator("#add-dialog[open]").wait_for(state="detached")
        page.keyboard.press("f")
        page.wait_for_url(lambda url, pk=work.pk: f"/work/{pk}/" not in url)
    return n


def test_rubber_stamper_is_caught_and_checks_leave_table_4_alone(page, live_server, login, make_user, settings,
                                                                 tmp_path, celery_worker_factory,  # noqa: F811
                                                                 monkeypatch, researcher):
    exports = tmp_path / "exports"
    settings.EXPORT_DIR = exports
    worker = celery_worker_factory({"SPANJUDGE_EXPORT_DIR": str(exports)}).start()
    monkeypatch.setitem(current_app.conf, "task_default_queue", worker.queue)
    stamper, careful = make_user("stamper"), make_user("careful")
    study = build_study([stamper, careful], checks=CheckSettings(decoys=0.3, planted=0.4), opened=False)
    twin_judges = [make_user("twin-stamper"), make_user("twin-careful")]
    twin = build_study(twin_judges, name="twin", data=study.campaign.dataset, runs=study.runs, items=study.items)
    wrong = {s.pk for s in study.wrong.values()}

    def truth(work, handle):
        span = next(s for s in _spans_of(work) if span_handle(work.pk, s.pk) == handle)
        real = span.pk in wrong or CheckSpan.objects.filter(span=span, original_id__in=wrong).exists()
        return ("1", "q") if real else ("2", "y")

    # The campaign waits as a draft until the researcher, on the decoys page, opens it.
    assert study.campaign.status == "draft"
    login("rita")
    page.goto(f"{live_server.url}/campaigns/{study.campaign.pk}/decoys/")
    page.locator("#campaign-open").click()
    page.wait_for_url(f"**/campaigns/{study.campaign.pk}/decoys/")
    assert page.locator("#campaign-draft").count() == 0
    study.campaign.refresh_from_db()
    assert study.campaign.status == "open"
    page.context.clear_cookies()
    started = time.monotonic()
    login("stamper")
    stamped = _work_queue(page, live_server, study, stamper, lambda work, handle: ("1", "q"), pause_ms=0,
                          add_planted=False)
    page.context.clear_cookies()
    login("careful")
    judged = _work_queue(page, live_server, study, careful, truth, pause_ms=700, add_planted=True)
    browser_seconds = time.monotonic() - started
    for judge, stamp in zip(twin_judges, (True, False), strict=True):
        _judge_all(twin, judge, stamp=stamp, ms=300 if stamp else 4000)

    rows = {r.annotator: r for r in campaign_checks(study.campaign)}
    bad, good = rows["stamper"], rows["careful"]
    assert figures.RUBBER_STAMP in bad.reasons and figures.PLANTED in bad.reasons
    assert (figures.DECOYS in bad.reasons) == (bad.figures.decoys.n >= 3)  # 0/3 has an upper bound of 0.56
    assert good.reasons == [], good.as_dict()
    assert bad.figures.median_ms < 300 and good.figures.median_ms >= 700
    # the earliest point at which the rule fires on the stamper's verdicts, in the order given
    flagged_after = next(n for n in range(1, len(bad.figures.verdicts) + 1)
                         if figures.is_rubber_stamping(bad.figures.verdicts[:n]))
    assert flagged_after <= 30
    assert good.figures.planted.k == good.figures.planted.n == 3
    assert good.figures.decoys.k == good.figures.decoys.n

    checked_table = accuracy_report(Scope(campaign_id=study.campaign.pk), n_resamples=10)
    plain_table = accuracy_report(Scope(campaign_id=twin.campaign.pk), n_resamples=10)
    assert checked_table.pooled.matrix.counts == plain_table.pooled.matrix.counts
    assert {k: g.matrix.counts for k, g in checked_table.by_run.items()} == {
        k: g.matrix.counts for k, g in plain_table.by_run.items()}
    assert checked_table.pooled.matrix.total == 20

    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}")
    vigilance = api.get(f"/api/campaigns/{study.campaign.pk}/vigilance").json()
    assert [r["flagged"] for r in vigilance] == [False, True]  # careful, stamper
    created = api.post(f"/api/datasets/{study.campaign.dataset_id}/exports",
                       data=json.dumps({"format": "jsonl", "campaign_id": study.campaign.pk}),
                       content_type="application/json")
    assert created.status_code == 202, created.content
    job_id = created.json()["id"]
    assert wait_for(lambda: ExportJob.objects.get(pk=job_id).status == "done", timeout=90), \
        worker.log.read_text()[-3000:]
    job = api.get(f"/api/exports/{job_id}").json()
    data = next(n for n in job["files"] if not n.endswith(".card.json"))
    card = next(n for n in job["files"] if n.endswith(".card.json"))
    lines = [json.loads(x) for x in
             b"".join(api.get(f"/api/exports/{job_id}/files/{data}").streaming_content).decode().splitlines()]
    assert len(lines) == 10 and not any("planted" in r["item_id"] for r in lines)
    spans = [s for r in lines for a in r["annotations"] if a["kind"] != "human" for s in a["spans"]]
    assert len(spans) == 20  # the runs' spans only: no decoy
    assert sum(len(s["judgments"]) for s in spans) == 20  # each real span judged once
    qc = json.loads(b"".join(api.get(f"/api/exports/{job_id}/files/{card}").streaming_content))["quality_control"]
    assert {r["annotator"]: r["flagged"] for r in qc["annotators"]} == {"careful": False, "stamper": True}
    print(f"\nE2E figures: stamper judged {stamped} spans, flagged after {flagged_after} "
          f"(median {bad.figures.median_ms:.0f} ms, decoys {bad.figures.decoys.k}/{bad.figures.decoys.n}, "
          f"planted {bad.figures.planted.k}/{bad.figures.planted.n}, reasons {bad.reasons}); careful judged "
          f"{judged} spans (median {good.figures.median_ms:.0f} ms, decoys {good.figures.decoys.k}/"
          f"{good.figures.decoys.n}, planted {good.figures.planted.k}/{good.figures.planted.n}); Table 4 equal "
          f"with checks off ({checked_table.pooled.matrix.total} judgments); browser part {browser_seconds:.0f} s")


def _spans_of(work):
    return [s for s, _ in judged_spans(work)]
