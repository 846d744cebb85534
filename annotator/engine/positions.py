"""Counterbalanced positions for comparison units: which output sits where on each screen, so that every system
appears in every position equally often (within one), over a campaign's units and over the judges of one input.

Django-free. For two outputs a screen is an edge between two systems, and putting one first is orienting the edge;
an input judged by k people alternates its order from judge to judge, so only an odd k leaves one screen per input
to orient, and those are oriented along Euler circuits (the odd-degree systems joined to a dummy system first), which
leaves each system's first-minus-second count at -1, 0 or 1. For more outputs each screen takes the rotation of its
systems that adds least to the counts so far (a Latin-square design when the same systems meet on every screen).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence

Screen = tuple[str, ...]
"""The systems of one screen's outputs, in a canonical order (the caller's)."""


def pair_orders(screens: Sequence[tuple[str, Screen]], *, seed: int = 0) -> list[Screen]:
    """The order to show each two-output screen in. `screens` are (input, its two systems) in creation order; the
    answer keeps that order. Within an input the order alternates; across inputs each system's first-minus-second
    count ends within one of zero."""
    by_input: dict[str, list[int]] = defaultdict(list)  # one input's screens of one pair of systems
    for index, (segment, systems) in enumerate(screens):
        if len(systems) != 2:
            raise ValueError(f"screen {index}: two outputs, not {len(systems)}")
        by_input[f"{segment}\0{min(systems)}\0{max(systems)}"].append(index)
    flips = _orient({key: screens[indices[0]][1] for key, indices in by_input.items() if len(indices) % 2 == 1}, seed)
    answer: list[Screen] = [()] * len(screens)
    for key, indices in by_input.items():
        a, b = screens[indices[0]][1]
        first = (b, a) if flips.get(key, False) else (a, b)
        for k, index in enumerate(indices):
            answer[index] = first if k % 2 == 0 else first[::-1]
    return answer


def _orient(edges: dict[str, Screen], seed: int) -> dict[str, bool]:
    """Whether each edge (key -> (a, b)) is flipped to (b, a), so every system's out-minus-in degree is within one."""
    adjacency: dict[str, list[tuple[str, str, bool]]] = defaultdict(list)  # system -> (edge key, other end, as given)
    for key, (a, b) in edges.items():
        adjacency[a].append((key, b, True))
        adjacency[b].append((key, a, False))
    dummy = "\0dummy"
    odd = sorted(s for s, ends in adjacency.items() if len(ends) % 2 == 1)
    for n, system in enumerate(odd):
        key = f"\0{n}"
        adjacency[system].append((key, dummy, True))
        adjacency[dummy].append((key, system, False))
    rng = random.Random(seed)
    for ends in adjacency.values():
        rng.shuffle(ends)
    used: set[str] = set()
    flips: dict[str, bool] = {}
    cursor: dict[str, int] = Counter()
    for start in sorted(adjacency):
        # Hierholzer's walk, iterative: leaving a system along an unused edge orients that edge away from it
        stack = [start]
        while stack:
            system = stack[-1]
            ends = adjacency[system]
            while cursor[system] < len(ends) and ends[cursor[system]][0] in used:
                cursor[system] += 1
            if cursor[system] == len(ends):
                stack.pop()
                continue
            key, other, as_given = ends[cursor[system]]
            used.add(key)
            if key in edges:
                flips[key] = not as_given  # walked from `system` to `other`: `system` goes first
            stack.append(other)
    return flips


def rotation_orders(screens: Sequence[Screen], *, seed: int = 0, inputs: Sequence[str] | None = None) -> list[Screen]:
    """The order to show each screen of any size in, as a rotation of its systems.

    With `inputs` (each screen's input) the judges of one input take consecutive rotations, so they see it in
    different orders (a Latin square once it has as many judges as outputs), and each input starts where the
    campaign's position counts stay most even, preferring where the last input with the same systems stopped:
    the rotations then tile the cycle, so where every input has the same systems each rotation is used equally
    often within one (inputs of different systems can leave more: only rotations are tried). Without `inputs`,
    each screen takes the rotation that adds least to the counts so far. Ties are broken by the seed. For two
    outputs use `pair_orders`.
    """
    rng = random.Random(seed)
    counts: Counter[tuple[str, int]] = Counter()

    def rotation(systems: Screen, k: int) -> Screen:
        return tuple(systems[(k + i) % len(systems)] for i in range(len(systems)))

    answer: list[Screen] = [()] * len(screens)
    if inputs is None:
        for n, systems in enumerate(screens):
            options = [rotation(systems, k) for k in range(len(systems))]
            costs = [sum(counts[(s, p)] for p, s in enumerate(r)) for r in options]
            answer[n] = rng.choice([r for r, c in zip(options, costs, strict=True) if c == min(costs)])
            counts.update((s, p) for p, s in enumerate(answer[n]))
        return answer
    groups: dict[tuple[str, Screen], list[int]] = {}
    for n, systems in enumerate(screens):
        groups.setdefault((inputs[n], systems), []).append(n)
    cursor: dict[Screen, int] = {}  # per set of systems: where the next input's rotations start
    for (_, systems), indices in groups.items():
        width = len(systems)

        def spread(start: int, indices=indices, systems=systems) -> int:
            after = Counter(counts)
            for j in range(len(indices)):
                after.update((s, p) for p, s in enumerate(rotation(systems, start + j)))
            return sum(v * v for v in after.values())

        costs = [spread(start) for start in range(width)]
        best = [k for k, c in enumerate(costs) if c == min(costs)]
        # the rotations tile the cycle from input to input (whole cycles are balanced already)
        start = cursor.get(systems) if cursor.get(systems) in best else rng.choice(best)
        for j, n in enumerate(indices):
            answer[n] = rotation(systems, start + j)
            counts.update((s, p) for p, s in enumerate(answer[n]))
        cursor[systems] = (start + len(indices)) % width
    return answer


def imbalance(orders: Sequence[Screen]) -> int:
    """The largest difference, over systems, between the most and the least often a system was in some position
    (among the positions its screens had): 0 or 1 is balanced."""
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    for order in orders:
        for position, system in enumerate(order):
            counts[system][position] += 1
    width = max((len(o) for o in orders), default=0)
    return max((max(c[p] for p in range(width)) - min(c[p] for p in range(width)) for c in counts.values()),
               default=0)
