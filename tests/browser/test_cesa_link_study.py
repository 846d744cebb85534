"""A contrastive ESA study run by participants from its link, in the browser, by keyboard: two inputs of three
outputs, two judges each, every input pre-filled by a run (ESA^AI) for one of its two judges and plain for the
other. Each participant opens the link, presses Start, works both screens output by output (a span selected and
graded, the spans said done, the score typed, f) and ends on their completion code. Then every screen is as
planned with the campaign, positions are within one for every system, the typed scores are stored, and the report
with its side-by-side and ESA sections compiles."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections import Counter, defaultdict

import pytest
from django.core.management import call_command

from annotator.models import Assignment, ComparisonUnit, EsaScore, UnitOutput
from corpus import protocols
from corpus.protocols import esa
from studies.models import PoolSlot
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCORES = {"oak": "90", "pine": "55", "yew": "20"}
MAJOR = next(t.key for t in esa.SEVERITIES if t.value == "major")
PASS = "CESA-LINK-OK"


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")


def _work_by_keyboard(page) -> int:
    """From the queue page: open the first output with Enter, then mark, close and score every output the
    participant is shown, until the end page; return how many."""
    page.locator("#resume").focus()
    page.keyboard.press("Enter")
    done = 0
    while True:
        page.wait_for_url(lambda url: "/work/" in url or "/end/" in url)
        if "/end/" in page.url:
            return done
        _idle(page)
        assert page.locator(".compare-output").count() == 2  # the screen's two other outputs, beside this one
        system = Assignment.objects.get(pk=int(re.search(r"/work/(\d+)/", page.url).group(1))).item.system
        before = page.locator("#esa-spans li.esa-span").count()
        page.keyboard.press("Escape")
        page.keyboard.press("s")
        for _ in range(11):  # past a pre-filled "Sentence": the "as"
            page.keyboard.press("ArrowRight")
        for _ in range(2):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press(MAJOR)
        page.wait_for_function(f"() => document.querySelectorAll('#esa-spans li.esa-span').length === {before + 1}")
        _idle(page)
        page.keyboard.press("d")
        page.wait_for_function("() => document.getElementById('esa-score').dataset.spansDone === 'true'")
        for key in SCORES[system]:
            page.keyboard.press(key)
        _idle(page)
        current = page.url
        page.keyboard.press("f")
        page.wait_for_url(lambda url, current=current: url != current)
        done += 1


def test_a_contrastive_esa_link_study_by_keyboard(page, live_server, tmp_path, settings):
    settings.RATELIMIT_USE_CACHE = "default"  # this process's cache: the joins of one test, from one address
    data = f.dataset("cesa link browser", input_headers=["Source"], output_header="Translation")
    run = f.run(data, "cesa link browser run")
    for k in range(2):
        for system in SCORES:
            item = f.item(data, f"g{k}", f"Sentence {k} as {system} wrote <i>it</i>.", system=system,
                          inputs={"Source": f"Satz {k}."})
            made = f.annotation(item, run, model="m", score=3.0, score_label="Fair")
            f.span_at(made, 1, "Sentence", explanation="Odd.", severity=4)
    campaign = campaign_create(CampaignSpec(
        name="cesa link by keyboard", dataset=data, runs=[run], aspects=["accuracy"], annotators=[],
        annotators_per_item=2, protocol=protocols.CESA, control_arm=1.0, seed=4,
        link=LinkSettings(items_per_participant=2, pass_code=PASS)))
    token = campaign.study_link.token
    page.set_default_timeout(15_000)
    for n in (1, 2):
        page.context.clear_cookies()
        page.goto(f"{live_server.url}/join/{token}/?PROLIFIC_PID=C{n}&STUDY_ID=cesa&SESSION_ID=s{n}")
        page.locator("#start").focus()
        page.keyboard.press("Enter")
        page.wait_for_url(f"{live_server.url}/campaigns/{campaign.pk}/")
        assert _work_by_keyboard(page) == 6
        assert page.locator("#completion-code").inner_text() == PASS

    assert not Assignment.objects.filter(campaign=campaign).exclude(status=Assignment.Status.DONE).exists()
    typed = {(s.assignment.annotator_id, s.assignment.item.system): s.score
             for s in EsaScore.objects.filter(assignment__campaign=campaign).select_related("assignment__item")}
    assert len(typed) == 6 and {v for v in typed.values()} == {int(s) for s in SCORES.values()}
    arms = defaultdict(set)
    planned = {(s["segment"], s["judge"]): s["items"] for s in campaign.study_link.screens}
    for unit in ComparisonUnit.objects.filter(campaign=campaign):
        rows = list(UnitOutput.objects.filter(unit=unit).select_related("assignment").order_by("position"))
        assert len(rows) == 3 and len({r.assignment.in_control_arm for r in rows}) == 1  # one arm per screen
        arms[unit.segment].add(rows[0].assignment.in_control_arm)
        lane = PoolSlot.objects.get(assignment=rows[0].assignment).judge
        assert [r.assignment.item_id for r in rows] == planned[(unit.segment, lane)]
    assert all(a == {True, False} for a in arms.values())  # pre-filled for one of each input's two judges
    placed: dict[str, Counter] = defaultdict(Counter)
    for row in UnitOutput.objects.filter(unit__campaign=campaign).select_related("assignment__item"):
        placed[row.assignment.item.system][row.position] += 1
    assert all(max(c[p] for p in (1, 2, 3)) - min(c[p] for p in (1, 2, 3)) <= 1 for c in placed.values()), placed

    if shutil.which("pdflatex") is None:
        pytest.skip("the report's LaTeX needs Debian's pdflatex (texlive-latex-recommended)")
    report = tmp_path / "report"
    call_command("export_report", "--campaign", str(campaign.pk), "--format", "latex", "-o", str(report),
                 stdout=io.StringIO())
    main = (report / "report.tex").read_text()
    assert r"\input{tables/pairwise_pairs}" in main and r"\input{tables/esa_scores}" in main
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=report,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
