"""Attempt kinds: every stored attempt number reads back as one kind of call, and the scheduler numbers its calls
so that they do."""

from __future__ import annotations

import threading

import pytest

from evaluation.engine.parsing import parse_annotator_answer
from evaluation.engine.repair import REPAIR_REQUEST
from evaluation.llm.base import LLMResult
from evaluation.llm.policy import RetryPolicy
from evaluation.runs.attempts import AttemptKind, AttemptNumber, read_number
from evaluation.runs.scheduler import Step, perform, plan_attempts
from tests.evaluation.test_repair import NO_LOCATIONS, RESTATED

FIRST, RETRY, LONGER, REPAIR = AttemptKind.FIRST, AttemptKind.RETRY, AttemptKind.LONGER, AttemptKind.REPAIR


@pytest.mark.parametrize(("number", "kind", "attempt_try"), [
    (0, FIRST, 0), (1, RETRY, 1), (9, RETRY, 9), (10, LONGER, 0), (13, LONGER, 3),
    (100, REPAIR, 0), (102, REPAIR, 2), (110, REPAIR, 0), (113, REPAIR, 3),
])
def test_read_number_gives_the_kind_and_try_of_each_stored_number(number: int, kind: AttemptKind,
                                                                  attempt_try: int) -> None:
    assert read_number(number) == AttemptNumber(kind, attempt_try)


@pytest.mark.parametrize("number", [-1, 20, 99, 120, 200, 210])
def test_read_number_refuses_numbers_no_call_is_stored_under(number: int) -> None:
    with pytest.raises(ValueError):
        read_number(number)


def test_answer_tries_stop_below_the_longer_budget_numbers() -> None:
    assert RetryPolicy(answer_attempts=10).answer_attempts == 10
    with pytest.raises(ValueError, match="answer_attempts"):
        RetryPolicy(answer_attempts=11)
    with pytest.raises(ValueError, match="tries"):
        plan_attempts("m", "d", "p", {}, attempts=11, retry_temperature=0.1)


class _Backend:
    """Answers a repair request with `repaired`, every other prompt with the next of `answers`."""

    url = "http://fake"

    def __init__(self, answers: list[str], repaired: str = "") -> None:
        self.answers, self.repaired = list(answers), repaired

    def chat(self, model: str, prompt: str, **_: object) -> LLMResult:
        text = self.repaired if REPAIR_REQUEST in prompt else self.answers.pop(0)
        return LLMResult(text, model, "d", 1, 1, 0, 0, 0, 0, "stop", 1)


def _step(repair: bool) -> Step:
    return Step(1, "p", plan_attempts("m", "d", "p", {"seed": 1}, attempts=3, retry_temperature=0.1), repair=repair)


def test_retries_are_numbered_as_retries() -> None:
    outcome = perform(_Backend(["no idea", "still no idea", RESTATED]), "m", _step(False), parse_annotator_answer,
                      threading.Event())
    assert [(a.number, a.kind) for a in outcome.attempts] == [(0, FIRST), (1, RETRY), (2, RETRY)]
    assert outcome.retries == 2


def test_a_repair_is_numbered_as_the_repair_of_its_try_and_not_counted_as_a_retry() -> None:
    outcome = perform(_Backend([NO_LOCATIONS], repaired=RESTATED), "m", _step(True), parse_annotator_answer,
                      threading.Event())
    assert [(a.number, a.kind) for a in outcome.attempts] == [(0, FIRST), (100, REPAIR)]
    assert outcome.attempts[outcome.used].kind is REPAIR and outcome.retries == 0
