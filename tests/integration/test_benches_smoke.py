"""The benches still run end to end (tiny sizes, no timing asserted): a bench that no longer starts is caught here,
not by the next person who wants a figure. The figures themselves come from running the benches (docs/measured.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.integration


def _bench(script: str, *args: str, database: str) -> str:
    base = urllib.parse.urlparse(os.environ["DATABASE_URL"])
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SECRET_KEY", "DJANGO_DEBUG")}
    env["DATABASE_URL"] = base._replace(path=f"/{database}").geturl()
    done = subprocess.run([sys.executable, f"bench/{script}", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def _drop(database: str) -> None:
    import psycopg

    admin = urllib.parse.urlparse(os.environ["DATABASE_URL"])._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@pytest.fixture
def bench_database():
    name = f"spanjudge_bench_smoke_{os.getpid()}"
    _drop(name)
    yield name
    _drop(name)


def test_ensemble_bench_runs_on_one_and_on_three_servers(bench_database):
    out = _bench("ensemble_schedule.py", "--items", "3", "--annotators", "2", "--swap", "0", "--call", "0.01",
                 "--parallel", "2", "--servers", "3", "--skip-naive", database=bench_database)
    assert "status done" in out and "3-server measured wall time" in out
    assert "rerun of the finished job: LLM calls            = 0" in out


def test_dhp_bench_runs_and_its_rerun_makes_no_call(bench_database):
    out = _bench("dhp_run.py", "--items", "3", "--samples", "1", "--swap", "0", "--call", "0.01", "--parallel", "2",
                 database=bench_database)
    assert "status done" in out and "rerun: LLM calls                              = 0" in out


def test_analytics_bench_prints_the_ranking_beside_its_bound_and_where_it_went(bench_database):
    out = _bench("analytics.py", "--judgments", "1400", "--repeat", "2", "--profile", database=bench_database)
    [line] = [line for line in out.splitlines() if line.startswith("ranking by span and by explanation")]
    assert "over 1,400 judgments" in line and "(bound 2.0 s)" in line and "load average" in line
    assert "median" in line and ("-> OK" in line or "-> OVER" in line)
    [profile] = [line for line in out.splitlines() if line.startswith("ranking profile")]
    assert "database read" in profile and "bootstrap intervals" in profile and "randomization tests" in profile


def test_sample_coverage_bench_runs():
    done = subprocess.run([sys.executable, "bench/sample_coverage.py", "--samples", "2000"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("coverage") == 6 and "via draw_stratified" in done.stdout


def test_routing_bench_runs(bench_database):
    from tests.conftest import shared_file

    shared_file("rotowire/train.jsonl")
    out = _bench("routing.py", "--campaigns", "4", "--db-checks", "1", "--planner-runs", "1", "--also", "0.5",
                 "--compare-campaigns", "2", "--compare-rates", "0.2", database=bench_database)
    assert "coverage of the full-judging span accuracy" in out and "audit rate 0.50" in out
    assert "the whole product agrees with this estimate on 1 of 1 campaigns" in out
    assert "predicted / actual 95% width" in out
    assert "equal width: judgments needed" in out and "active+ppi++ " in out and "ECE" in out


def test_decoy_audit_bench_runs_on_a_quintd_shaped_checkout(bench_database, tmp_path):
    """quintd's layout, filled with 30 made-up ice hockey outputs and one annotator's spans on each."""
    import json

    root = tmp_path / "data" / "quintd-1"
    (root / "data" / "ice_hockey").mkdir(parents=True)
    (root / "outputs" / "test" / "ice_hockey" / "default").mkdir(parents=True)
    (root / "annotations" / "gpt-4").mkdir(parents=True)
    teams = ["Hawks", "Owls", "Bears", "Wolves", "Lynx", "Foxes"]
    inputs, outputs, notes = [], [], []
    for i in range(30):
        home, away = teams[i % 6], teams[(i + 1) % 6]
        inputs.append({"home": home, "away": away, "score": [i % 5 + 1, i % 3], "period": i % 3 + 1})
        text = (f"The {home} beat the {away} {i % 5 + 1}-{i % 3} at home. {home} scored twice in period "
                f"{i % 3 + 1} and the game lasted {60 + i} minutes in front of a big crowd.")
        outputs.append({"in": "", "out": text})
        where = text.index("the game lasted")
        notes.append({"table_idx": i, "annotations": [
            {"reason": "The duration of the game is not in the data.", "text": f"the game lasted {60 + i} minutes",
             "type": 1, "start": where},
            {"reason": "The data does not say how large the crowd was.", "text": "in front of a big crowd",
             "type": 1, "start": text.index("in front")}]})
    (root / "data" / "ice_hockey" / "test.json").write_text(json.dumps(inputs))
    (root / "outputs" / "test" / "ice_hockey" / "default" / "llama2.json").write_text(
        json.dumps({"generated": outputs}))
    (root / "annotations" / "gpt-4" / "gpt-4-ice_hockey-test-llama2-direct-1.jsonl").write_text(
        "\n".join(json.dumps(n) for n in notes))
    out = _bench("decoy_audit.py", "--quintd", str(tmp_path), "--per", "30", database=bench_database)
    assert "quintd-1: 30 outputs, 60 real LLM spans" in out and "ROC AUC" in out, out
