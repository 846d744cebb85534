"""The one system-level statistics core gives the figures MQM and ESA gave before it (floats to 1e-6 relative).

tests/data/system_figures_pinned.json holds what the separate MQM and ESA code computed on ratings derived from
Google's TED file (tests/stats/ted_fixture.py) before both moved onto stats.systems. One figure is new, not
changed: MQM's `ratings` (the rated pairs its `segments` used to count; on TED both are 529, one rater per
translation). Needs ../shared/data/mqm (skips without it)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from corpus.protocols.mqm import DEFAULT, DEFAULT_TREE, canonical_category
from stats import esa, mqm
from stats.systems import LOWER, Observation, system_results
from tests.conftest import shared_file
from tests.stats.ted_fixture import ECHO, ted_esa, ted_mqm

PINNED = json.loads((Path(__file__).parents[1] / "data" / "system_figures_pinned.json").read_text())


@pytest.fixture(scope="module")
def ted() -> list[mqm.Rating]:
    return ted_mqm(shared_file("mqm/mqm_ted_ende.tsv"))


def _plain(obj) -> object:
    return json.loads(json.dumps(dataclasses.asdict(obj)))


def _agreement(agreement) -> dict:
    prf = lambda p: [p.matched, p.n_predicted, p.n_reference]  # noqa: E731
    return {"pairs": [{"a": p.a, "b": p.b, "units": p.outputs, "char": prf(p.char),
                       "char_labelled": prf(p.char_labelled), "scores": _plain(p.scores)} for p in agreement.pairs],
            "char": prf(agreement.char), "char_labelled": prf(agreement.char_labelled),
            "scores": _plain(agreement.scores)}


P_VALUES = {"p", "p_holm"}


def _same(now: object, pinned: object, *, p_step: float = 0.0) -> bool:
    """Equal, floats to 1e-6 relative: a bootstrap percentile moves in its eighth digit with the machine's numpy
    (its SIMD summation order), and a resampled p-value by `p_step` (one resample of 10,000 landing on the other
    side of a tie); every count, system and rank stays exact."""
    if isinstance(pinned, float) and isinstance(now, float):
        return now == pytest.approx(pinned, rel=1e-6, abs=1e-12)
    if isinstance(pinned, dict) and isinstance(now, dict):
        return now.keys() == pinned.keys() and all(
            abs(now[k] - pinned[k]) <= p_step + 1e-12 if k in P_VALUES and p_step and isinstance(pinned[k], float)
            else _same(now[k], pinned[k], p_step=p_step) for k in pinned)
    if isinstance(pinned, list) and isinstance(now, list):
        return len(now) == len(pinned) and all(_same(a, b, p_step=p_step) for a, b in zip(now, pinned, strict=True))
    return now == pinned


def _without_ratings(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "ratings"} for row in rows]


def test_mqm_scores_intervals_and_ranks_equal_todays_on_ted(ted):
    plain = [r for r in ted if r.rater != ECHO]
    now = [_plain(s) for s in mqm.system_scores(plain, DEFAULT.weight)]
    assert _same(_without_ratings(now), PINNED["mqm_systems"])
    assert [row["ratings"] for row in now] == [529] * 14
    echoed = [_plain(s) for s in mqm.system_scores(ted, DEFAULT.weight, seed=7, n_resamples=500)]
    # with the echo rater a third of the translations have two ratings: today's `segments` counted those pairs,
    # now `ratings` does and `segments` counts the distinct segments
    assert _same(_without_ratings([{**row, "segments": row["ratings"]} for row in echoed]), PINNED["mqm_systems_echo"])
    assert {row["segments"] for row in echoed} == {529}
    assert all(row["ratings"] > 529 for row in echoed)


def test_mqm_agreement_equals_todays_on_ted(ted):
    now = mqm.rater_agreement(ted, DEFAULT.weight, name=lambda c: canonical_category(c, DEFAULT_TREE))
    assert _same(_agreement(now), PINNED["mqm_agreement"])


def test_esa_scores_ranking_and_agreement_equal_todays_on_ted_scores(ted):
    ratings = ted_esa(ted)
    ranking = esa.system_ranking(ratings)
    assert _same([_plain(s) for s in ranking.systems], PINNED["esa_systems"])
    assert _same([_plain(p) for p in ranking.pairs], PINNED["esa_pairs"], p_step=2e-4)
    assert _same(_agreement(esa.rater_agreement(ratings)), PINNED["esa_agreement"])


def test_lower_is_better_mirrors_higher_is_better(ted):
    """MQM's direction is the negated scores' ranking: same intervals mirrored, same ranks, same p-values."""
    plain = [r for r in ted if r.rater != ECHO][:3000]
    lower = system_results([Observation(r.system, r.segment, mqm.segment_score(r.errors, DEFAULT.weight))
                            for r in plain], better=LOWER, n_resamples=200, rank_resamples=500)
    higher = esa.system_ranking([esa.Rating(r.system, r.segment, r.rater, -mqm.segment_score(r.errors, DEFAULT.weight))
                                 for r in plain], n_resamples=200, rank_resamples=500)
    assert [s.system for s in lower.systems] == [s.system for s in higher.systems]
    for a, b in zip(lower.systems, higher.systems, strict=True):
        assert a.score == pytest.approx(-b.score) and a.rank_range == b.rank_range
        assert a.ci_low == pytest.approx(-b.ci_high) and a.ci_high == pytest.approx(-b.ci_low)
    for a, b in zip(lower.pairs, higher.pairs, strict=True):
        # a before b: the lower MQM score, so mean(a) - mean(b) is negative where higher ESA-like is positive
        assert (a.a, a.b, a.p_holm) == (b.a, b.b, b.p_holm) and a.difference == pytest.approx(-b.difference)
        assert a.difference <= 0
