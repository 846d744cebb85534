"""A Direct Assessment study recruited by a link, run by two participants in their own browsers: a training item
first, then real outputs and a BAD item (a degraded copy), each scored on the 0-100 slider by keyboard (digits,
arrows, PageUp/PageDown, Home/End), one by mouse, a score undone with u; the careful participant scores the BAD
item low and gets the pass code, the careless one scores everything 100 and gets the fail code. Then the report
compiles with DA's tables and figure, and Appraise's CSV holds each rating, the BAD one typed BAD."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import pytest
from django.core.management import call_command

from annotator.models import Assignment, Campaign, ItemScore, WorkAction
from corpus import protocols
from quality.models import PlantedOutput
from quality.services import CheckSettings
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.studies.box_study import CITIES, PLAYERS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASS, FAIL = "DA-PASS", "DA-FAIL"


def _study() -> Campaign:
    data = f.dataset("DA link data", input_headers=["Source"], output_header="Translation")
    made = []
    for i in range(7):
        home, away, player = CITIES[2 * i], CITIES[2 * i + 1], PLAYERS[i]
        made.append(f.item(
            data, f"seg{i}", f"The {home} beat the {away} {100 + i}-{90 + i} on Friday. {player} scored {20 + i}.",
            position=i + 1, system=f"sys{i % 2}",
            inputs={"Source": f"<b>{home}</b> {100 + i} | {away} {90 + i} | {player} {20 + i}"}))
    return campaign_create(CampaignSpec(
        name="DA link study", dataset=data, annotators=[], annotators_per_item=1, seed=4, protocol=protocols.DA,
        protocol_options={"reference": False},
        checks=CheckSettings(planted=0.3, vigilance_min=0.9, planted_near_duplicates=True,
                             qualification_items=(made[-1].pk,)),
        link=LinkSettings(items_per_participant=3, pass_code=PASS, fail_code=FAIL)))


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work')"
                           " && document.getElementById('work').dataset.busy === 'false'")


def _join(context, live_server, campaign: Campaign, pid: str):
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/join/{campaign.study_link.token}/?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID=s-{pid}")
    page.locator("#start").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/campaigns/{campaign.pk}/")
    page.locator("#resume").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/work/\d+/$"))
    return page


def _current(page) -> Assignment:
    pk = int(re.search(r"/work/(\d+)/$", page.url).group(1))
    return Assignment.objects.select_related("item").get(pk=pk)


def _shown(page) -> str:
    return page.locator("#score-value").inner_text()


def _careful(page, k: int, work: Assignment) -> int:
    """Digits on a BAD item (15); otherwise one way of the slider's keys per item, or the mouse."""
    if PlantedOutput.objects.filter(item=work.item).exists():
        keys, expected = ["1", "5"], 15
    elif k == 0:  # a score typed, then undone, then given by the page keys
        for key in ("4", "2"):
            page.keyboard.press(key)
        _idle(page)
        assert _shown(page) == "42"
        page.keyboard.press("u")
        page.wait_for_function("() => document.getElementById('score-value').textContent.trim() === '—'")
        _idle(page)
        keys, expected = ["End", "PageDown", "PageDown", "ArrowLeft"], 79
    elif k == 1:  # the mouse
        page.locator("#score-slider").fill("66")
        _idle(page)
        return 66
    else:
        keys, expected = ["Home", "PageUp", "PageUp", "PageUp", "PageUp", "PageUp", "PageUp", "PageUp", "PageUp",
                          "ArrowUp"], 81
    for key in keys:
        page.keyboard.press(key)
    _idle(page)
    assert _shown(page) == str(expected)
    return expected


def test_a_da_link_study_by_keyboard_and_mouse_with_training_and_bad_items(browser, live_server, settings,
                                                                            tmp_path):
    settings.RATELIMIT_USE_CACHE = "default"
    campaign = _study()
    given: dict[int, int] = {}
    codes = []
    for pid, careful in (("aaaa11112222", True), ("bbbb33334444", False)):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = _join(context, live_server, campaign, pid)
            k = 0
            while True:
                work = _current(page)
                _idle(page)
                html = page.content()
                assert "&lt;b&gt;" in html and "<b>Raptors" not in html  # the source's text, escaped
                if work.is_training:
                    assert "training item" in html
                if careful:
                    given[work.pk] = _careful(page, k, work)
                else:
                    page.keyboard.press("End")
                    _idle(page)
                    given[work.pk] = 100
                k += 1
                before = page.url
                page.keyboard.press("f")
                if work.is_training:  # a finished training item opens again (with its key, where it has one)
                    page.wait_for_function("() => document.getElementById('item-status').textContent"
                                           ".includes('finished')")
                    page.keyboard.press("n")
                page.wait_for_url(lambda url, before=before: url != before)
                if "/end/" in page.url:
                    break
            codes.append(page.locator("#completion-code").inner_text())
        finally:
            context.close()

    assert codes == [PASS, FAIL]
    everyone = Assignment.objects.filter(campaign=campaign)
    assert everyone.exclude(status=Assignment.Status.DONE).count() == 0
    assert everyone.filter(is_training=True).count() == 2 and everyone.filter(item__derived_from__isnull=False).exists()
    assert dict(ItemScore.objects.filter(assignment__campaign=campaign).values_list("assignment_id", "score")) == given
    assert WorkAction.objects.filter(assignment__campaign=campaign, kind=WorkAction.Kind.SCORE,
                                     undone=True).count() == 1
    assert all(x.ms is not None for x in WorkAction.objects.filter(assignment__campaign=campaign))

    out = io.StringIO()
    call_command("export_campaign", "--campaign", str(campaign.pk), "--format", "appraise-csv", stdout=out)
    rows = [line.split(",") for line in out.getvalue().splitlines()]
    real = everyone.filter(is_training=False)
    assert len(rows) == real.count()
    assert sorted(r[3] for r in rows).count("BAD") == real.filter(item__derived_from__isnull=False).count()

    if shutil.which("pdflatex") is None:
        pytest.skip("the report's LaTeX needs Debian's pdflatex (texlive-latex-recommended)")
    report = tmp_path / "report"
    call_command("export_report", "--campaign", str(campaign.pk), "--format", "latex", "-o", str(report),
                 stdout=io.StringIO())
    main = (report / "report.tex").read_text()
    for table in ("da_scores", "da_z_scores", "da_pairs", "da_agreement", "da_bad"):
        assert rf"\input{{tables/{table}}}" in main, table
    assert "figures/da_scores.pdf" in main
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=report,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert (report / "report.pdf").read_bytes().startswith(b"%PDF")
