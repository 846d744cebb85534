"""Where a campaign's decoys go, Django-free: as many as the real spans allow, placed like them, then redrawn where a
classifier still tells them apart.

Three steps, each answering one way decoys used to give themselves away:

1. **Where the real spans are.** Each group of outputs written from the same input data gets decoys in proportion
   to its real machine spans. Outputs that their evaluators mark almost everywhere leave little room for a
   stretch the input supports; rather than pile decoys onto the easy outputs (whose topics and wording would then
   mark decoys out), the share is lowered to what the groups holding nine tenths of the real spans can host, and
   the tally says so.
2. **Like one real span.** Each decoy copies a donor, a real span drawn at random (so labels, severities,
   categories and explanations keep their real shares), and marks the free stretch of the donor's group most like
   it: in wording (character n-grams), kind, length, place in the output, where it starts and ends (a phrase's
   edges, quintd-1: 84% of GPT-4's and Llama 3's spans), and in how typical its words are of real spans
   (a density ratio: a classifier of real spans against every free stretch).
3. **Redrawn where it shows.** A cross-validated classifier of the audit's kind (quality.engine.audit) scores every
   decoy; those it finds most decoy-like are moved to the free stretch of their group it finds least so, for a few
   rounds (fewer for a large campaign, by its size, so the same seed always draws the same decoys). The audit that
   follows is therefore of decoys drawn against such a classifier:
   the bench (bench/decoy_audit.py) also audits them with a model of another kind, which the drawing never saw.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from quality.engine.audit import Card, CardFeatures, card_model
from quality.engine.decoys import Candidate, Donor, natural_edges, voice_explanation, written_like
from stats.overlap import shared_chars

MASS_HOSTED = 0.9  # the share is what the groups holding this much of the real spans can host
REALNESS_WEIGHT = 0.3  # how much the density ratio's log-odds count beside the likeness to the donor
MATCH_OPTIONS = 2_000  # free stretches (or donors) weighed for one decoy, at most: a seeded sample beyond
RATIO_SAMPLE = 20_000  # free stretches the density ratio is fitted on, at most
REDRAW_ROUNDS = 6
REDRAW_CARDS = 12_000  # rounds x cards the redraw may spend: a round refits the classifier six times on every card
REDRAW_SHARE = 0.3  # the most decoy-like share of decoys a round tries to move
REDRAW_OPTIONS = 60  # free stretches a moved decoy is tried on (a seeded sample when its group has more)


@dataclass(frozen=True)
class Output:
    """An output decoys may go on: its text, its group (outputs written from the same input data), the free
    stretches the input supports (quality.engine.decoys.decoy_candidates) and the evaluator labels judging it."""

    key: int
    text: str
    group: str
    candidates: tuple[Candidate, ...]
    labels: frozenset[str]


@dataclass(frozen=True)
class Source:
    """A real machine span a decoy may copy: the output it is on, where, and what its card shows."""

    output: int
    start: int
    end: int
    donor: Donor
    ref: int | None = None  # the span's id, kept for the caller


@dataclass(frozen=True)
class Placement:
    """A decoy: the stretch it marks on an output, the source it copies, its explanation in that voice, and its
    location as written with the match that found it (the source's kind of slip, quality.engine.decoys.written_like)."""

    output: int
    candidate: Candidate
    source: Source
    explanation: str
    written: str = ""
    match: str = "exact"


@dataclass
class Drawing:
    placements: list[Placement] = field(default_factory=list)
    share: float = 0.0  # the share of decoys among machine spans the groups could host (at most the one asked)
    rounds: int = 0  # redraw rounds run
    moved: int = 0  # decoys the redraw moved


def capacity(candidates: Sequence[Candidate]) -> int:
    """How many decoys fit on one output: the most stretches that overlap no other (shortest first, greedily)."""
    chosen: list[tuple[int, int]] = []
    for c in sorted(candidates, key=lambda c: (c.end - c.start, c.start)):
        if not any(shared_chars((c.start, c.end), span) for span in chosen):
            chosen.append((c.start, c.end))
    return len(chosen)


def hosted_ratio(real: Mapping[str, int], room: Mapping[str, int], mass: float = MASS_HOSTED) -> float:
    """The most decoys per real span that the groups holding `mass` of the real spans can each host (groups with
    no room at all are left out: no share of decoys could go there)."""
    groups = [g for g, n in real.items() if n and room.get(g, 0)]
    if not groups:
        return 0.0
    ratios = np.array([room[g] / real[g] for g in groups])
    weights = np.array([real[g] for g in groups], dtype=float)
    order = np.argsort(ratios)
    cumulative = np.cumsum(weights[order]) / weights.sum()
    return float(ratios[order][min(np.searchsorted(cumulative, 1 - mass), len(order) - 1)])


def _apportion(real: Mapping[str, int], ratio: float, rng: random.Random) -> dict[str, int]:
    """Decoys per group: `ratio` of its real spans, the total round(ratio x all real spans) and the remainder going
    to the groups with the largest fractions (ties by chance), so small groups still get their share."""
    groups = sorted(real)
    exact = {g: ratio * real[g] for g in groups}
    quota = {g: int(exact[g]) for g in groups}
    left = round(ratio * sum(real.values())) - sum(quota.values())
    by_fraction = sorted(groups, key=lambda g: (-(exact[g] - quota[g]), rng.random()))
    for g in by_fraction[:max(left, 0)]:
        quota[g] += 1
    return quota


def _card(output: Output, candidate: Candidate, source: Source, explanation: str) -> Card:
    donor = source.donor
    return Card(explanation=explanation, text=candidate.text, label=donor.label, severity=donor.severity,
                category=donor.category, ambiguous=candidate.ambiguous, match="exact",
                position=candidate.start / max(len(output.text), 1), decoy=True)


def _real_card(output: Output, source: Source) -> Card:
    donor = source.donor
    return Card(explanation=donor.explanation, text=donor.text, label=donor.label, severity=donor.severity,
                category=donor.category, ambiguous=donor.ambiguous, match="exact", position=donor.position,
                decoy=False)


def _realness(sources: Sequence[Source], pool: Sequence[tuple[Output, Candidate]]) -> np.ndarray:
    """Log-odds that each free stretch is a real span, by its marked words and place alone (a class-balanced
    logistic regression of real spans against every free stretch): a density ratio, high for stretches whose words
    are typical of what evaluators mark."""
    from sklearn.linear_model import LogisticRegression

    def bare(text: str, ambiguous: bool, position: float) -> Card:
        return Card("", text, "", None, "", ambiguous, "exact", position, False)

    real = [bare(s.donor.text, s.donor.ambiguous, s.donor.position) for s in sources]
    free = [bare(c.text, c.ambiguous, c.start / max(len(o.text), 1)) for o, c in pool]
    if len(real) < 2 or not free:
        return np.zeros(len(free))
    # A large campaign's free stretches are sampled for the fit (the ratio is a shape, not a count).
    fit_on = free if len(free) <= RATIO_SAMPLE else random.Random(len(free)).sample(free, RATIO_SAMPLE)
    features = CardFeatures().fit(real + fit_on)
    y = np.r_[np.ones(len(real)), np.zeros(len(fit_on))]
    model = LogisticRegression(max_iter=3000, class_weight="balanced").fit(features.transform(real + fit_on), y)
    p = np.clip(model.predict_proba(features.transform(free))[:, 1], 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def _fits(candidate: Candidate, source: Source) -> bool:
    """A number or a name is only drawn for a number or a name; a phrase or clause for a phrase or clause."""
    kind = source.donor.kind
    return not ((kind in ("number", "name") or candidate.what in ("number", "name")) and candidate.what != kind)


def draw_decoys(outputs: Sequence[Output], sources: Sequence[Source], share: float,
                rng: random.Random) -> Drawing:
    """Decoys making up to `share` of the machine spans (fewer where the outputs leave too little room to keep
    them where the real spans are), each copying a real span, placed and redrawn as the module says."""
    by_key = {o.key: o for o in outputs}
    sources = [s for s in sources if s.output in by_key]
    if not sources or share <= 0:
        return Drawing()
    real: dict[str, int] = {}
    for s in sources:
        real[by_key[s.output].group] = real.get(by_key[s.output].group, 0) + 1
    room: dict[str, int] = {}
    for o in outputs:
        room[o.group] = room.get(o.group, 0) + capacity(o.candidates)
    ratio = min(share / (1 - share), hosted_ratio(real, room))
    quota = _apportion(real, ratio, rng)
    pool = [(o, c) for o in outputs for c in o.candidates]
    if not pool or not any(quota.values()):
        return Drawing(share=ratio / (1 + ratio))
    realness = _realness(sources, pool)
    in_group: dict[str, list[int]] = {}
    for j, (o, _) in enumerate(pool):
        in_group.setdefault(o.group, []).append(j)
    from sklearn.feature_extraction.text import TfidfVectorizer

    words = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 3), sublinear_tf=True)
    words.fit([s.donor.text for s in sources] + [c.text for _, c in pool])
    marked = words.transform([c.text for _, c in pool])
    order = list(range(len(sources)))
    rng.shuffle(order)
    chosen: list[tuple[int, Source]] = []  # (pool index, source)
    taken: dict[int, list[tuple[int, int]]] = {}
    shown: set[tuple[str, str]] = set()  # (group, text): a group never shows the same decoy twice

    def free(j: int, source: Source) -> bool:
        o, c = pool[j]
        return (source.donor.label in o.labels and _fits(c, source) and (o.group, c.text.lower()) not in shown
                and not any(shared_chars((c.start, c.end), span) for span in taken.get(o.key, ())))

    for k in order:
        source = sources[k]
        group = by_key[source.output].group
        if quota[group] <= 0:
            continue
        options = _at_most([j for j in in_group.get(group, ()) if free(j, source)], MATCH_OPTIONS, rng)
        if not options:
            continue
        likeness = (marked[options] @ words.transform([source.donor.text]).T).toarray().ravel()
        edges = natural_edges(by_key[source.output].text, source.start, source.end)
        scores = []
        for j, alike in zip(options, likeness, strict=True):
            o, c = pool[j]
            mine = natural_edges(o.text, c.start, c.end)
            scores.append(
                alike + REALNESS_WEIGHT * realness[j]
                - 0.3 * abs(np.log(len(c.text.split()) / max(len(source.donor.text.split()), 1)))
                + 0.2 * ((mine[0] == edges[0]) + (mine[1] == edges[1]))
                - 0.3 * abs(c.start / max(len(o.text), 1) - source.donor.position)
                + 0.2 * (c.ambiguous == source.donor.ambiguous) + 0.1 * (o.key == source.output)
                + 0.05 * rng.random())
        j = options[int(np.argmax(scores))]
        o, c = pool[j]
        chosen.append((j, source))
        taken.setdefault(o.key, []).append((c.start, c.end))
        shown.add((o.group, c.text.lower()))
        quota[group] -= 1
    drawing = Drawing(share=ratio / (1 + ratio))
    drawing.rounds, drawing.moved = _redraw(chosen, pool, in_group, by_key, sources, rng)
    for j, source in chosen:
        o, c = pool[j]
        written, match = written_like(source.donor, c.text, rng)
        drawing.placements.append(Placement(o.key, c, source, voice_explanation(
            source.donor, c, o.text, same_output=o.key == source.output, quote=written), written, match))
    drawing.placements.sort(key=lambda p: (p.output, p.candidate.start))
    return drawing


def _voiced(output: Output, candidate: Candidate, source: Source) -> str:
    return voice_explanation(source.donor, candidate, output.text, same_output=output.key == source.output)


def redraw_rounds(cards: int) -> int:
    """How many redraw rounds a campaign of this many cards gets: REDRAW_ROUNDS up to 2,000 cards, then fewer, none
    beyond REDRAW_CARDS (about 10 s of work on one core), by size and never by the clock, so that the same seed
    always draws the same decoys."""
    return max(0, min(REDRAW_ROUNDS, REDRAW_CARDS // max(cards, 1)))


def _redraw(chosen: list[tuple[int, Source]], pool: Sequence[tuple[Output, Candidate]],
            in_group: Mapping[str, list[int]], by_key: Mapping[int, Output], sources: Sequence[Source],
            rng: random.Random) -> tuple[int, int]:
    """Move the decoys an audit-like classifier finds most decoy-like to the free stretch of their group it finds
    least so (in place, in `chosen`); return the rounds run and the decoys moved."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    real = [_real_card(by_key[s.output], s) for s in sources]
    group_sources: dict[str, list[Source]] = {}
    for s in sources:
        group_sources.setdefault(by_key[s.output].group, []).append(s)
    rounds = moved = 0
    if len(chosen) < 10:
        return rounds, moved
    for round_ in range(redraw_rounds(len(real) + len(chosen))):
        decoys = [_card(pool[j][0], pool[j][1], s, _voiced(pool[j][0], pool[j][1], s)) for j, s in chosen]
        cards = real + decoys
        y = np.r_[np.zeros(len(real)), np.ones(len(decoys))]
        folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=round_)
        held_out = cross_val_predict(card_model(), cards, y, cv=folds, method="predict_proba")[len(real):, 1]
        model = card_model().fit(cards, y)
        rounds += 1
        for n in np.argsort(-held_out)[: int(REDRAW_SHARE * len(chosen))]:
            options = _moves(n, chosen, pool, in_group, group_sources, rng)
            if not options:
                continue
            if len(options) > REDRAW_OPTIONS:
                options = rng.sample(options, REDRAW_OPTIONS)
            scores = model.predict_proba([_card(pool[j][0], pool[j][1], other, _voiced(pool[j][0], pool[j][1], other))
                                          for j, other in options])[:, 1]
            best = int(np.argmin(scores))
            if scores[best] < held_out[n]:
                chosen[n] = options[best]
                moved += 1
    return rounds, moved


def _at_most(values: list, n: int, rng: random.Random) -> list:
    """The values, or a seeded sample of n of them (a group of thousands of outputs from one input)."""
    return values if len(values) <= n else rng.sample(values, n)


def _moves(n: int, chosen: Sequence[tuple[int, Source]], pool: Sequence[tuple[Output, Candidate]],
           in_group: Mapping[str, list[int]], group_sources: Mapping[str, list[Source]],
           rng: random.Random) -> list[tuple[int, Source]]:
    """Where decoy n may go instead: another free stretch of its group for the same donor, or its stretch for
    another unused donor of the group (the explanation may be what gives it away)."""
    j0, source = chosen[n]
    group = pool[j0][0].group
    taken: dict[int, list[tuple[int, int]]] = {}
    for m, (j, _) in enumerate(chosen):
        if m != n:
            taken.setdefault(pool[j][0].key, []).append((pool[j][1].start, pool[j][1].end))
    shown = {(pool[j][0].group, pool[j][1].text.lower()) for j, _ in chosen if j != j0}

    def open_(j: int, donor: Source) -> bool:
        o, c = pool[j]
        return (_fits(c, donor) and donor.donor.label in o.labels and (o.group, c.text.lower()) not in shown
                and not any(shared_chars((c.start, c.end), span) for span in taken.get(o.key, ())))

    in_use = {id(s) for _, s in chosen}
    stretches = _at_most([j for j in in_group[group] if j != j0], MATCH_OPTIONS, rng)
    donors = _at_most([s for s in group_sources[group] if id(s) not in in_use], MATCH_OPTIONS, rng)
    return ([(j, source) for j in stretches if open_(j, source)]
            + [(j0, other) for other in donors if open_(j0, other)])
