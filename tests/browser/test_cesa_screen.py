"""Contrastive ESA in the browser, by keyboard: screens of three outputs of one input, half of the judge's screens
pre-filled by a run (ESA^AI) and half plain. On each output the judge selects a span (s, arrows, Shift+arrows) and
grades it, says the spans are done (d), types the score, finishes (f) and lands on the screen's next output, which
shows the finished one beside it; c moves the focus on and back. Then every screen is finished, each output's score
is what was typed, and the campaign's side-by-side figures rank the systems by those scores."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command

from annotator.models import Assignment, ComparisonUnit, EsaScore, UnitOutput
from corpus import protocols
from corpus.protocols import esa
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCORES = {"oak": "90", "pine": "55", "yew": "20"}
MAJOR = next(t.key for t in esa.SEVERITIES if t.value == "major")


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")


def test_a_contrastive_esa_study_by_keyboard(page, live_server, login, make_user):
    judge = make_user("cesa-kbd")
    data = f.dataset("cesa browser", input_headers=["Source"], output_header="Translation")
    run = f.run(data, "cesa browser run")
    for k in range(2):
        for system in SCORES:
            item = f.item(data, f"g{k}", f"Sentence {k} as {system} wrote <i>it</i>.", system=system,
                          inputs={"Source": f"Satz {k}."})
            made = f.annotation(item, run, model="m", score=3.0, score_label="Fair")
            f.span_at(made, 1, "Sentence", explanation="Odd.", severity=4)
    campaign = campaign_create(CampaignSpec(name="cesa by keyboard", dataset=data, runs=[run], aspects=["accuracy"],
                                            annotators=[judge], annotators_per_item=1, protocol=protocols.CESA,
                                            control_arm=0.5, seed=2))
    page.set_default_timeout(15_000)
    login(judge.username)
    queue = list(Assignment.objects.filter(campaign=campaign).order_by("order"))
    page.goto(f"{live_server.url}/work/{queue[0].pk}/")
    for n, assignment in enumerate(queue):
        page.wait_for_url(re.compile(rf"/work/{assignment.pk}/$"))
        _idle(page)
        assert page.locator(".compare-output").count() == 2
        if n % 3 == 1:  # the focus moves on with c and comes back to this output with c, c
            page.keyboard.press("c")
            page.wait_for_url(re.compile(r"\?unit=\d+$"))
            _idle(page)
            page.keyboard.press("c")
            page.wait_for_url(re.compile(r"\?unit=\d+$"))
            _idle(page)
            page.keyboard.press("c")
            page.wait_for_url(re.compile(rf"/work/{assignment.pk}/\?unit=\d+$"))
            _idle(page)
        before = page.locator("#esa-spans li.esa-span").count()
        page.keyboard.press("Escape")
        page.keyboard.press("s")
        for _ in range(11):  # past the run's pre-filled "Sentence": the "as"
            page.keyboard.press("ArrowRight")
        for _ in range(2):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press(MAJOR)
        page.wait_for_function(f"() => document.querySelectorAll('#esa-spans li.esa-span').length === {before + 1}")
        _idle(page)
        page.keyboard.press("d")
        page.wait_for_function("() => document.getElementById('esa-score').dataset.spansDone === 'true'")
        for key in SCORES[assignment.item.system]:
            page.keyboard.press(key)
        _idle(page)
        page.keyboard.press("f")
    page.wait_for_url(re.compile(r"/campaigns/"))
    assert not Assignment.objects.filter(campaign=campaign).exclude(status=Assignment.Status.DONE).exists()
    typed = {s.assignment.item.system: s.score for s in EsaScore.objects.filter(assignment__campaign=campaign)
             .select_related("assignment__item")}
    assert typed == {system: int(score) for system, score in SCORES.items()}
    for unit in ComparisonUnit.objects.filter(campaign=campaign):
        assert len({o.assignment.in_control_arm for o in UnitOutput.objects.filter(unit=unit)
                    .select_related("assignment")}) == 1
    out = io.StringIO()
    call_command("pairwise_scores", "--campaign", str(campaign.pk), "--resamples", "20", stdout=out)
    assert [s["system"] for s in json.loads(out.getvalue())["systems"]] == ["oak", "pine", "yew"]
