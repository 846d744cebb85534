"""The simulated control-arm campaign still runs end to end (few outputs, figures not asserted beyond their shape)."""

from __future__ import annotations

import pytest

from tests.conftest import shared_file
from tests.integration.test_benches_smoke import _bench, bench_database  # noqa: F401 (the fixture)

pytestmark = pytest.mark.integration


def test_control_arm_bench_runs_and_prints_every_figure(bench_database):  # noqa: F811
    shared_file("rotowire/train.jsonl")  # skips without the shared data
    out = _bench("control_arm_campaign.py", "--items", "4", database=bench_database)
    assert "ensemble run on the simulated Ollama: done, 4 RotoWire outputs" in out
    assert "2 of 4 outputs in the control arm" in out
    for figure in ("recall", "precision_confirmed", "precision_found", "accepted_unfound", "errors per output",
                   "seconds per error span"):
        assert figure in out
