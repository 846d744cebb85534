"""Draw a campaign's control arm: which outputs are first shown without machine spans, and to whom.

Plain data in, plain data out (no Django), so the design can be checked by hand. The arm is *crossed*: an
output in the arm is unprimed for half of its annotators (at least one) and primed for the rest, so every
arm output is seen both ways and its difficulty cancels out of the paired comparison. The draw is balanced:

- over evaluators: outputs are drawn within strata of "which evaluators annotated this output" (largest
  remainders), so each evaluator has about the same share of its outputs in the arm;
- over annotators: each arm output goes unprimed to the annotators of it who have the fewest unprimed
  outputs so far (ties broken by the seed), so the unprimed load stays even. With one annotator per output
  there is nothing to cross; the draw is then also stratified by annotator.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence


def unprimed_count(annotators: int) -> int:
    """How many of an arm output's annotators see it unprimed: half of them, at least one."""
    return max(1, annotators // 2)


def _quotas(sizes: Mapping[Hashable, int], share: float, rng: random.Random) -> dict[Hashable, int]:
    """Split round(share * total) over strata by largest remainders (ties in a seeded order)."""
    total = round(share * sum(sizes.values()))
    exact = {key: share * n for key, n in sizes.items()}
    quotas = {key: math.floor(value) for key, value in exact.items()}
    keys = sorted(sizes, key=repr)
    rng.shuffle(keys)
    keys.sort(key=lambda key: exact[key] - quotas[key], reverse=True)
    for key in keys[: max(0, total - sum(quotas.values()))]:
        quotas[key] += 1
    return quotas


def control_arm_draw(
    outputs: Mapping[int, Sequence[int]], evaluators: Mapping[int, Sequence[int]], *, share: float, seed: int
) -> set[tuple[int, int]]:
    """Return the (output, annotator) pairs that start unprimed.

    `outputs` maps each output to its annotators; `evaluators` maps it to the evaluators (runs) with an
    annotation of it. `share` (0..1) is the share of outputs in the arm."""
    if not 0 <= share <= 1:
        raise ValueError(f"control_arm: {share} is not a share between 0 and 1")
    if share == 0 or not outputs:
        return set()
    rng = random.Random(f"control-arm:{seed}")
    strata: dict[Hashable, list[int]] = defaultdict(list)
    for output, annotators in sorted(outputs.items()):
        alone = annotators[0] if len(annotators) == 1 else None
        strata[(tuple(sorted(evaluators.get(output, ()))), alone)].append(output)
    quotas = _quotas({key: len(members) for key, members in strata.items()}, share, rng)
    chosen: list[int] = []
    for key in sorted(strata, key=repr):
        chosen += rng.sample(strata[key], quotas[key])
    rng.shuffle(chosen)
    load: dict[int, int] = defaultdict(int)
    unprimed: dict[int, set[int]] = {}
    for output in chosen:
        annotators = list(outputs[output])
        tie = {a: rng.random() for a in annotators}
        annotators.sort(key=lambda a: (load[a], tie[a]))
        unprimed[output] = set(annotators[: unprimed_count(len(annotators))])
        for annotator in unprimed[output]:
            load[annotator] += 1
    _even_out(outputs, unprimed, load)
    return {(output, annotator) for output, members in unprimed.items() for annotator in members}


def _even_out(outputs: Mapping[int, Sequence[int]], unprimed: dict[int, set[int]], load: dict[int, int]) -> None:
    """Move unprimed roles along chains of shared outputs while some annotator has two or more unprimed
    outputs more than another it can reach (the greedy pass leaves such gaps when shared outputs come late).
    Each move takes one from the heaviest annotator and gives one to a lighter one; the others keep theirs."""
    while (path := _chain(outputs, unprimed, load)) is not None:
        for output, giver, taker in path:
            unprimed[output] = (unprimed[output] - {giver}) | {taker}
        load[path[0][1]] -= 1
        load[path[-1][2]] += 1


def _chain(outputs: Mapping[int, Sequence[int]], unprimed: dict[int, set[int]],
           load: dict[int, int]) -> list[tuple[int, int, int]] | None:
    """A chain heavy -(output)-> b -(output)-> ... -> light with load[light] <= load[heavy] - 2, as
    (output, giver, taker) steps; None when there is none (breadth-first, deterministic order)."""
    for heavy in sorted(load, key=lambda a: (-load[a], a)):
        parent: dict[int, tuple[int, int, int] | None] = {heavy: None}
        queue = [heavy]
        while queue:
            giver = queue.pop(0)
            for output in sorted(o for o, members in unprimed.items() if giver in members):
                for taker in sorted(a for a in outputs[output] if a not in unprimed[output]):
                    if taker in parent:
                        continue
                    parent[taker] = (output, giver, taker)
                    if load[taker] <= load[heavy] - 2:
                        steps = []
                        step = parent[taker]
                        while step is not None:
                            steps.append(step)
                            step = parent[step[1]]
                        return steps[::-1]
                    queue.append(taker)
    return None
