"""The run scheduler on its own: P in flight, retries of unparseable answers, the cache, and stopping.

The scheduler takes plain data and a backend, so these tests give it a fake backend and no database.
One server is one lane; tests of several lanes at once are in test_lanes.py.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from evaluation.engine.parsing import parse_annotator_answer
from evaluation.llm.base import LLMResult
from evaluation.llm.errors import BackendUnavailable
from evaluation.runs.lanes import Feed, Lane, LaneScheduler
from evaluation.runs.scheduler import Outcome, Step, attempt_options, cache_key, plan_attempts
from tests.conftest import REPO

GOOD = "Error 1:\nLocation: x\nExplanation: e\nSeverity: 2\nOverall score: Good"
BASE = {"temperature": 0.0, "seed": 42}


class FakeBackend:
    """Answers after `delay` seconds, counts requests in flight; `replies` maps prompt -> answers in turn."""

    signals_landing = False

    def __init__(self, delay: float = 0.0, replies: Mapping[str, list[str]] | None = None,
                 fail_on: str | None = None, delays: Mapping[str, float] | None = None) -> None:
        self.delay = delay
        self.delays = dict(delays or {})
        self.replies = {prompt: list(answers) for prompt, answers in (replies or {}).items()}
        self.fail_on = fail_on
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def chat(self, model: str, prompt: str, *, options: Mapping[str, Any]) -> LLMResult:
        with self.lock:
            self.requests.append((prompt, dict(options)))
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(self.delays.get(prompt, self.delay))
            if prompt == self.fail_on:
                raise BackendUnavailable("server gone")
            with self.lock:
                queue = self.replies.get(prompt)
                text = queue.pop(0) if queue else GOOD
            return LLMResult(text, model, "d", 1, 1, 0, 0, 0, 0, "stop", 1)
        finally:
            with self.lock:
                self.in_flight -= 1


def _steps(n: int, model: str = "m", attempts: int = 4) -> list[Step]:
    return [
        Step(i, f"p{i}", plan_attempts(model, "d", f"p{i}", BASE, attempts=attempts, retry_temperature=0.1))
        for i in range(n)
    ]


class Recorder:
    def __init__(self) -> None:
        self.answers: list[Outcome] = []
        self.batches: list[tuple[list[Outcome], bool]] = []
        self.threads: set[str] = set()

    def on_answers(self, answers: list[tuple[Feed, Outcome]]) -> None:
        self.threads.add(threading.current_thread().name)
        self.answers.extend(outcome for _, outcome in answers)

    def on_batch(self, feed: Feed, outcomes: list[Outcome], interrupted: bool) -> None:
        self.threads.add(threading.current_thread().name)
        self.batches.append((outcomes, interrupted))

    def batched(self) -> list[int]:
        return sorted(o.step.item_id for batch, _ in self.batches for o in batch)


def test_scheduler_imports_no_django() -> None:
    code = (
        "import sys, evaluation.runs.scheduler, evaluation.runs.lanes, evaluation.runs.placement\n"
        "import evaluation.llm.servers, evaluation.engine.ensemble\n"
        "leaked = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "assert not leaked, leaked"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)




def _lost(server: str, error: Exception, feeds: list[Feed]) -> dict[str, str]:
    raise error  # one server and nowhere to go: the job stops


def run_phase(backend, model: str, steps: list[Step], *, parallel: int, on_answers, on_batch, **kw) -> None:
    """One model on one server: the single-lane case of the lane scheduler."""
    feed = Feed(model, parse_annotator_answer)
    feed.add(steps)
    LaneScheduler([Lane("s", backend, [feed])], parallel=parallel, on_answers=on_answers, on_batch=on_batch,
                  on_server_lost=_lost, **kw).run()


def test_phase_keeps_p_requests_in_flight_and_stores_on_the_calling_thread() -> None:
    backend, seen = FakeBackend(delay=0.05), Recorder()
    run_phase(backend, "m", _steps(10), parallel=3,
              on_answers=seen.on_answers, on_batch=seen.on_batch, batch_size=4)
    assert backend.peak == 3 and len(backend.requests) == 10
    assert [p for p, _ in backend.requests][:3] == ["p0", "p1", "p2"]  # started in the steps' order
    assert sorted(o.step.item_id for o in seen.answers) == seen.batched() == list(range(10))
    assert seen.threads == {threading.current_thread().name}  # no callback on a worker thread
    assert seen.batches[-1][1] is False


def test_phase_retries_unparseable_answers_warmer_with_a_shifted_seed() -> None:
    backend = FakeBackend(replies={"p0": ["no idea", "still nothing", GOOD]})
    seen = Recorder()
    run_phase(backend, "m", _steps(1), parallel=2,
              on_answers=seen.on_answers, on_batch=seen.on_batch)
    assert [options for _, options in backend.requests] == [
        BASE, {"temperature": 0.1, "seed": 43}, {"temperature": 0.1, "seed": 44},
    ]
    (outcome,) = seen.answers
    assert [a.number for a in outcome.attempts] == [0, 1, 2] and outcome.raw == GOOD
    assert outcome.parsed.status != "failed"


def test_phase_gives_up_after_the_planned_attempts() -> None:
    backend, seen = FakeBackend(replies={"p0": ["junk"] * 9}), Recorder()
    run_phase(backend, "m", _steps(1, attempts=4), parallel=1,
              on_answers=seen.on_answers, on_batch=seen.on_batch)
    assert len(backend.requests) == 4 and seen.answers[0].parsed.status == "failed"


def test_phase_reads_cached_answers_instead_of_asking() -> None:
    steps = _steps(2)
    steps[0].cached = {steps[0].attempts[0].key: GOOD}
    backend, seen = FakeBackend(), Recorder()
    run_phase(backend, "m", steps, parallel=2,
              on_answers=seen.on_answers, on_batch=seen.on_batch)
    assert [p for p, _ in backend.requests] == ["p1"]
    by_item = {o.step.item_id: o for o in seen.answers}
    assert by_item[0].attempts[0].result is None and by_item[1].attempts[0].result is not None


def test_cache_key_names_model_digest_prompt_and_options() -> None:
    key = cache_key("m", "d", "p", BASE)
    assert key == cache_key("m", "d", "p", {"seed": 42, "temperature": 0.0})  # option order does not count
    assert len({key, cache_key("m2", "d", "p", BASE), cache_key("m", "d2", "p", BASE),
                cache_key("m", "d", "p2", BASE), cache_key("m", "d", "p", attempt_options(BASE, 1, 0.1))}) == 5


def test_backend_failure_stops_the_phase_and_hands_over_what_arrived() -> None:
    backend, seen = FakeBackend(delay=0.05, fail_on="p3"), Recorder()
    with pytest.raises(BackendUnavailable):
        run_phase(backend, "m", _steps(20), parallel=2,
                  on_answers=seen.on_answers, on_batch=seen.on_batch)
    asked = {p for p, _ in backend.requests}
    assert len(asked) < 20  # nothing new started once it failed
    answered = sorted(o.step.item_id for o in seen.answers)
    # every arrived answer was written before the lost server's work was handed on (here: nowhere)
    assert 3 not in answered and seen.batched() == answered


def test_a_step_cut_short_between_attempts_keeps_its_calls_but_is_not_finished() -> None:
    # p0's first answer is unparseable and arrives after p1 has failed: no retry starts, the answer is
    # handed over for the cache, and p0 is not reported as a finished step.
    backend = FakeBackend(replies={"p0": ["junk"]}, fail_on="p1", delays={"p0": 0.3, "p1": 0.05})
    seen = Recorder()
    with pytest.raises(BackendUnavailable):
        run_phase(backend, "m", _steps(2), parallel=2,
                  on_answers=seen.on_answers, on_batch=seen.on_batch)
    assert [p for p, _ in backend.requests].count("p0") == 1
    (partial,) = seen.answers
    assert partial.step.item_id == 0 and [a.text for a in partial.attempts] == ["junk"]
    assert seen.batched() == []


def test_a_raising_batch_callback_stops_the_phase_without_losing_answers() -> None:
    backend, seen = FakeBackend(delay=0.05), Recorder()

    class Cancelled(Exception):
        pass

    def cancel_after_first(feed: Feed, outcomes: list[Outcome], interrupted: bool) -> None:
        seen.on_batch(feed, outcomes, interrupted)
        if not interrupted and outcomes:
            raise Cancelled

    with pytest.raises(Cancelled):
        run_phase(backend, "m", _steps(30), parallel=3,
                  on_answers=seen.on_answers, on_batch=cancel_after_first, batch_size=2)
    assert len(backend.requests) < 30
    # the batch handed over before the raise is not handed over again; the rest come in the last one
    assert seen.batched() == sorted(o.step.item_id for o in seen.answers)
    # after the batch that raised, only the last one (of answers still in flight, if any arrived) follows
    flags = [interrupted for _, interrupted in seen.batches]
    assert flags[0] is False and flags[1:] in ([], [True])


def test_empty_phase_makes_no_callback() -> None:
    seen = Recorder()
    run_phase(FakeBackend(), "m", [], parallel=2,
              on_answers=seen.on_answers, on_batch=seen.on_batch)
    assert seen.answers == [] and seen.batches == []
