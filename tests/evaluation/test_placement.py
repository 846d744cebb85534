"""Placement of models on servers and the K-server lower bound, worked by hand (no database)."""

from __future__ import annotations

import pytest

from evaluation.runs.placement import (
    ModelWork,
    PlacementError,
    best_makespan,
    job_bound,
    place,
    placement_record,
)

ALL = ["a1", "a2", "a3", "a4", "a5", "sup"]


def test_model_work_is_its_load_plus_its_calls_in_rounds_of_p() -> None:
    assert ModelWork("m", 24, call_seconds=0.3, load_seconds=1.0).seconds(4) == pytest.approx(1 + 6 * 0.3)
    assert ModelWork("m", 25, call_seconds=0.3, load_seconds=1.0).seconds(4) == pytest.approx(1 + 7 * 0.3)
    assert ModelWork("m", 0, call_seconds=0.3, load_seconds=1.0).seconds(4) == 0.0  # nothing left: no load


def test_place_equal_models_two_per_server_in_the_jobs_order() -> None:
    works = [ModelWork(m, 24, 0.3, 1.0) for m in ALL]
    servers = {"s1": ALL, "s2": ALL, "s3": ALL}
    placement = place(works, servers, parallel=4)
    # all 2.8 s: a1 s1, a2 s2, a3 s3, then a4 s1, a5 s2, sup s3 (ties go to the server listed first)
    assert placement.models == {"a1": "s1", "a2": "s2", "a3": "s3", "a4": "s1", "a5": "s2", "sup": "s3"}
    assert placement.on("s3") == ["a3", "sup"]
    assert placement.seconds == {"s1": 5.6, "s2": 5.6, "s3": 5.6}


def test_place_longest_first_to_the_least_busy_server() -> None:
    # 10, 7, 5, 4 s on two servers: 10 -> s1, 7 -> s2, 5 -> s2 (7 < 10), 4 -> s1 (10 < 12)
    works = [ModelWork("c", 1, 5, 0), ModelWork("a", 1, 10, 0), ModelWork("d", 1, 4, 0), ModelWork("b", 1, 7, 0)]
    placement = place(works, {"s1": "abcd", "s2": "abcd"}, parallel=1)
    assert placement.models == {"c": "s2", "a": "s1", "d": "s1", "b": "s2"}  # listed in the works' order
    assert placement.seconds == {"s1": 14.0, "s2": 12.0}


def test_place_only_on_servers_that_have_the_model() -> None:
    works = [ModelWork("big", 1, 10, 0), ModelWork("small", 1, 1, 0), ModelWork("rare", 1, 3, 0)]
    servers = {"s1": ["big", "small", "rare"], "s2": ["small"]}
    placement = place(works, servers, parallel=1)
    # rare only exists on s1, so it goes there although s1 is the busier one
    assert placement.models == {"big": "s1", "small": "s2", "rare": "s1"}
    assert placement.seconds == {"s1": 13.0, "s2": 1.0}


def test_place_counts_work_a_server_already_carries() -> None:
    placement = place([ModelWork("m", 1, 2, 0)], {"s1": ["m"], "s2": ["m"]}, parallel=1, busy={"s1": 1.0, "s2": 5.0})
    assert placement.models == {"m": "s1"} and placement.seconds == {"s1": 3.0, "s2": 5.0}


def test_place_refuses_models_no_server_has_and_skips_models_with_no_calls() -> None:
    with pytest.raises(PlacementError) as excinfo:
        place([ModelWork("x", 3), ModelWork("y", 3), ModelWork("m", 3)], {"s1": ["m"]}, parallel=1)
    assert excinfo.value.models == ["x", "y"]
    done = place([ModelWork("x", 0), ModelWork("m", 3)], {"s1": ["m"]}, parallel=1)
    assert done.models == {"m": "s1"}  # x has nothing left to ask, so it needs no server


def test_placement_record_names_each_server_its_models_and_state() -> None:
    placement = place([ModelWork("m", 2, 1.0, 0.5)], {"s1": ["m"], "s2": ["m"]}, parallel=1)
    record = placement_record(placement, {"s1": "ollama", "s2": "openai", "s3": "ollama"}, down={"s3": "refused"})
    assert record["servers"] == [
        {"server": "s1", "kind": "ollama", "models": ["m"], "expected_seconds": 2.5, "state": "up"},
        {"server": "s2", "kind": "openai", "models": [], "expected_seconds": 0.0, "state": "up"},
        {"server": "s3", "kind": "ollama", "models": [], "expected_seconds": 0.0, "state": "left out: refused"},
    ]
    assert record["models"] == {"m": "s1"} and record["handoffs"] == []


def test_best_makespan_is_exact_where_longest_first_is_not() -> None:
    # LPT gives 3+2+2 | 3+2 = 7; the best split is 3+3 | 2+2+2 = 6
    assert best_makespan([3, 3, 2, 2, 2], 2) == 6
    assert best_makespan([5, 1, 1], 2) == 5  # one long job sets the bound
    assert best_makespan([2.8] * 6, 1) == pytest.approx(16.8)
    assert best_makespan([], 3) == 0.0


def test_job_bound_of_the_bench_job() -> None:
    per_model = 1.0 + 6 * 0.3  # swap 1 s, 24 calls at P = 4 of 0.3 s
    annotators = [per_model] * 5
    # one server: everything in turn, 6 x 2.8 = 16.8 (the pipelined supervisor cannot help)
    assert job_bound(annotators, per_model, 1, 0.3) == pytest.approx(16.8)
    # three servers: 2 models each = 5.6; five annotators need two rounds (5.6) and then one merge call
    assert job_bound(annotators, per_model, 3, 0.3) == pytest.approx(5.9)
    # two servers: 3 models each = 8.4; annotators 3 | 2 = 8.4, + 0.3
    assert job_bound(annotators, per_model, 2, 0.3) == pytest.approx(8.7)
    # six servers: one model each, but the supervisor waits for the annotators: 2.8 + 0.3
    assert job_bound(annotators, per_model, 6, 0.3) == pytest.approx(3.1)
    assert job_bound(annotators, None, 3, 0.3) == pytest.approx(5.6)


def test_a_server_that_holds_its_models_from_its_start_pays_no_load():
    works = [ModelWork("a", calls=4, call_seconds=10, load_seconds=30), ModelWork("b", calls=4, call_seconds=10,
                                                                                  load_seconds=30)]
    both = {"ollama": {"a", "b"}, "openai": {"a", "b"}}
    placed = place(works, both, parallel={"ollama": 2, "openai": 1}, loaded={"openai"})
    # a: ollama 30 + 2 rounds x 10 = 50, openai 4 rounds x 10 = 40 -> openai; b: ollama 50, openai 40 + 40 -> ollama
    assert placed.models == {"a": "openai", "b": "ollama"}
    assert placed.seconds == {"ollama": 50.0, "openai": 40.0}
