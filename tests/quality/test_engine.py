"""Quality-check engine: Wilson intervals, the rubber-stamp rule, idle capping, decoy proposals and planting
(no database; expected values worked out by hand in the comments)."""

from __future__ import annotations

import random

import pytest

from annotator.engine import telemetry
from quality.engine import decoys, drawing
from quality.engine import figures as rules
from quality.engine.figures import Figures, Verdict
from quality.engine.planting import plant
from stats.errors import StatsError
from stats.intervals import wilson

approx = pytest.approx


def test_wilson_interval_matches_hand_computed_values():
    # 0/5: z^2 = 3.8415, denominator 1.7683, centre = 0.38415 / 1.7683 = 0.2172 = half-width -> [0, 0.4345]
    none = wilson(0, 5)
    assert (none.rate, none.low, none.high) == (0.0, 0.0, approx(0.4345, abs=1e-4))
    # 5/5 mirrors it: [1 - 0.4345, 1]
    assert (wilson(5, 5).low, wilson(5, 5).high) == (approx(0.5655, abs=1e-4), 1.0)
    # 8/10: centre (0.8 + 0.19207) / 1.38415 = 0.7168, half 1.96 * sqrt(0.016 + 0.0096) / 1.38415 = 0.2265
    eight = wilson(8, 10)
    assert (eight.low, eight.high) == (approx(0.4902, abs=1e-3), approx(0.9433, abs=1e-3))
    # nothing seen: nothing known
    assert (wilson(0, 0).rate, wilson(0, 0).low, wilson(0, 0).high) == (None, 0.0, 1.0)
    with pytest.raises(StatsError):
        wilson(3, 2)


def test_wilson_upper_bound_spares_one_early_miss_but_not_a_pattern():
    # One decoy missed out of one: upper bound 0.7935 >= 0.6, not flagged; 0 of 4: 0.4899 < 0.6, flagged.
    one_miss = Figures(decoys=wilson(0, 1))
    assert one_miss.decoys.high == approx(0.7935, abs=1e-4)
    assert rules.flag_reasons(one_miss, vigilance_min=0.6) == []
    assert rules.flag_reasons(Figures(decoys=wilson(0, 4)), vigilance_min=0.6) == [rules.DECOYS]
    assert rules.flag_reasons(Figures(planted=wilson(0, 4)), vigilance_min=0.6) == [rules.PLANTED]


def _stamps(ms: list[int], changed: int = 0) -> list[Verdict]:
    return [Verdict(confirmed=True, ms=t, changed=i < changed) for i, t in enumerate(ms)]


def test_rubber_stamp_rule_needs_five_fast_accepts_rarely_corrected():
    assert rules.is_rubber_stamping(_stamps([300, 250, 280, 310, 290]))  # 5 accepts, median 290 ms
    assert not rules.is_rubber_stamping(_stamps([300, 250, 280, 310]))  # only 4 accepts
    assert not rules.is_rubber_stamping(_stamps([300, 250, 280, 900, 1200, 1500]))  # median 600 ms
    # 1 of 20 changed = 5%: still flagged; 2 of 20 = 10%: corrected often enough to be reading
    assert rules.is_rubber_stamping(_stamps([200] * 20, changed=1))
    assert not rules.is_rubber_stamping(_stamps([200] * 20, changed=2))
    # rejections do not count as accepts
    rejections = [Verdict(confirmed=False, ms=100, changed=False)] * 10
    assert not rules.is_rubber_stamping(rejections)
    stamped = Figures(verdicts=_stamps([200] * 6))
    assert rules.flag_reasons(stamped, vigilance_min=0.6) == [rules.RUBBER_STAMP]
    assert "Potato" in rules.STAMP_RULE.describe()


def test_figures_rates_and_drift_by_fifth():
    verdicts = [Verdict(True, 400, False), Verdict(True, 2500, True), Verdict(False, 3000, False),
                Verdict(True, None, False), Verdict(False, 800, False)]
    figures = Figures(verdicts=verdicts)
    assert figures.confirm_rate == approx(3 / 5)
    assert figures.fast_confirm_rate == approx(1 / 5)  # only the 400 ms confirmation is under 1 s
    assert figures.changed_rate == approx(1 / 5)
    assert figures.median_ms == 1650.0  # median of 400, 800, 2500, 3000
    assert figures.drift() == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert rules.drift([True] * 3 + [False] * 7) == [1.0, 0.5, 0.0, 0.0, 0.0]


def test_idle_gaps_are_capped_at_sixty_seconds():
    # gaps 10, 200 (-> 60), 5, 61 (-> 60): 135 s active
    assert sum(telemetry.active_increment(gap) for gap in (10, 200, 5, 61)) == 135
    assert telemetry.active_increment(None) == 0
    assert telemetry.active_increment(-3) == 0
    assert telemetry.active_increment(75.5) == 60


def test_ms_is_clamped_to_ten_minutes():
    assert telemetry.clamp_ms(None) is None
    assert telemetry.clamp_ms(-5) == 0
    assert telemetry.clamp_ms("1234.7") == 1234
    assert telemetry.clamp_ms(10**9) == 600_000
    with pytest.raises(telemetry.TelemetryError, match="ms"):
        telemetry.clamp_ms("soon")
    with pytest.raises(telemetry.TelemetryError, match="ms"):
        telemetry.clamp_ms(float("nan"))


OUTPUT = "The Raptors beat the Celtics 112-98 on Monday. Kyle Lowry scored 24 points and Al Horford had 7."
INPUTS = "team: Raptors pts 112 | team: Celtics pts 98 | Kyle Lowry PTS 24 | Al Horford PTS 18 | day Monday"


def _drawn(seed: int, taken, *, outputs=None):
    """Three decoys drawn over OUTPUT (and any other outputs given) from the marked spans as donors."""
    outputs = outputs or [drawing.Output(key=1, text=OUTPUT, group="game", labels=frozenset({"A"}),
                                         candidates=tuple(decoys.decoy_candidates(OUTPUT, INPUTS, taken)))]
    sources = [drawing.Source(output=1, start=a, end=b, donor=decoys.Donor(
        label="A", text=OUTPUT[a:b], explanation=f'"{OUTPUT[a:b]}" is not what the data says.', severity=2,
        category="NAME", aspect="accuracy", position=a / len(OUTPUT))) for a, b in taken]
    return drawing.draw_decoys(outputs, sources, 0.6, random.Random(seed))


def test_decoys_never_overlap_any_source_span_nor_each_other():
    taken = [(4, 11), (47, 57)]  # "Raptors", "Kyle Lowry" are marked by some source
    for seed in range(20):
        placed = _drawn(seed, taken).placements
        assert placed
        for p in placed:
            assert OUTPUT[p.candidate.start:p.candidate.end] == p.candidate.text  # the stretch as it stands
            assert not any(p.candidate.start < b and a < p.candidate.end for a, b in taken)
        stretches = sorted((p.candidate.start, p.candidate.end) for p in placed)
        assert all(a[1] <= b[0] for a, b in zip(stretches, stretches[1:], strict=False))
    found = decoys.decoy_candidates(OUTPUT, INPUTS, taken)
    texts = {c.text for c in found}
    # single facts the input holds; "7" is not in the input (the output is wrong there): never in a decoy
    assert {"Celtics", "112", "98", "Monday", "24", "Al Horford"} <= texts
    assert not any("7" in t.split() for t in texts)
    assert {"phrase", "clause"} & {c.what for c in found}  # stretches of several words too, as evaluators mark
    for c in found:
        assert c.text == c.text.strip(" ,.") and c.text.split()[-1].lower() not in {"the", "of", "a", "and"}


def test_a_name_donor_gets_a_name_decoy_in_its_voice():
    # Both donors are names: so is every decoy, and its explanation is the donor's with the decoy's words quoted.
    for seed in range(10):
        for p in _drawn(seed, [(4, 11), (47, 57)]).placements:
            assert p.candidate.what == p.source.donor.kind == "name"
            assert p.explanation == f'"{p.candidate.text}" is not what the data says.'
            assert (p.source.donor.label, p.source.donor.severity, p.source.donor.category) == ("A", 2, "NAME")


def test_decoys_follow_the_real_spans_share_of_the_outputs():
    # Three outputs of one input: the donors' output is marked everywhere but one name; its siblings are free. The
    # share is what the donors' group can host, and a decoy may sit on a sibling (same input data).
    sibling = "The Celtics lost to the Raptors on Monday."
    outputs = [drawing.Output(key=1, text=OUTPUT, group="game", labels=frozenset({"A"}),
                              candidates=tuple(decoys.decoy_candidates(OUTPUT, INPUTS, [(0, 69), (70, 98)]))),
               drawing.Output(key=2, text=sibling, group="game", labels=frozenset({"A"}),
                              candidates=tuple(decoys.decoy_candidates(sibling, INPUTS, [])))]
    taken = [(4, 11), (47, 57), (66, 69)]
    sources = [drawing.Source(output=1, start=a, end=b, donor=decoys.Donor(
        label="A", text=OUTPUT[a:b], explanation="Wrong.", severity=None, category="", aspect="accuracy",
        position=a / len(OUTPUT))) for a, b in taken]
    drawn = drawing.draw_decoys(outputs, sources, 0.5, random.Random(1))
    assert drawn.placements and all(p.output in (1, 2) for p in drawn.placements)
    assert len(drawn.placements) <= len(sources)  # at most the share asked: one decoy per real span at 0.5
    # A label that judges neither output gets no decoy there.
    other = [drawing.Output(key=o.key, text=o.text, group=o.group, labels=frozenset({"B"}), candidates=o.candidates)
             for o in outputs]
    assert drawing.draw_decoys(other, sources, 0.5, random.Random(1)).placements == []


def test_the_hosted_share_leaves_out_groups_without_room_and_follows_the_real_spans():
    # 90 real spans in a group with room for 9 (0.1 per span), 10 in one with room for 10 (1.0): nine tenths of
    # the spans sit where only 0.1 fits, so the share is 0.1; a group with no room is left out.
    assert drawing.hosted_ratio({"a": 90, "b": 10}, {"a": 9, "b": 10}) == pytest.approx(0.1)
    assert drawing.hosted_ratio({"a": 90, "b": 10, "c": 500}, {"a": 9, "b": 10, "c": 0}) == pytest.approx(0.1)
    assert drawing.hosted_ratio({"a": 5}, {}) == 0.0
    # "Monday" and "24" fit side by side; every longer stretch holds one of them
    assert drawing.capacity(decoys.decoy_candidates("It rained on Monday and 24 fell.", "Monday 24", [])) == 2


def test_the_same_seed_draws_the_same_decoys_and_the_redraw_is_sized_not_timed():
    def drawn(seed):
        return [(p.output, p.candidate.start, p.candidate.end, p.explanation)
                for p in _drawn(seed, [(4, 11), (47, 57)]).placements]

    assert drawn(5) == drawn(5)
    # 6 rounds up to 2,000 cards; 12,000 // 3,000 = 4; none beyond 12,000
    assert [drawing.redraw_rounds(n) for n in (20, 2_000, 3_000, 12_000, 12_001)] == [6, 6, 4, 1, 0]


def test_dates_count_as_facts_the_input_gives_in_iso_form():
    output = "Rain on January 4th, then sun on the 6th of January."
    found = {c.text for c in decoys.decoy_candidates(output, "2024-01-04 09:00 rain | 2024-01-06 sun", [])}
    assert {"January 4th", "the 6th of January"} <= found
    # January 5th is not in the data: no decoy may claim the stretch that holds it is wrong
    assert not decoys.decoy_candidates("Rain on January 5th.", "2024-01-04 rain", [])


def test_stretches_start_and_end_where_phrases_do():
    output = "On January 4th, the temperature will be 8.27°C in Theale."
    found = {c.text for c in decoys.decoy_candidates(output, "2024-01-04 8.27 Theale", [])}
    assert "the temperature will be 8.27°C" in found
    assert "January 4th, the temperature" not in found  # cut inside the phrase "the temperature will be ..."
    assert decoys.natural_edges(output, output.index("temperature"), output.index(" in Theale")) == (True, True)
    assert decoys.natural_edges(output, output.index("4th"), output.index(" 8.27")) == (False, False)


def test_a_decoy_is_written_with_its_donors_kind_of_slip():
    def donor(match: str) -> decoys.Donor:
        return decoys.Donor(label="A", text="x", explanation="", severity=None, category="", aspect="accuracy",
                            position=0.0, match=match)

    rng = random.Random(0)
    assert decoys.written_like(donor("exact"), "Kyle Lowry scored 24", rng) == ("Kyle Lowry scored 24", "exact")
    assert decoys.written_like(donor("normalized"), "Kyle Lowry scored 24", rng) == ("kyle lowry scored 24",
                                                                                     "normalized")
    assert decoys.written_like(donor("normalized"), "24 points", rng) == ("24 points", "exact")  # nothing to slip
    written, match = decoys.written_like(donor("fuzzy"), "Kyle Lowry scored 24 points", rng)
    # one inner word left out: the first and last stay, so the card still reads as a quotation of the stretch
    assert match == "fuzzy" and len(written.split()) == 4 and written.startswith("Kyle") and written.endswith("points")
    assert decoys.written_like(donor("fuzzy"), "24 points", rng) == ("24 points", "exact")


def test_span_kinds_follow_the_marked_words():
    assert [decoys.span_kind(t) for t in ("112", "Kyle Lowry", "scored 24 points", "Kyle Lowry scored 24 points "
                                          "on Monday")] == ["number", "name", "phrase", "clause"]


def test_planted_error_lies_inside_the_stated_stretch_and_avoids_kept_spans():
    keep = [(4, 11), (29, 35)]  # "Raptors", "112-98"
    for seed in range(60):
        planted = plant(OUTPUT, INPUTS, keep=keep, rng=random.Random(seed))
        assert planted is not None
        # the planted text is the output with exactly [start, end) replaced
        assert planted.text[:planted.start] == OUTPUT[:planted.start]
        assert planted.text[planted.end:] == OUTPUT[planted.start + len(planted.before):]
        assert planted.text[planted.start:planted.end] == planted.after != planted.before
        assert not any(planted.start < b and a < planted.start + len(planted.before) for a, b in keep)
        if planted.kind == "entity":
            assert planted.after in INPUTS  # a swapped entity: another name of the input
        else:
            assert planted.before.isdigit() and planted.after.isdigit()
    assert plant("all lower case and no digits", "", keep=[], rng=random.Random(0)) is None


def test_sentence_kinds_borrow_a_sentence_that_states_what_the_input_does_not():
    others = ["The Heat beat the Knicks 101-90 on Friday. Jimmy Butler scored 30 points.",
              "The Raptors beat the Celtics 112-98 on Monday."]  # holds nothing this input lacks: never borrowed
    seen = set()
    for seed in range(30):
        for kind in ("sentence", "insert"):
            planted = plant(OUTPUT, INPUTS, keep=[(4, 11)], rng=random.Random(seed), kinds=[kind], others=others)
            assert planted is not None and planted.kind == kind
            assert planted.text[:planted.start] == OUTPUT[:planted.start]
            assert planted.text[planted.end:] == OUTPUT[planted.start + len(planted.before):]
            assert planted.text[planted.start:planted.end] == planted.after
            borrowed = planted.after.strip()
            assert borrowed in others[0] and ("Jimmy Butler" in borrowed or "Knicks" in borrowed)
            assert not (planted.start < 11 and planted.start + len(planted.before) > 4)  # "Raptors" kept
            seen.add((kind, borrowed))
    assert len(seen) >= 3
    one_sentence = "Kyle Lowry scored 24 points."
    assert plant(one_sentence, INPUTS, keep=[], rng=random.Random(0), kinds=["sentence"], others=others) is None
    assert plant(OUTPUT, INPUTS, keep=[], rng=random.Random(0), kinds=["insert"], others=[]) is None
    lone_fact = ["Kyle Lowry scored 24 points for Toronto."]  # one word the input lacks is enough
    planted = plant(OUTPUT, INPUTS, keep=[], rng=random.Random(0), kinds=["insert"], others=lone_fact)
    assert planted is not None and "Toronto" in planted.after


def test_decoy_candidates_never_cut_inside_a_phrase_that_states_one_fact():
    output = "The Heat won 3 out of 5 games and went 7 of 10 at home, from 2 to 4 in the fourth."
    inputs = "Heat W 3 G 5 | home W 7 G 10 | Q4 2 4"
    phrases = [(output.index(p), output.index(p) + len(p)) for p in ("3 out of 5", "7 of 10", "from 2 to 4")]
    found = decoys.decoy_candidates(output, inputs, [])
    assert found  # the output offers stretches the input supports
    for c in found:
        for a, b in phrases:
            assert not (c.start < b and a < c.end) or (c.start <= a and b <= c.end), c.text
