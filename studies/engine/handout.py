"""Choose a participant's share of a link's pool: distinct outputs, each participant close to the design.

Plain data in and out (no Django), so the rule can be checked by hand. The pool's places ("slots": judge k of
output i, primed or unprimed) and the decoys on each output are fixed when the campaign is created; handing
out only decides who takes which. Each pick keeps the participant's count of unprimed outputs and of decoys as
close as it can to their rates over the whole pool (so everyone gets about the asked share, within one item),
then takes the neediest output (the fewest judges so far), then the first in item order. A participant never
takes two places on one output, so an output's unprimed and primed judges are always different people: the
control arm stays crossed however people come and go.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Slot:
    """A free place of the pool as the chooser sees it."""

    pk: int
    output: int
    unprimed: bool
    decoys: int  # decoys shown on the output
    judges: int  # judges the output has or holds now (its need: fewer first)
    position: int  # the output's place in item order


@dataclass(frozen=True)
class Share:
    """What a participant holds already (real outputs, unprimed ones among them, decoys on them)."""

    outputs: int = 0
    unprimed: int = 0
    decoys: int = 0


@dataclass(frozen=True)
class Rates:
    """Unprimed places and decoys per place over the whole pool: what each participant should get per output."""

    unprimed: float = 0.0
    decoys: float = 0.0


def _gap(share: Share, slot: Slot, rates: Rates) -> float:
    n = share.outputs + 1
    unprimed = share.unprimed + slot.unprimed
    decoys = share.decoys + slot.decoys
    return round(abs(unprimed - rates.unprimed * n) + abs(decoys - rates.decoys * n), 9)


def slots_choose(free: Sequence[Slot], *, need: int, held: Share, rates: Rates,
                 avoid: Iterable[int] = ()) -> list[Slot]:
    """Return up to `need` of the `free` slots for one participant, on distinct outputs none of which is in
    `avoid` (outputs they hold or saw, planted copies' originals included), picked one at a time as the module
    says. Slots of one kind (unprimed or not, decoys on the output) are interchangeable but for need and order,
    so each pick looks at the best slot of each kind only."""
    kinds: dict[tuple[bool, int], list[Slot]] = {}
    for slot in sorted(free, key=lambda s: (s.judges, s.position, s.pk)):
        kinds.setdefault((slot.unprimed, slot.decoys), []).append(slot)
    cursor = dict.fromkeys(kinds, 0)
    taken = set(avoid)
    chosen: list[Slot] = []
    share = held
    while len(chosen) < need:
        best: Slot | None = None
        best_key: tuple = ()
        for kind, members in kinds.items():
            i = cursor[kind]
            while i < len(members) and members[i].output in taken:
                i += 1
            cursor[kind] = i
            if i == len(members):
                continue
            slot = members[i]
            key = (_gap(share, slot, rates), slot.judges, slot.position, slot.pk)
            if best is None or key < best_key:
                best, best_key = slot, key
        if best is None:
            break
        chosen.append(best)
        taken.add(best.output)
        share = Share(share.outputs + 1, share.unprimed + best.unprimed, share.decoys + best.decoys)
    return chosen
