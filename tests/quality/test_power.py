"""The checks' power, Django-free: the flag rule's own thresholds, flag chances worked out by hand, and the smallest
fix sized as creation would act on it."""

from __future__ import annotations

import importlib.util

import pytest

from quality.engine import power
from quality.engine.planting import planted_count
from tests.conftest import REPO


def test_failing_every_check_flags_from_three_checks_at_the_default_minimum():
    # Wilson upper bounds: 0 of 2 is 0.66 (not below 0.6), 0 of 3 is 0.56.
    assert power.flag_limit(2, 0.6) == -1
    assert power.flag_limit(3, 0.6) == 0
    assert power.smallest_met(0.6) == 3
    # A stricter minimum flags earlier: 0 of 2 is below 0.7.
    assert power.smallest_met(0.7) == 2


def test_a_random_participant_is_flagged_with_the_binomial_chance_of_passing_too_few():
    # n = 3: only 0 passed flags; a random verdict is right on a decoy with chance 1/4.
    met = power.Met.of(3)
    assert power.p_vigilance_flag(met, 0.25, 0.6) == pytest.approx(0.75 ** 3)
    assert power.p_vigilance_flag(met, 0.0, 0.6) == pytest.approx(1.0)
    assert power.p_vigilance_flag(met, 1.0, 0.6) == pytest.approx(0.0)


def test_a_fractional_count_mixes_its_two_neighbours():
    # 2.5 checks: half the participants meet 2 (nobody flagged), half meet 3.
    assert power.p_vigilance_flag(power.Met.of(2.5), 0.0, 0.6) == pytest.approx(0.5)
    assert power.Met.of(2.5) == power.Met(2, 0.5)


def test_the_training_check_fails_whoever_the_key_disagrees_with():
    keys = ("error", "not_error", "error")
    # Accept-all scores 2/3, reject-all 1/3, both below 0.8; random passes only with 3 of 3 right.
    assert power.p_training_flag(keys, 0.8, behaviour="accept_all") == 1.0
    assert power.p_training_flag(keys, 0.8, behaviour="reject_all") == 1.0
    assert power.p_training_flag(keys, 0.8, behaviour="random") == pytest.approx(1 - 0.25 ** 3)
    # A pass mark of 0.6 lets accept-all through (2/3 >= 0.6).
    assert power.p_training_flag(keys, 0.6, behaviour="accept_all") == 0.0


def test_a_design_that_flags_nobody_names_its_smallest_fix():
    # 4 outputs each with 1 decoy among them (a quarter per output) and round(0.3 x 4 / 0.7) = 2 planted copies.
    design = power.Design(vigilance_min=0.6, per_participant=4, decoys=0.3, decoys_met=1.0, planted=0.3,
                          planted_met=planted_count(0.3, 4), decoy_rate=0.25)
    rows = {row.check: row for row in power.checks_power(design)}
    assert all(p == 0 for row in rows.values() for p in row.p_flag.values())
    # Decoys: no share up to 0.5 reaches 3 (1 x (1 / 1) / (0.3 / 0.7) = 2.33); 12 outputs x 0.25 = 3.
    assert rows["decoys"].smallest_fix == "12 items per participant"
    # Planted: round(0.4 x 4 / 0.6) = 3, and round(0.3 x 6 / 0.7) = 3 (at 5 it is 2).
    assert planted_count(0.4, 4) == 3 and planted_count(0.3, 6) == 3 and planted_count(0.3, 5) == 2
    assert rows["planted"].smallest_fix == "planted 0.4 or 6 items per participant"
    assert power.weak_for(list(rows.values())) == ["accept_all", "reject_all", "random"]


def test_a_design_with_teeth_has_no_fix_and_says_who_escapes():
    design = power.Design(vigilance_min=0.6, per_participant=8, decoys=0.3, decoys_met=3.0, planted=0.1,
                          planted_met=1, decoy_rate=3 / 8)
    rows = {row.check: row for row in power.checks_power(design)}
    assert rows["decoys"].p_flag == {"accept_all": 1.0, "reject_all": 0.0, "random": pytest.approx(0.421875)}
    assert rows["decoys"].smallest_fix is None
    assert rows["planted"].p_flag == {"accept_all": 0.0, "reject_all": 0.0, "random": 0.0}
    assert power.weak_for(list(rows.values())) == ["reject_all"]


def test_the_guides_power_table_is_what_the_engine_computes():
    """The quality-checks guide prints bench/checks_power_table.py's table; a change to the rule shows there."""
    spec = importlib.util.spec_from_file_location("checks_power_table", REPO / "bench" / "checks_power_table.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    guide = (REPO / "docs" / "guides" / "quality-checks.md").read_text()
    assert bench.table() in guide
    # The rows say what the rule says: 4 items at 0.1 meet fewer than 3 of each kind, so nobody is flagged.
    assert "| 4 | 0.1 | 0.9 | 0 | 0 | 1 | 0 | 0 | 0 | 0 |" in bench.table()
