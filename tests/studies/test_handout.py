"""The rule that picks a participant's places (studies.engine.handout), by hand, without a database."""

from __future__ import annotations

from studies.engine.handout import Rates, Share, Slot, slots_choose


def _slot(pk: int, output: int, *, unprimed: bool = False, decoys: int = 0, judges: int = 0) -> Slot:
    return Slot(pk=pk, output=output, unprimed=unprimed, decoys=decoys, judges=judges, position=output)


def test_without_arm_or_decoys_the_neediest_outputs_go_first_in_item_order():
    free = [_slot(1, 1, judges=1), _slot(2, 2), _slot(3, 3), _slot(4, 4, judges=1)]
    assert [s.output for s in slots_choose(free, need=3, held=Share(), rates=Rates())] == [2, 3, 1]


def test_each_pick_keeps_the_unprimed_count_at_its_rate():
    # A quarter of the places are unprimed: of four outputs, one is unprimed, and it is not the first pick
    # (after one pick the share would be 1 of 1 against 0.25).
    free = [_slot(k, k, unprimed=k <= 2) for k in range(1, 7)]
    chosen = slots_choose(free, need=4, held=Share(), rates=Rates(unprimed=0.25))
    assert [(s.output, s.unprimed) for s in chosen] == [(3, False), (1, True), (4, False), (5, False)]


def test_one_output_never_twice_and_never_one_to_avoid():
    # Output 1 has both of its places free (primed and unprimed): only one of them can be taken.
    free = [_slot(1, 1), _slot(2, 1, unprimed=True), _slot(3, 2), _slot(4, 3)]
    chosen = slots_choose(free, need=3, held=Share(), rates=Rates(), avoid={3})
    assert sorted(s.output for s in chosen) == [1, 2]


def test_decoys_follow_their_rate_given_what_is_held():
    # Half a decoy per place; the participant holds two outputs with two decoys, one above their rate. Third
    # output: 3 decoys against 1.5 or 2 against 1.5, so none (output 3); fourth: 3 against 2 or 2 against 2, none
    # again (output 4); fifth: only decoy-bearing outputs are left (output 1), 3 against 2.5.
    free = [_slot(1, 1, decoys=1), _slot(2, 2, decoys=1), _slot(3, 3), _slot(4, 4)]
    chosen = slots_choose(free, need=3, held=Share(outputs=2, decoys=2), rates=Rates(decoys=0.5))
    assert [s.output for s in chosen] == [3, 4, 1]
