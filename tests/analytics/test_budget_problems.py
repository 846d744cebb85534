"""The analytics count, per evaluator run, the (item, model) answers stopped by the context or answer budget."""

from __future__ import annotations

import re
from html import unescape

import pytest

from corpus.models import AnnotationKind, ParseStatus
from evaluation.selectors import run_problems, runs_problems
from tests import factories as make

pytestmark = pytest.mark.django_db

TOO_LONG = "prompt_too_long: ~9100 tokens, limit 8192"
CUT = "answer_cut: 2048 tokens"


@pytest.fixture
def rita_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def with_problems(study):
    """ens-run: two models' prompts too long on i4, one of them also on i3 beside a cut answer on i2, and a
    merely unparsed answer (not a budget problem); single-run: one cut answer; silent-run: none."""

    def model_answer(run: str, item: str, model: str, status: str, problems: list[str]) -> None:
        make.annotation(study.items[item], study.runs[run], kind=AnnotationKind.ANNOTATOR, model=model,
                        parse_status=status, parse_problems=problems)

    model_answer("ens-run", "i4", "m1", ParseStatus.FAILED, [TOO_LONG])
    model_answer("ens-run", "i4", "m2", ParseStatus.FAILED, [TOO_LONG])
    model_answer("ens-run", "i3", "m1", ParseStatus.FAILED, [TOO_LONG])
    model_answer("ens-run", "i2", "m2", ParseStatus.PARTIAL, ["unparsed: line 3", CUT])
    model_answer("ens-run", "i3", "m2", ParseStatus.FAILED, ["unparsed: no JSON object"])
    model_answer("single-run", "i2", "solo", ParseStatus.PARTIAL, [CUT])
    return study


EXPECTED = {
    "ens-run": {"prompt_too_long": 3, "answer_cut": 1},
    "single-run": {"prompt_too_long": 0, "answer_cut": 1},
    "silent-run": {"prompt_too_long": 0, "answer_cut": 0},
}


def test_runs_problems_counts_many_runs_in_one_query(with_problems, django_assert_num_queries):
    runs = with_problems.runs
    with django_assert_num_queries(1):
        counts = runs_problems([run.pk for run in runs.values()])
    assert {name: counts[run.pk] for name, run in runs.items()} == EXPECTED
    assert run_problems(runs["ens-run"]) == run_problems(runs["ens-run"].pk) == EXPECTED["ens-run"]


def _section_rows(html: str, key: str) -> dict[str, list[str]]:
    section = re.search(rf'<details class="card section" id="table-{key}"[^>]*>(.*?)</details>', html, re.S)
    assert section, f"no table {key} on the page"
    rows = re.findall(r"<tr>(.*?)</tr>", section.group(1), re.S)
    cells = [[unescape(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)] for row in rows]
    return {row[0]: row for row in cells if row}


def test_campaign_dashboard_shows_budget_problems_per_run(rita_client, with_problems):
    html = rita_client.get(f"/analytics/campaigns/{with_problems.campaign.pk}/?resamples=0").content.decode()
    assert "Items stopped by the LLM budget" in html
    assert "left out of them" in html  # the note says what the accuracy figures do with such answers
    rows = _section_rows(html, "budget_problems")
    # columns: run, shown as, evaluator, aspect, prompt too long, answer cut
    assert {run: row[-2:] for run, row in rows.items()} == {
        run: [str(c["prompt_too_long"]), str(c["answer_cut"])] for run, c in EXPECTED.items()
    }
    # the problem answers add no judged span: Table 4 is what it was (R1 Span OK 5/9)
    assert "55.6" in html


def test_dataset_dashboard_shows_budget_problems(rita_client, with_problems):
    html = rita_client.get(f"/analytics/datasets/{with_problems.dataset.pk}/?resamples=0").content.decode()
    rows = _section_rows(html, "budget_problems")
    assert rows["ens-run"][-2:] == ["3", "1"]


def test_api_campaign_and_dataset_analytics_count_budget_problems(rita_client, with_problems):
    for url in (f"/api/analytics/campaigns/{with_problems.campaign.pk}",
                f"/api/analytics/datasets/{with_problems.dataset.pk}"):
        body = rita_client.get(url, {"resamples": 0}).json()
        table = next(t for t in body["tables"] if t["key"] == "budget_problems")
        got = {r["run"]: {"prompt_too_long": r["prompt_too_long"], "answer_cut": r["answer_cut"]}
               for r in table["rows"]}
        assert got == EXPECTED, url
    one = rita_client.get(f"/api/analytics/campaigns/{with_problems.campaign.pk}/tables/budget_problems",
                          {"format": "csv", "resamples": 0})
    assert one.status_code == 200
    assert "prompt_too_long,answer_cut" in one.content.decode().splitlines()[0]



def test_a_failed_answer_counts_in_the_gold_overlap_as_answered_without_spans(study):
    """What the note says of the overlap table: a stored prompt_too_long answer is an answer with no spans."""
    from analytics.selectors import Scope, dashboard_data

    def single_run_row():
        data = dashboard_data(Scope(dataset_id=study.dataset.pk), reference="gold:gold", n_resamples=0)
        return next(r for r in data.overlap if r.run_id == study.runs["single-run"].pk)

    before = single_run_row()
    make.annotation(study.items["i4"], study.runs["single-run"], kind=AnnotationKind.ANNOTATOR, model="solo",
                    parse_status=ParseStatus.FAILED, parse_problems=[TOO_LONG])
    after = single_run_row()
    assert after.n_items == before.n_items + 1
    assert after.overlap.missed == before.overlap.missed + 1  # gold i4 (0,5) is now missed
    assert after.overlap.matched == before.overlap.matched
