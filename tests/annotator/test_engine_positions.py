"""Counterbalanced positions, as plain data: two-output screens end with every system first as often as second
(within one) and an input's judges alternating, for random designs; larger screens rotate as a Latin square."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import pytest

from annotator.engine.positions import imbalance, pair_orders, rotation_orders


@pytest.mark.parametrize("seed", range(40))
def test_random_pair_designs_are_balanced_within_one(seed):
    rng = random.Random(seed)
    systems = [f"s{k}" for k in range(rng.randint(2, 7))]
    screens = []
    for segment in range(rng.randint(1, 40)):
        a, b = rng.sample(systems, 2)
        screens += [(f"in{segment}", (a, b) if rng.random() < 0.5 else (b, a)) for _ in range(rng.randint(1, 5))]
    rng.shuffle(screens)
    orders = pair_orders(screens, seed=seed)
    assert [set(o) for o in orders] == [set(s) for _, s in screens]
    assert imbalance(orders) <= 1
    first: dict[tuple, Counter] = defaultdict(Counter)
    for (segment, systems_shown), order in zip(screens, orders, strict=True):
        first[(segment, frozenset(systems_shown))][order[0]] += 1
    # an input's judges of one pair alternate: its two systems are first within one of each other
    assert all(max(c.values()) - (min(c.values()) if len(c) == 2 else 0) <= 1 for c in first.values())


def test_an_unbalanced_start_is_what_the_check_catches():
    assert imbalance([("a", "b"), ("a", "b")]) == 2
    assert imbalance(pair_orders([("x", ("a", "b")), ("y", ("a", "b"))])) == 0


def test_screens_of_three_rotate_as_a_latin_square():
    orders = rotation_orders([("a", "b", "c")] * 6, seed=1)
    assert imbalance(orders) == 0
    assert {o[0] for o in orders[:3]} == {"a", "b", "c"}
    with pytest.raises(ValueError, match="two outputs"):
        pair_orders([("x", ("a", "b", "c"))])


def test_the_judges_of_an_input_rotate_it_and_the_campaign_stays_within_one():
    """60 random designs: 3-6 systems, every input with all of them, 1-30 inputs, 1-6 judges each, the screens in
    the order the planner makes them (judge by judge, inputs shuffled)."""
    for trial in range(60):
        rng = random.Random(trial)
        systems = tuple(f"s{n}" for n in range(rng.randint(3, 6)))
        inputs = [f"i{n}" for n in range(rng.randint(1, 30))]
        screens, segments = [], []
        for _ in range(rng.randint(1, 6)):
            order = inputs[:]
            rng.shuffle(order)
            screens += [systems] * len(order)
            segments += order
        orders = rotation_orders(screens, seed=trial, inputs=segments)
        assert imbalance(orders) <= 1, trial
        for segment in inputs:
            mine = [o for o, s in zip(orders, segments, strict=True) if s == segment]
            assert imbalance(mine) <= 1, (trial, segment)  # an input's judges: every system in different places
            assert len(set(mine)) == min(len(mine), len(systems))
