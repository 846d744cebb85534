"""`pairwise_scores` and GET /api/analytics/{datasets,campaigns}/ID/pairwise on the made-up side-by-side file
(tests/data/sxs_mqm.tsv), every figure computed by hand in the comments; and `mqm_scores` on it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from ninja.testing import TestClient

from config.api import api
from corpus.models import Dataset
from tests.mqm_study import build_mqm_study

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "sxs_mqm.tsv"
pytestmark = pytest.mark.django_db

# MQM scores per (rater, segment): P (P_with_Q), Q, R, S
#   r1 seg 1: P 1 (Minor), Q 2 (two Minor), R 5 (Major), S 0      screens (R, S), (P, Q)
#   r1 seg 2: P 0, Q 1 (a source-side Minor), R 0.1, S 0.1         screens (Q, P), (R, S)
#   r2 seg 1: P 0, Q 0, R 5, S 1                                   screens (P, Q), (R, S)
#   r2 seg 2: P 1, Q 0, R 5, S 5                                   screens (R, S), (P, Q)
WINS = {  # (x, y): (x better, y better, ties, shown together)
    ("P", "Q"): (2, 1, 1, True), ("S", "R"): (2, 0, 2, True),
    ("P", "R"): (4, 0, 0, False), ("P", "S"): (3, 1, 0, False), ("Q", "R"): (3, 1, 0, False),
    ("Q", "S"): (2, 2, 0, False),
}


def _import() -> Dataset:
    call_command("import_mqm", str(FIXTURE), dataset="sxs", stdout=io.StringIO())
    return Dataset.objects.get(name="sxs")


def _run(**options) -> str:
    out = io.StringIO()
    call_command("pairwise_scores", stdout=out, resamples=200, **options)
    return out.getvalue()


def _oriented(pair: dict) -> tuple[str, str, int, int, int, bool]:
    """The pair as WINS keys it."""
    if (pair["a"], pair["b"]) in WINS:
        return pair["a"], pair["b"], pair["a_better"], pair["b_better"], pair["ties"], pair["shown_together"]
    return pair["b"], pair["a"], pair["b_better"], pair["a_better"], pair["ties"], pair["shown_together"]


def test_pairwise_scores_json_holds_the_hand_computed_figures():
    _import()
    result = json.loads(_run(dataset="sxs"))
    assert set(result) == {"systems", "pairs", "position_bias", "consistency", "checks"}
    assert {o[:2]: o[2:] for o in map(_oriented, result["pairs"])} == WINS
    for pair in result["pairs"]:
        assert pair["units"] == 4
        decided = pair["a_better"] + pair["b_better"]
        assert pair["a_win_rate"] == (pair["a_better"] / decided if decided else None)
        assert set(pair) == {"a", "b", "units", "a_better", "b_better", "ties", "a_win_rate", "ci_low", "ci_high",
                             "p_value", "p_holm", "shown_together"}
    strength = {s["system"]: s["strength"] for s in result["systems"]}
    assert set(strength) == {"P", "Q", "R", "S"}  # P_with_Q counts as P
    assert all(strength[p["a"]] >= strength[p["b"]] for p in result["pairs"])  # a is the stronger one
    assert strength["P"] == max(strength.values()) and strength["R"] == min(strength.values())
    assert sum(strength.values()) == pytest.approx(0, abs=1e-6)
    pr = next(p for p in result["pairs"] if {p["a"], p["b"]} == {"P", "R"})
    assert pr["p_value"] == pytest.approx(0.125)  # 4 to 0: 2 * 0.5**4
    # decided screens with both columns known: r1 (R1 5, S2 0) second, r1 (Q1 2, P2 1) second, r2 (S1 1, R2 5)
    # first, r2 (P1 1, Q2 0) second; r1's (Q, P) on seg 2 has no known column, the rest tie
    assert {k: result["position_bias"][k] for k in ("first_wins", "decided_units", "share")} == {
        "first_wins": 1, "decided_units": 4, "share": 0.25}
    # together: r1 seg 1 Katze P<->Q both marked (2 of 2), r2 seg 1 S's "saß" unmarked in R (0 of 1);
    # others: r1 seg 1 P's and Q's Katze unmarked in S (0 of 2), r2 seg 1 S's saß in P (0 of 1),
    # r2 seg 2 R's "regnet" marked in P (regnete) but not in Q (geregnet): 1 of 2
    assert result["consistency"] == {"shown_together": pytest.approx(2 / 3), "others": pytest.approx(1 / 5)}
    assert result["checks"] == [{"rater": "r1", "found": 1, "missed": 1}, {"rater": "r2", "found": 1, "missed": 0}]


def test_pairwise_scores_csv_is_the_pairs_table():
    _import()
    rows = list(csv.DictReader(io.StringIO(_run(dataset="sxs", format="csv"))))
    assert len(rows) == len(WINS)
    assert {(r["a"], r["b"]) for r in rows} == {(p["a"], p["b"]) for p in json.loads(_run(dataset="sxs"))["pairs"]}
    cd = next(r for r in rows if {r["a"], r["b"]} == {"Q", "S"})
    assert (cd["a_better"], cd["b_better"], cd["shown_together"]) == ("2", "2", "false")


def test_mqm_scores_counts_x_with_y_as_system_x_and_leaves_checks_out():
    _import()
    out = io.StringIO()
    call_command("mqm_scores", dataset="sxs", stdout=out)
    systems = {row["system"]: row for row in json.loads(out.getvalue())["systems"]}
    assert {name: row["score"] for name, row in systems.items()} == pytest.approx(
        {"P": 0.5, "Q": 0.75, "R": 3.775, "S": 1.525})
    assert systems["P"]["ratings"] == 4 and systems["P"]["segments"] == 2


def test_the_api_answers_what_the_command_prints_and_refuses_with_422_and_404(tmp_path, researcher, make_user):
    dataset = _import()
    client = TestClient(api)
    answer = client.get(f"/analytics/datasets/{dataset.pk}/pairwise?resamples=200", user=researcher)
    assert answer.status_code == 200 and answer.json() == json.loads(_run(dataset="sxs"))
    assert client.get("/analytics/datasets/999999/pairwise", user=researcher).status_code == 404
    assert client.get(f"/analytics/datasets/{dataset.pk}/pairwise?resamples=0", user=researcher).status_code == 422
    assert client.get(f"/analytics/datasets/{dataset.pk}/pairwise?source=zz", user=researcher).status_code == 422
    study = build_mqm_study(tmp_path, [make_user("ann1")])
    pointwise = client.get(f"/analytics/datasets/{study.dataset.pk}/pairwise?source=google", user=researcher)
    assert pointwise.status_code == 422 and "one output at a time" in pointwise.json()["detail"]
    campaign = client.get(f"/analytics/campaigns/{study.campaign.pk}/pairwise", user=researcher)
    assert campaign.status_code == 422 and campaign.json()["field"] == "campaign"
    assert "no side-by-side units" in campaign.json()["detail"]
    assert client.get("/analytics/campaigns/999999/pairwise", user=researcher).status_code == 404
    assert client.get(f"/analytics/datasets/{dataset.pk}/pairwise", user=make_user("anna2")).status_code == 403
