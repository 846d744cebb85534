"""An MQM and an ESA study recruited by a link, each run by two participants in their own browsers: they join,
mark, score and finish every item by keyboard, and get the pass code; the campaign's export then holds exactly
what each of them marked (MQM: Google's TSV; ESA: Pearmut's log), nothing more."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from annotator.models import Assignment, Campaign
from corpus.models import Dataset
from corpus.protocols import esa, mqm
from corpus.services.mqm_import import mqm_import
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.mqm_study import HEADER, SEGMENTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASS = "LINK-PASS-1"
MQM_PLAN = [("1", "1", "e"), ("2", "1", "w"), None]  # per item in queue order: category digits and severity key
ESA_PLAN = [("span", "w", ("7", "5")), ("missing", "e", ("3", "0"))]  # a span or missing content, then the score
ESA_OUTPUTS = ("Der Hund schlaeft im Garten.", "Die Katze sitzt auf dem Dach.", "Es regnet heute den ganzen Tag.",
               "Wir fahren morgen nach Berlin.")


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work')"
                           " && document.getElementById('work').dataset.busy === 'false'")  # set once the script runs


def _join(context, live_server, campaign: Campaign, pid: str):
    page = context.new_page()
    page.set_default_timeout(10_000)
    query = f"?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID=se-{pid}"
    page.goto(f"{live_server.url}/join/{campaign.study_link.token}/{query}")
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


def _select_first_word(page, output: str) -> str:
    word = output.split()[0]
    page.keyboard.press("s")
    for _ in word:
        page.keyboard.press("Shift+ArrowRight")
    assert page.evaluate("() => window.getSelection().toString()") == word
    return word


def _finish_and_next(page, live_server, campaign: Campaign, last: bool) -> None:
    before = page.url
    page.keyboard.press("f")
    if last:
        page.wait_for_url(f"{live_server.url}/campaigns/{campaign.pk}/end/")
    else:
        page.wait_for_url(lambda url: "/work/" in url and url != before)


def _mqm_item(page, plan) -> tuple:
    a = _current(page)
    _idle(page)
    if plan is None:
        return (a.item.system, a.item.output, None, "No-error", "no-error")
    word = _select_first_word(page, a.item.output)
    page.keyboard.press("Enter")
    first, second, severity_key = plan
    for key in (first, second, severity_key):
        page.keyboard.press(key)
    page.wait_for_function("() => document.querySelectorAll('#mqm-errors li.mqm-error').length === 1")
    _idle(page)
    top = mqm.DEFAULT_TREE[int(first) - 1]
    severity = next(t.value for t in mqm.SEVERITIES if t.key == severity_key)
    return (a.item.system, a.item.output, word, f"{top.name}/{top.children[int(second) - 1]}", severity)


def _esa_item(page, plan) -> tuple:
    a = _current(page)
    _idle(page)
    kind, severity_key, score_keys = plan
    output = a.item.output
    if kind == "span":
        word = _select_first_word(page, output)
        page.keyboard.press(severity_key)
        span = (0, len(word) - 1)  # Pearmut counts boxes, both ends inclusive
    else:
        page.keyboard.press(esa.MISSING_KEY)
        page.keyboard.press(severity_key)
        span = (len(output), len(output))  # the box after the text
    page.wait_for_function("() => document.querySelectorAll('#esa-spans li.esa-span').length === 1")
    _idle(page)
    page.keyboard.press("d")
    page.wait_for_function("() => document.getElementById('esa-score').dataset.spansDone === 'true'")
    for key in score_keys:
        page.keyboard.press(key)
    _idle(page)
    severity = next(t.value for t in esa.SEVERITIES if t.key == severity_key)
    return (output, int("".join(score_keys)), (*span, severity))


def _mqm_study(tmp_path: Path) -> Campaign:
    rows = [f"{system}\ttalk\t{n}\t{n}\tr1\t{src}\t{tgt if system == 'sysA' else tgt.upper()}\tNo-error\tNo-error\n"
            for system in ("sysA", "sysB") for n, (src, tgt) in enumerate(SEGMENTS, 1)]
    path = tmp_path / "talk.tsv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    mqm_import(path=path, dataset_name="MQM link data", prefix="google")
    return campaign_create(CampaignSpec(
        name="MQM link study", dataset=Dataset.objects.get(name="MQM link data"), annotators=[],
        annotators_per_item=1, seed=4, protocol="mqm", link=LinkSettings(items_per_participant=3, pass_code=PASS)))


def _esa_study() -> Campaign:
    data = f.dataset("ESA link data", input_headers=["Source"], output_header="Translation")
    for n, output in enumerate(ESA_OUTPUTS, 1):
        f.item(data, f"seg{n}", output, position=n, system="sysA", inputs={"Source": f"Source sentence {n}."})
    return campaign_create(CampaignSpec(
        name="ESA link study", dataset=data, annotators=[], annotators_per_item=1, seed=4, protocol="esa",
        link=LinkSettings(items_per_participant=2, pass_code=PASS)))


def _mqm_export(campaign: Campaign) -> dict[str, Counter]:
    out = io.StringIO()
    call_command("export_annotations", "--campaign", str(campaign.pk), "--format", "mqm-tsv", stdout=out,
                 stderr=io.StringIO())
    lines = out.getvalue().splitlines()
    columns = lines[0].split("\t")
    by_rater: dict[str, Counter] = {}
    for line in lines[1:]:
        row = dict(zip(columns, line.split("\t"), strict=True))
        marked = re.search(r"<v>(.*?)</v>", row["target"])
        plain = row["target"].replace("<v>", "").replace("</v>", "")
        severity = row["severity"].casefold()
        category = row["category"]
        by_rater.setdefault(row["rater"], Counter())[
            (row["system"], plain, marked.group(1) if marked else None, category, severity)] += 1
    return by_rater


def _esa_export(campaign: Campaign) -> dict[str, Counter]:
    out = io.StringIO()
    call_command("export_esa", "--campaign", str(campaign.pk), stdout=out)
    by_user: dict[str, Counter] = {}
    for line in out.getvalue().splitlines():
        record = json.loads(line)
        for item, rating in zip(record["item"], record["annotation"], strict=True):
            for system, given in rating.items():
                spans = tuple(sorted((s["start_i"], s["end_i"], s["severity"]) for s in given["error_spans"]))
                by_user.setdefault(str(record["user_id"]), Counter())[(item["tgt"][system], given["score"], spans)] += 1
    return by_user


def _canonical(rows: Counter) -> tuple[str, ...]:
    """One rater's rows in an order of their own (the export's and the screen's orders differ)."""
    return tuple(sorted(map(repr, rows.elements())))


@pytest.mark.parametrize("protocol", ["mqm", "esa"])
def test_two_participants_run_a_link_study_by_keyboard_and_the_export_holds_what_they_marked(
        protocol, browser, live_server, settings, tmp_path):
    settings.RATELIMIT_USE_CACHE = "default"
    campaign = _mqm_study(tmp_path) if protocol == "mqm" else _esa_study()
    plans = MQM_PLAN if protocol == "mqm" else ESA_PLAN
    marked: list[Counter] = []
    for pid in ("aaaa11112222", "bbbb33334444"):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = _join(context, live_server, campaign, pid)
            mine = Counter()
            for k, plan in enumerate(plans):
                if protocol == "mqm":
                    mine[_mqm_item(page, plan)] += 1
                else:
                    output, score, span = _esa_item(page, plan)
                    mine[(output, score, (span,))] += 1
                _finish_and_next(page, live_server, campaign, last=k == len(plans) - 1)
            assert page.locator("#completion-code").inner_text() == PASS
            marked.append(mine)
        finally:
            context.close()

    assert Assignment.objects.filter(campaign=campaign).exclude(status=Assignment.Status.DONE).count() == 0
    exported = _mqm_export(campaign) if protocol == "mqm" else _esa_export(campaign)
    assert len(exported) == 2  # one rater per participant
    assert sorted(map(_canonical, exported.values())) == sorted(map(_canonical, marked))
