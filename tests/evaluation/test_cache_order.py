"""Cache-aware order: calls sharing a prefix back to back on one slot, P groups side by side; measured against
the simulated server's per-slot prompt caches (evaluated tokens against the bound) and kept on a resumed plan."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMResult
from evaluation.llm.landing import landed
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.llm.policy import RetryPolicy
from evaluation.runs.cache_order import CacheOrder, InTransit
from evaluation.runs.lanes import Feed, Lane, LaneScheduler
from evaluation.runs.scheduler import Attempt, Step
from tests.ollama_sim import OllamaSim, SimConfig
from tests.ollama_sim.config import ReplyRule

NO_RETRY = RetryPolicy(transport_retries=0)


@dataclass
class S:
    prompt: str
    group: object = None


def test_a_freed_slot_continues_its_group_and_new_slots_open_new_groups():
    order = CacheOrder([S("a2", "A"), S("b1", "B"), S("a1", "A"), S("c1", "C"), S("b2", "B")])
    first, second = order.take(), order.take()
    assert (first.step.prompt, second.step.prompt) == ("a1", "b1")  # a group's calls in prompt order
    assert not first.opens_group and second.opens_group  # B opens while A is under way: it goes after A's
    again = order.take("A")
    assert again.step.prompt == "a2" and not again.opens_group  # the slot that ran A continues A
    then = order.take("A")
    assert then.step.prompt == "c1" and then.opens_group  # A is done: the next group opens, B still runs
    assert order.take("B").step.prompt == "b2"
    assert order.take("C") is None and len(order) == 0


def test_a_slot_helps_a_long_group_only_or_when_nothing_else_runs():
    order = CacheOrder([S(f"a{i}", "A") for i in range(5)] + [S("b0", "B"), S("b1", "B")], join_at=4)
    assert order.take().step.group == "A" and order.take().step.group == "B"
    assert order.take().step.group == "A"  # a third slot, no group left to open: A has 4 left, so it helps
    assert order.take("B").step.prompt == "b1"
    assert order.take("B") is None  # A has 3 left, fewer than join_at: this slot waits
    assert order.take("B", idle=True).step.group == "A"  # ... unless nothing runs at all
    assert [order.take("A").step.prompt for _ in range(2)] == ["a3", "a4"]


def test_a_step_put_back_goes_first_and_the_naive_order_is_the_planned_one():
    order = CacheOrder([S("a1", "A"), S("b1", "B")])
    taken = order.take().step
    order.put_back(taken)
    assert order.take().step.prompt == "a1"
    naive = CacheOrder([S("b1", "B"), S("a1", "A"), S("b2", "B")], grouped=False)
    assert [naive.take("A").step.prompt for _ in range(3)] == ["b1", "a1", "b2"]
    assert [s.prompt for s in CacheOrder([S("b", "B"), S("a", "A"), S("b0", "B")])] == ["b", "b0", "a"]


PREFIX, SUFFIX, GROUPS, CALLS = 300, 20, 6, 4


def _steps(groups: range = range(GROUPS), skip_first: bool = False) -> list[Step]:
    """GROUPS prefix groups of CALLS prompts: PREFIX words shared, SUFFIX words of each prompt's own; planned
    call-major (the first call of every group, then the second...), as DHP plans its texts."""
    steps = []
    for call in range(1 if skip_first else 0, CALLS):
        for group in groups:
            head = " ".join(f"g{group}w{i}" for i in range(PREFIX))
            prompt = head + " " + " ".join(f"g{group}c{call}s{i}" for i in range(SUFFIX))
            steps.append(Step(len(steps), prompt, [Attempt(f"k{group}-{call}", {"seed": 1})], group=group))
    return steps


def _lost(server, error, feeds):
    raise error


def _evaluated(steps: list[Step], *, grouped: bool) -> int:
    config = SimConfig(models=["m:1b"], parallel=2, cache_slots=2, profile="ollama", context_length=8192,
                       rules=(ReplyRule("Score: 3"),), call_time=0.02)
    with OllamaSim(config) as sim, OllamaBackend(sim.url, policy=NO_RETRY) as backend:
        feed = Feed("m:1b", lambda text: ParsedAnswer(score=3, status="ok"), grouped=grouped)
        feed.add(steps)
        LaneScheduler([Lane(sim.url, backend, [feed])], parallel=2, on_answers=lambda arrived: None,
                      on_batch=lambda feed, outcomes, interrupted: None, on_server_lost=_lost).run()
        assert sim.stats.requests == len(steps)
        return sim.stats.prompt_tokens_evaluated


def test_cache_order_evaluates_about_the_bound_and_far_less_than_the_planned_order():
    # The bound: each group's prefix once, each call's own suffix: 6 * 300 + 24 * 20 = 2,280 tokens.
    bound = GROUPS * PREFIX + GROUPS * CALLS * SUFFIX
    ordered = _evaluated(_steps(), grouped=True)
    assert bound <= ordered <= 1.2 * bound
    naive = _evaluated(_steps(), grouped=False)  # two slots take turns over six groups: every prefix again
    assert naive >= 2 * ordered


@pytest.mark.parametrize("done_groups", [1, 3])
def test_a_resumed_plan_keeps_its_groups(done_groups):
    """A resumed job plans only what is not stored: whole groups done before the stop are gone, the others lost
    their first call. Their remaining calls still go group by group (on a restarted server, caches empty)."""
    steps = _steps(range(done_groups, GROUPS), skip_first=True)
    left = GROUPS - done_groups
    bound = left * PREFIX + left * (CALLS - 1) * SUFFIX
    assert bound <= _evaluated(steps, grouped=True) <= 1.2 * bound


class _Landing:
    """A server whose requests take `transit[prompt]` seconds to reach a slot (said with `landed`, as the
    streaming Ollama client does at the answer's headers), then answer at once; logs what happened in order."""

    def __init__(self, transit: dict[str, float], *, signals: bool) -> None:
        self.transit, self.signals_landing = transit, signals
        self.lock = threading.Lock()
        self.events: list[tuple[str, str]] = []
        self.url = "http://landing"

    def _log(self, what: str, prompt: str) -> None:
        with self.lock:
            self.events.append((what, prompt))

    def chat(self, model: str, prompt: str, *, options, system=None, think=None) -> LLMResult:
        self._log("sent", prompt)
        time.sleep(self.transit.get(prompt, 0.0))
        self._log("in slot", prompt)
        landed()
        return LLMResult("Score: 3", model, None, 1, 1, 0, 0, 0, 0, "stop", 1)


def _run_groups(backend: _Landing) -> list[tuple[str, str]]:
    """Group A has three calls, B and C one each, two at a time: A's second call continues on A's slot while
    B ends and C opens in its place."""
    prompts = ["a1", "a2", "a3", "b1", "c1"]
    steps = [Step(i, prompt, [Attempt(f"k{i}", {"seed": 1})], group=prompt[0]) for i, prompt in enumerate(prompts)]
    feed = Feed("m", lambda text: ParsedAnswer(score=3, status="ok"))
    feed.add(steps)
    LaneScheduler([Lane(backend.url, backend, [feed])], parallel=2, on_answers=lambda arrived: None,
                  on_batch=lambda feed, outcomes, interrupted: None, on_server_lost=_lost).run()
    return backend.events


SLOW_SECOND = {"a2": 0.5, "b1": 0.2}  # a2 takes 0.5 s to reach its slot; b1 ends after 0.2 s


def test_a_new_group_goes_only_once_the_calls_continuing_before_it_hold_their_slots_however_long_that_takes():
    # C opens when B ends (0.2 s), while a2 is still on its way to A's slot (until 0.5 s): C is sent only
    # after a2 holds it, not after a fixed delay (0.3 s is longer than any a clock-based rule would pick).
    events = _run_groups(_Landing(SLOW_SECOND, signals=True))
    assert events.index(("in slot", "a2")) < events.index(("sent", "c1"))


def test_a_backend_that_cannot_say_when_it_landed_sends_a_new_group_at_once():
    events = _run_groups(_Landing(SLOW_SECOND, signals=False))
    assert events.index(("sent", "c1")) < events.index(("in slot", "a2"))


def test_a_slot_that_came_free_is_kept_for_its_group_against_a_first_call_already_waiting():
    """Three at a time. C opens when B ends (0.2 s) and waits for d2, still on its way to D's slot (until 0.65 s).
    A's slot comes free at 0.3 s; a2, handed out after c1, takes 0.8 s to reach it. c1 must wait for a2 too: the
    slot a2 goes to is the one c1 would find free (and share most with) if it went when d2 landed."""
    prompts = ["a1", "a2", "b1", "d1", "d2", "c1"]
    backend = _Landing({"a1": 0.3, "a2": 0.8, "b1": 0.2, "d1": 0.05, "d2": 0.6}, signals=True)
    steps = [Step(i, prompt, [Attempt(f"k{i}", {"seed": 1})], group=prompt[0]) for i, prompt in enumerate(prompts)]
    feed = Feed("m", lambda text: ParsedAnswer(score=3, status="ok"))
    feed.add(steps)
    LaneScheduler([Lane(backend.url, backend, [feed])], parallel=3, on_answers=lambda arrived: None,
                  on_batch=lambda feed, outcomes, interrupted: None, on_server_lost=_lost).run()
    events = backend.events
    assert events.index(("sent", "a2")) < events.index(("sent", "c1"))
    assert events.index(("in slot", "d2")) < events.index(("in slot", "a2")) < events.index(("sent", "c1"))


def test_a_held_ticket_keeps_later_first_calls_waiting_until_it_lands():
    transit, stop = InTransit(), threading.Event()
    chain = transit.send(continues=False)  # a group's first call: never waited for while it travels
    opener = transit.send(continues=False)
    assert transit.wait_for_earlier(opener, stop) is True
    transit.hold(chain)  # its call ended; the slot is kept for the group's next call
    done: list[bool] = []
    waiter = threading.Thread(target=lambda: done.append(transit.wait_for_earlier(opener, stop)))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()
    transit.land(chain)  # the next call holds the slot (or the group is done)
    waiter.join(2)
    assert done == [True] and transit.pending() == 0


def test_in_transit_waits_for_earlier_continuing_calls_only_and_gives_way_to_stop():
    transit = InTransit()
    first, second = transit.send(continues=True), transit.send(continues=True)
    opener = transit.send(continues=False)
    third = transit.send(continues=False)
    stop = threading.Event()
    transit.land(first)
    done: list[bool] = []
    waiter = threading.Thread(target=lambda: done.append(transit.wait_for_earlier(third, stop)))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # `second` continues a group and is still on its way
    transit.land(second)
    waiter.join(2)
    assert done == [True]  # another group's first call (`opener`, never landed) does not hold it back
    later = transit.send(continues=True)
    assert transit.wait_for_earlier(later, stop) is True  # nor do calls handed out after it
    stop.set()
    assert transit.wait_for_earlier(later + 1, stop) is False  # `later` is on its way and the job was stopped
    assert transit.pending() == 1 and opener not in (first, second)
