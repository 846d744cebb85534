"""Several servers at once (lanes), with fake backends and no database: parallel lanes, model-major order
per lane, the pipelined supervisor feed, hand-over of a lost server's work, loading a waiting model ahead."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from evaluation.engine.parsing import parse_annotator_answer
from evaluation.llm.base import LLMResult
from evaluation.llm.errors import BackendError, BackendUnavailable
from evaluation.runs.lanes import Feed, Lane, LaneScheduler
from evaluation.runs.scheduler import Outcome, Step, plan_attempts

GOOD = "Error 1:\nLocation: x\nExplanation: e\nSeverity: 2\nOverall score: Good"
BASE = {"temperature": 0.0, "seed": 42}


class Clock:
    """Shared by the fake servers of a test: how many requests are in flight over all of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0


class FakeServer:
    """Answers GOOD after `delay`; fails (as a server gone for good) every request once `dead` is set."""

    signals_landing = False

    def __init__(self, clock: Clock, delay: float = 0.02, die_after: int | None = None) -> None:
        self.clock = clock
        self.delay = delay
        self.die_after = die_after
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, float, float]] = []  # model, prompt, started, ended (answered ones)
        self.failed: list[tuple[str, str]] = []
        self.loads: list[str] = []

    def chat(self, model: str, prompt: str, *, options: Mapping[str, Any]) -> LLMResult:
        with self.clock.lock:
            self.clock.in_flight += 1
            self.clock.peak = max(self.clock.peak, self.clock.in_flight)
        started = time.monotonic()
        try:
            time.sleep(self.delay)
            with self.lock:
                if self.die_after is not None and len(self.requests) >= self.die_after:
                    self.failed.append((model, prompt))
                    raise BackendUnavailable("server gone", url="fake")
                self.requests.append((model, prompt, started, time.monotonic()))
            return LLMResult(GOOD, model, "d", 1, 1, 0, 0, 0, 0, "stop", 1)
        finally:
            with self.clock.lock:
                self.clock.in_flight -= 1

    def load(self, model: str) -> None:
        self.loads.append(model)


def _steps(model: str, items: range) -> list[Step]:
    return [
        Step(i, f"{model}/p{i}", plan_attempts(model, "d", f"{model}/p{i}", BASE, attempts=2, retry_temperature=0.1))
        for i in items
    ]


def _feed(model: str, items: range) -> Feed:
    feed = Feed(model, parse_annotator_answer, tag=model)
    feed.add(_steps(model, items))
    return feed


class Log:
    def __init__(self) -> None:
        self.stored: list[tuple[str, int]] = []
        self.batched: list[tuple[str, int]] = []

    def on_answers(self, answers: list[tuple[Feed, Outcome]]) -> None:
        self.stored.extend((feed.model, o.step.item_id) for feed, o in answers if o.attempts)

    def on_batch(self, feed: Feed, outcomes: list[Outcome], interrupted: bool) -> None:
        self.batched.extend((feed.model, o.step.item_id) for o in outcomes)


def _never_lost(server: str, error: BackendError, feeds: list[Feed]) -> dict[str, str]:
    raise AssertionError(f"{server} was lost: {error}")


def test_lanes_run_at_once_each_model_major() -> None:
    clock, log = Clock(), Log()
    one, two = FakeServer(clock), FakeServer(clock)
    lanes = [Lane("one", one, [_feed("a", range(6)), _feed("b", range(6))]),
             Lane("two", two, [_feed("c", range(6))])]
    LaneScheduler(lanes, parallel=2, on_answers=log.on_answers, on_batch=log.on_batch,
                  on_server_lost=_never_lost).run()
    assert clock.peak == 4  # two servers with two requests each, at the same time
    assert [m for m, *_ in one.requests] == ["a"] * 6 + ["b"] * 6  # one model after the other
    first_b = min(started for m, _, started, _ in one.requests if m == "b")
    assert first_b >= max(ended for m, _, _, ended in one.requests if m == "a")  # a's requests ended first
    assert sorted(log.batched) == sorted(log.stored) == sorted(
        [(m, i) for m in "abc" for i in range(6)]
    )


def test_an_open_feed_takes_items_as_they_become_ready_and_starts_before_the_others_end() -> None:
    """The supervisor pattern: lane 'sup' gets item i as soon as lane 'ann' answered it."""
    clock, log = Clock(), Log()
    ann, sup = FakeServer(clock, delay=0.03), FakeServer(clock, delay=0.01)
    merge = Feed("s", parse_annotator_answer, tag="s", closed=False)

    def on_batch(feed: Feed, outcomes: list[Outcome], interrupted: bool) -> None:
        log.on_batch(feed, outcomes, interrupted)
        if feed.model == "a":  # each annotated item is ready to merge
            merge.add(step for o in outcomes for step in _steps("s", range(o.step.item_id, o.step.item_id + 1)))
            merge.closed = sum(1 for model, _ in log.batched if model == "a") == 12

    lanes = [Lane("ann", ann, [_feed("a", range(12))]), Lane("sup", sup, [merge], warm=sup.load)]
    LaneScheduler(lanes, parallel=2, on_answers=log.on_answers, on_batch=on_batch,
                  on_server_lost=_never_lost).run()
    assert sorted(p for _, p, _, _ in sup.requests) == sorted(f"s/p{i}" for i in range(12))
    first_merge = min(started for _, _, started, _ in sup.requests)
    last_annotation = max(ended for _, _, _, ended in ann.requests)
    assert first_merge < last_annotation  # pipelined: merging began while annotators still ran
    assert sup.loads == ["s"]  # the waiting model was loaded ahead, once


def test_a_waiting_feed_does_not_block_a_later_one_with_steps() -> None:
    waiting = Feed("s", parse_annotator_answer, closed=False)
    later = _feed("b", range(2))
    lane = Lane("x", None, [waiting, later])  # type: ignore[arg-type]
    assert lane.active() is later
    waiting.add(_steps("s", range(1)))
    later.running = 1  # b is in flight: it keeps the server until its steps are done
    assert lane.active() is later
    later.steps.clear()
    assert lane.active() is None  # b's last requests end before s starts (one load each)
    later.running = 0
    assert lane.active() is waiting


def test_a_lost_server_hands_its_work_over_and_nothing_answered_is_asked_again() -> None:
    clock, log = Clock(), Log()
    dying, healthy = FakeServer(clock, delay=0.02, die_after=5), FakeServer(clock)
    lost: list[tuple[str, list[str]]] = []

    def on_lost(server: str, error: BackendError, feeds: list[Feed]) -> dict[str, str]:
        lost.append((server, [feed.model for feed in feeds]))
        return {feed.model: "healthy" for feed in feeds}

    lanes = [Lane("dying", dying, [_feed("a", range(10)), _feed("b", range(4))]),
             Lane("healthy", healthy, [_feed("c", range(4))])]
    LaneScheduler(lanes, parallel=2, on_answers=log.on_answers, on_batch=log.on_batch,
                  on_server_lost=on_lost).run()
    assert lost == [("dying", ["a", "b"])]
    answered = [(m, p) for m, p, _, _ in dying.requests + healthy.requests]
    assert len(answered) == len(set(answered)) == 18  # every step answered exactly once
    assert {(m, p) for m, p in dying.failed} <= {(m, p) for m, p, _, _ in healthy.requests}  # failed ones moved
    assert sorted(log.batched) == sorted([(m, i) for m, n in (("a", 10), ("b", 4), ("c", 4)) for i in range(n)])


def test_a_step_cut_short_on_a_lost_server_keeps_its_answer_as_cached() -> None:
    """An unparseable first answer arrives, the server dies before the retry: the retry elsewhere reads
    the stored first answer from the step's cache and asks only the retry."""

    class Junk(FakeServer):
        def chat(self, model: str, prompt: str, *, options: Mapping[str, Any]) -> LLMResult:
            if options.get("temperature") == 0.0 and prompt.endswith("p0"):
                self.requests.append((model, prompt, 0.0, 0.0))
                self.die_after = 0  # everything after this answer fails
                return LLMResult("junk", model, "d", 1, 1, 0, 0, 0, 0, "stop", 1)
            return super().chat(model, prompt, options=options)

    clock, log = Clock(), Log()
    dying, healthy = Junk(clock), FakeServer(clock)
    lanes = [Lane("dying", dying, [_feed("a", range(1))]), Lane("healthy", healthy, [])]
    LaneScheduler(lanes, parallel=1, on_answers=log.on_answers, on_batch=log.on_batch,
                  on_server_lost=lambda s, e, feeds: {f.model: "healthy" for f in feeds}).run()
    assert [p for _, p, _, _ in dying.requests] == ["a/p0"]
    assert [p for _, p, _, _ in healthy.requests] == ["a/p0"]  # the retry only
    assert log.batched == [("a", 0)]


def test_a_lost_server_with_nowhere_to_go_stops_the_job_with_the_callbacks_error() -> None:
    clock, log = Clock(), Log()

    class Paused(Exception):
        pass

    def on_lost(server: str, error: BackendError, feeds: list[Feed]) -> dict[str, str]:
        raise Paused(server)

    lanes = [Lane("dying", FakeServer(clock, die_after=2), [_feed("a", range(8))]),
             Lane("other", FakeServer(clock, delay=0.05), [_feed("b", range(8))])]
    with pytest.raises(Paused, match="dying"):
        LaneScheduler(lanes, parallel=2, on_answers=log.on_answers, on_batch=log.on_batch,
                      on_server_lost=on_lost).run()
    assert sorted(log.batched) == sorted(log.stored)  # whatever arrived was written


def test_a_feed_that_never_closes_is_reported_not_waited_on_forever() -> None:
    clock, log = Clock(), Log()
    lanes = [Lane("one", FakeServer(clock), [Feed("s", parse_annotator_answer, closed=False)])]
    with pytest.raises(RuntimeError, match="stalled: s on one"):
        LaneScheduler(lanes, parallel=1, on_answers=log.on_answers, on_batch=log.on_batch,
                      on_server_lost=_never_lost).run()
