"""A participant link's pool: its places ("slots") made with the campaign, handed out as people join, and
returned when they leave.

Every setting applies to whoever joins. The slots carry the control arm (judge k of output i is unprimed or
not, drawn with the campaign); the decoys sit on the outputs; the pool's planted copies wait in the quality
checks; training and control items come with the first share. Handing out only decides who takes which place
(studies.engine.handout), and released work returns to the pool with its arm and its checks, so the design
stays balanced by construction while people come and go.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotator.engine.phases import initial_phase
from annotator.models import Assignment, Campaign, ComparisonUnit, JudgmentEvent, WorkAction
from annotator.services.units import screens_cut, units_add
from corpus import protocols
from corpus.models import Item
from quality.models import PlantedOutput
from quality.services import (
    decoys_per_output,
    planted_companions,
    planted_count,
    planted_hand_out,
    planted_release,
)
from studies.engine.handout import Rates, Share, Slot, slots_choose
from studies.models import Handout, Participant, PoolSlot, StudyLink


def slots_create(*, link: StudyLink, judges: Mapping[int, Sequence[bool]]) -> int:
    """Make the pool's places: for each output, one slot per pool judge, unprimed where the draw says;
    return how many."""
    made = PoolSlot.objects.bulk_create(
        PoolSlot(link=link, item_id=item_id, judge=k, unprimed=unprimed)
        for item_id, arms in judges.items() for k, unprimed in enumerate(arms, start=1)
    )
    return len(made)


def lock_link(pk: int) -> StudyLink:
    """Lock the link's row, the one lock that serialises a study's joins, top-ups and releases (cap and overlap
    stay exact). It is narrower than the campaign row that verdict saves and item finishes read; FOR NO KEY
    UPDATE lets new participant rows reference the link meanwhile. SQLite's IMMEDIATE transactions serialise
    writers anyway."""
    return StudyLink.objects.select_for_update(no_key=True, of=("self",)).select_related("campaign").get(pk=pk)


def _free(link: StudyLink, also: Q | None = None):
    """Slots nobody holds: never handed out, or handed back unfinished (released and not done)."""
    free = Q(assignment__isnull=True) | (Q(assignment__handout__released_at__isnull=False)
                                         & ~Q(assignment__status=Assignment.Status.DONE))
    return PoolSlot.objects.filter(Q(link=link) & (free | also if also is not None else free))


def _pool_need(participant: Participant, link: StudyLink, *, comparing: bool) -> tuple[int, int]:
    """(outputs still to hand the participant, or inputs under a comparing protocol; their claimed assignments not
    yet furnished), in one query."""
    real = Q(is_training=False, is_control=False, item__derived_from__isnull=True)
    counts = Assignment.objects.filter(campaign_id=link.campaign_id, annotator_id=participant.user_id).aggregate(
        real=Count("item__external_id", filter=real, distinct=True) if comparing else Count("pk", filter=real),
        pending=Count("pk", filter=Q(order__gte=PROVISIONAL)))
    return link.items_per_participant - counts["real"], counts["pending"]


PROVISIONAL = 1_000_000
"""Orders a claim gives its assignments until the share is furnished (placed among its planted copies and
control items): far above any real order, so that moving them into place never meets another row's order."""


@dataclass(frozen=True)
class Prepared:
    """What a hand-out reads before the link's lock, fixed once the campaign is made: the decoys per output,
    the training items, the places per output and the pool's rates over every place. Under a comparing protocol
    also each pool output's input, each input's outputs (item order) and the planned screens of each place:
    places are handed out per input then, all of an input's outputs at place k together."""

    decoys: dict[int, int]
    training: set[int]
    places: dict[int, int]
    rates: Rates
    inputs: dict[int, str] = field(default_factory=dict)
    outputs: dict[str, list[int]] = field(default_factory=dict)
    screens: dict[tuple[str, int], list[list[int]]] = field(default_factory=dict)

    @property
    def comparing(self) -> bool:
        return bool(self.outputs)


def pool_prepare(link: StudyLink) -> Prepared:
    decoys = decoys_per_output(link.campaign)
    places = dict(PoolSlot.objects.filter(link=link).values("item_id").annotate(n=Count("pk"))
                  .values_list("item_id", "n"))
    prepared = Prepared(decoys=decoys, training=_training_items(link.campaign), places=places,
                        rates=_rates(link, decoys))
    if not protocols.get(link.campaign.protocol).comparing:
        return prepared
    inputs = dict(Item.objects.filter(pk__in=list(link.items)).values_list("pk", "external_id"))
    outputs: dict[str, list[int]] = {}
    for item_id in link.items:
        outputs.setdefault(inputs[item_id], []).append(item_id)
    screens: dict[tuple[str, int], list[list[int]]] = {}
    for screen in link.screens:
        screens.setdefault((screen["segment"], screen["judge"]), []).append(list(screen["items"]))
    return replace(prepared, inputs=inputs, outputs=outputs, screens=screens)


def participant_top_up(*, participant: Participant, now: datetime | None = None) -> int:
    """Hand the participant pool outputs until they hold `items_per_participant`; return how many were given.

    Each output goes to at most its places (`annotators_per_item` judges, registered annotators' included),
    never twice to one participant; the places are chosen as studies.engine.handout says, and the participant's
    planted copies and control items come with them. Only the claim of places holds the link's lock
    (`places_claim`); the rest of the share is furnished after it (`share_furnish`). A participant who holds
    their share opens no transaction at all (on SQLite every transaction waits for the one write lock)."""
    need, pending = _pool_need(participant, participant.link,
                               comparing=protocols.get(participant.link.campaign.protocol).comparing)
    if pending:
        share_furnish(participant=participant, now=now or timezone.now())  # a furnish that never ran
    if need <= 0:
        return 0
    now = now or timezone.now()
    prepared = pool_prepare(participant.link)
    with transaction.atomic():
        claimed = places_claim(participant=participant, link=lock_link(participant.link_id), now=now,
                               prepared=prepared)
    if claimed:
        share_furnish(participant=participant, now=now)
    return claimed


def places_claim(*, participant: Participant, link: StudyLink, now: datetime, prepared: Prepared,
                 new: bool = False) -> int:
    """Claim the participant's share of free places: their real assignments, at provisional orders, with their
    handouts; return how many (`new`: a participant made in this transaction, who holds nothing yet). The
    critical section of a join and a top-up: the caller holds the link's lock (`lock_link`), so two arrivals at
    once never push an output past its places, and it does nothing else."""
    campaign = link.campaign
    assignments_release(link=link, now=now)
    if participant.deadline is not None and now >= participant.deadline:
        return 0
    held = [] if new else list(
        Assignment.objects.filter(campaign=campaign, annotator_id=participant.user_id)
        .values_list("item_id", "is_training", "is_control", "in_control_arm", "item__derived_from_id"))
    real = [(item_id, unprimed) for item_id, training, control, unprimed, derived in held
            if not training and not control and derived is None]
    need = link.items_per_participant - len(real)
    if prepared.comparing:
        return _inputs_claim(participant=participant, link=link, now=now, prepared=prepared, held=held)
    if need <= 0:
        return 0
    copies = set() if new else set(PlantedOutput.objects.filter(campaign=campaign, annotator_id=participant.user_id)
                                   .values_list("original_id", flat=True))
    avoid = {item_id for item_id, *_ in held} | copies | prepared.training
    decoys = prepared.decoys
    chosen = slots_choose(
        _free_slots(link, decoys, prepared.places), need=need, avoid=avoid, rates=prepared.rates,
        held=Share(len(real), sum(u for _, u in real), sum(decoys.get(i, 0) for i, _ in real)),
    )
    if not chosen:
        return 0
    made = Assignment.objects.bulk_create(
        Assignment(campaign=campaign, item_id=slot.output, annotator_id=participant.user_id,
                   order=PROVISIONAL + n, in_control_arm=slot.unprimed, is_control=slot.output in link.controls,
                   phase=initial_phase(unprimed=slot.unprimed).value)
        for n, slot in enumerate(chosen)
    )
    Handout.objects.bulk_create(Handout(assignment=a, handed_at=now) for a in made if not a.is_control)
    PoolSlot.objects.bulk_update([PoolSlot(pk=slot.pk, assignment=a) for slot, a in zip(chosen, made, strict=True)],
                                 ["assignment"])
    return len(chosen)


def _inputs_claim(*, participant: Participant, link: StudyLink, now: datetime, prepared: Prepared,
                  held: list[tuple]) -> int:
    """`places_claim` under a comparing protocol: the participant takes whole inputs, place k of every output of
    each, so the planned screens of place k are theirs; `items_per_participant` counts inputs. An input is free at
    place k when every output's place k is (an input half taken stays with its holder)."""
    inputs = prepared.inputs
    real = {item_id: unprimed for item_id, training, control, unprimed, derived in held
            if not training and not control and derived is None}
    held_inputs = {inputs[i]: unprimed for i, unprimed in real.items() if i in inputs}
    need = link.items_per_participant - len(held_inputs)
    if need <= 0:
        return 0
    index = {segment: n for n, segment in enumerate(prepared.outputs)}
    avoid = {index[inputs[i]] for i in {item_id for item_id, *_ in held} | prepared.training if i in inputs}
    groups = _free_groups(link, prepared)
    offers = [Slot(pk=n, output=index[segment], unprimed=rows[0][2], decoys=0, judges=judges,
                   position=index[segment])
              for n, ((segment, _), rows, judges) in enumerate(groups)]
    chosen = slots_choose(offers, need=need, avoid=avoid, rates=prepared.rates,
                          held=Share(len(held_inputs), sum(held_inputs.values()), 0))
    if not chosen:
        return 0
    taken = []
    for offer in chosen:
        (segment, k), rows, _ = groups[offer.pk]
        slot_of = {item_id: (pk, unprimed) for pk, item_id, unprimed, _ in rows}
        in_screen_order = list(dict.fromkeys(i for screen in prepared.screens.get((segment, k), []) for i in screen))
        taken += [(slot_of[i], i) for i in [*in_screen_order, *(i for i in slot_of if i not in in_screen_order)]]
    made = Assignment.objects.bulk_create(
        Assignment(campaign=link.campaign, item_id=item_id, annotator_id=participant.user_id, order=PROVISIONAL + n,
                   in_control_arm=unprimed, phase=initial_phase(unprimed=unprimed).value)
        for n, ((_, unprimed), item_id) in enumerate(taken)
    )
    Handout.objects.bulk_create(Handout(assignment=a, handed_at=now) for a in made)
    PoolSlot.objects.bulk_update([PoolSlot(pk=pk, assignment=a) for ((pk, _), _), a in zip(taken, made, strict=True)],
                                 ["assignment"])
    return len(chosen)


def _free_groups(link: StudyLink, prepared: Prepared, also: Q | None = None
                 ) -> list[tuple[tuple[str, int], list[tuple[int, int, bool, int]], int]]:
    """The inputs free at a place: ((input, k), its outputs' slots at k, the judges the input has or holds), in
    item order. An input is free at k when all of its outputs are, or when someone who left finished some of them
    and not the rest: a screen is judged whole, so it is handed out whole again (its finished outputs get one
    judge more)."""
    rows = list(_free(link, also).values_list("pk", "item_id", "unprimed", "judge"))
    left_done = list(PoolSlot.objects.filter(link=link, assignment__handout__released_at__isnull=False,
                                             assignment__status=Assignment.Status.DONE)
                     .values_list("pk", "item_id", "unprimed", "judge"))
    free_per_output = Counter(item_id for _, item_id, _, _ in rows)
    groups: dict[tuple[str, int], list] = {}
    for row in sorted(rows, key=lambda r: (r[3], r[1])):
        groups.setdefault((prepared.inputs[row[1]], row[3]), []).append(row)
    for row in left_done:  # only beside free outputs of the same input and place
        if (key := (prepared.inputs[row[1]], row[3])) in groups:
            groups[key].append(row)
    answer = []
    for (segment, k), members in groups.items():
        if len(members) == len(prepared.outputs[segment]):
            first = prepared.outputs[segment][0]
            answer.append(((segment, k), members, prepared.places[first] - free_per_output[first]))
    order = {segment: n for n, segment in enumerate(prepared.outputs)}
    return sorted(answer, key=lambda g: (order[g[0][0]], g[0][1]))


def _units_furnish(*, participant: Participant, link: StudyLink, rng: random.Random) -> None:
    """Give the participant's new assignments their screens: a pool input the screens planned for its place, a
    training or control input screens cut for them alone (practice and known answers are in no figure)."""
    campaign = link.campaign
    declared = protocols.get(campaign.protocol)
    rows = list(Assignment.objects.filter(campaign=campaign, annotator_id=participant.user_id,
                                          unit_outputs__isnull=True).order_by("order")
                .values_list("pk", "item_id", "item__external_id", "item__system", "pool_slot__judge"))
    groups: dict[str, list[tuple]] = {}
    for row in rows:
        groups.setdefault(row[2], []).append(row)
    planned: dict[tuple[str, int], list[list[int]]] = {}
    for screen in link.screens:
        planned.setdefault((screen["segment"], screen["judge"]), []).append(screen["items"])
    screens: list[tuple[str, list[int]]] = []
    for segment, members in groups.items():
        if len(members) < 2:
            continue
        by_item = {item_id: pk for pk, item_id, *_ in members}
        plan = planned.get((segment, members[0][4]), [])
        if plan and all(i in by_item for screen in plan for i in screen):
            screens += [(segment, [by_item[i] for i in screen]) for screen in plan]
        else:
            systems = {pk: system for pk, _, _, system, _ in members}
            screens += [(segment, screen) for screen in screens_cut([m[0] for m in members], systems,
                                                                     per_screen=declared.compares, rng=rng)]
    units_add(campaign=campaign, annotator_id=participant.user_id, screens=screens)


@transaction.atomic
def share_furnish(*, participant: Participant, now: datetime) -> None:
    """Place a claim's assignments in the participant's queue, shuffled among the planted copies and control
    items their share brings (a newcomer's training items first). Outside the link's lock: everything here is
    the participant's own, and their row's lock keeps two of their requests from furnishing one claim twice."""
    participant = Participant.objects.select_for_update(of=("self",)).select_related("link__campaign").get(
        pk=participant.pk)
    link, campaign = participant.link, participant.link.campaign
    mine = Assignment.objects.filter(campaign=campaign, annotator_id=participant.user_id)
    claimed = list(mine.filter(order__gte=PROVISIONAL).order_by("order"))
    if not claimed:
        return
    if not mine.filter(order__lt=PROVISIONAL).exists():
        campaign.annotators.add(participant.user_id)
        training_give(participant=participant, link=link)
    held = list(mine.filter(order__lt=PROVISIONAL).values_list("item_id", "is_training", "is_control", "order",
                                                               "item__derived_from_id"))
    real = sum(1 for _, training, control, _, derived in held if not training and not control and derived is None)
    copies = set(PlantedOutput.objects.filter(campaign=campaign, annotator_id=participant.user_id)
                 .values_list("original_id", flat=True))
    avoid = {item_id for item_id, *_ in held} | copies | _training_items(campaign)
    rng = random.Random(f"{campaign.seed}:{participant.user_id}:{len(held)}")
    outputs = avoid | {a.item_id for a in claimed}
    comparing = protocols.get(campaign.protocol).comparing
    if comparing:  # a planted copy is a screen: the share is of the inputs held
        segments = dict(Item.objects.filter(pk__in=[*(row[0] for row in held), *(a.item_id for a in claimed)])
                        .values_list("pk", "external_id"))
        real = len({segments[item_id] for item_id, training, control, _, derived in held
                    if not training and not control and derived is None} | {segments[a.item_id] for a in claimed})
    else:
        real += len(claimed)
    planted = planted_hand_out(
        campaign=campaign, annotator_pk=participant.user_id, avoid=outputs, pool=link.items,
        n=planted_count(campaign.planted, real) - len(copies), rng=rng,
    )
    if comparing:
        mates = planted_companions(planted)
        planted = [item_id for copy in planted for item_id in (copy, *mates[copy])]
    controls = [i for i in link.controls if i not in avoid]
    batch: list[Assignment | int] = [*claimed, *planted, *controls]
    if comparing:  # an input's outputs stay together, in screen order; the inputs are shuffled
        batch = _inputs_shuffled(batch, rng)
    else:
        rng.shuffle(batch)
    start = max((row[3] for row in held), default=0) + 1
    placed, extra = [], []
    for order, entry in enumerate(batch, start=start):
        if isinstance(entry, Assignment):
            entry.order = order
            placed.append(entry)
        else:
            extra.append(Assignment(campaign=campaign, item_id=entry, annotator_id=participant.user_id, order=order,
                                    is_control=entry in link.controls, phase=initial_phase(unprimed=False).value))
    Assignment.objects.bulk_update(placed, ["order"])
    made = Assignment.objects.bulk_create(extra)
    Handout.objects.bulk_create(Handout(assignment=a, handed_at=now) for a in made if not a.is_control)
    if comparing:
        _units_furnish(participant=participant, link=link, rng=rng)


def _inputs_shuffled(batch: list[Assignment | int], rng: random.Random) -> list[Assignment | int]:
    """The batch in a seeded random order of inputs, each input's entries together and in the order given."""
    ids = [entry.item_id if isinstance(entry, Assignment) else entry for entry in batch]
    segment = dict(Item.objects.filter(pk__in=ids).values_list("pk", "external_id"))
    groups: dict[str, list[Assignment | int]] = {}
    for entry, item_id in zip(batch, ids, strict=True):
        groups.setdefault(segment[item_id], []).append(entry)
    order = list(groups.values())
    rng.shuffle(order)
    return [entry for group in order for entry in group]


def _training_items(campaign: Campaign) -> set[int]:
    """The campaign's training items: its qualification's, and any a registered annotator trains on."""
    given = (Assignment.objects.filter(campaign=campaign, is_training=True).values_list("item_id", flat=True)
             .distinct())
    return set((campaign.qualification or {}).get("items", [])) | set(given)


def training_give(*, participant: Participant, link: StudyLink) -> None:
    """Every participant starts with the campaign's training items, in the order given, as registered
    annotators do."""
    ordered = list((link.campaign.qualification or {}).get("items", []))
    training = ordered + sorted(_training_items(link.campaign) - set(ordered))
    Assignment.objects.bulk_create(
        Assignment(campaign_id=link.campaign_id, item_id=item_id, annotator_id=participant.user_id, order=order,
                   is_training=True, phase=initial_phase(training=True).value)
        for order, item_id in enumerate(training, start=1)
    )


def _free_slots(link: StudyLink, decoys: Mapping[int, int], places: Mapping[int, int]) -> list[Slot]:
    """The free places, each with its output's decoys and how many judges that output has or holds now."""
    rows = list(_free(link).values_list("pk", "item_id", "unprimed"))
    free_per_output = Counter(item_id for _, item_id, _ in rows)
    position = {item_id: n for n, item_id in enumerate(link.items)}
    return [Slot(pk=pk, output=item_id, unprimed=unprimed, decoys=decoys.get(item_id, 0),
                 judges=places[item_id] - free_per_output[item_id], position=position.get(item_id, 0))
            for pk, item_id, unprimed in rows]


def _rates(link: StudyLink, decoys: Mapping[int, int]) -> Rates:
    """Unprimed places and decoys per place over every place of the pool (held or free), in two aggregates."""
    places = PoolSlot.objects.filter(link=link)
    counts = places.aggregate(n=Count("pk"), unprimed=Count("pk", filter=Q(unprimed=True)))
    if not counts["n"]:
        return Rates()
    on_decoys = places.filter(item_id__in=list(decoys)).values("item_id").annotate(n=Count("pk"))
    shown = sum(decoys[row["item_id"]] * row["n"] for row in on_decoys) if decoys else 0
    return Rates(unprimed=counts["unprimed"] / counts["n"], decoys=shown / counts["n"])


def link_has_room(*, link: StudyLink, now: datetime | None = None) -> bool:
    """Whether a newcomer would get at least one output now. Read only (the join page's GET locks and writes
    nothing): work the next top-up would release is counted as free already."""
    now = now or timezone.now()
    due = Q(assignment_id__in=_releasable(link, now).values("assignment_id"))
    if protocols.get(link.campaign.protocol).comparing:
        return bool(_free_groups(link, pool_prepare(link), also=due))
    return _free(link, also=due).exclude(item_id__in=list(_training_items(link.campaign))).exists()


@dataclass(frozen=True)
class Promise:
    """What a newcomer is told on the consent page: every item they will judge, by kind, and the expected time."""

    training: int
    real: int
    planted: int
    controls: int
    minutes: int | None  # None until anyone has finished enough items to know a typical item's time

    @property
    def items(self) -> int:
        return self.training + self.real + self.planted + self.controls


MIN_TIMED = 5  # finished items before the study's own median time per item is quoted


def newcomer_promise(*, link: StudyLink, now: datetime | None = None) -> Promise:
    """What a newcomer would get now (read only, as `link_has_room`): the training items, their share of the
    pool's free outputs, the planted copies that share brings (when the pool's outputs take any) and the
    control items; the expected minutes are that count times the median active time of a finished real item
    in this study."""
    now = now or timezone.now()
    campaign = link.campaign
    training = _training_items(campaign)
    due = Q(assignment_id__in=_releasable(link, now).values("assignment_id"))
    if protocols.get(campaign.protocol).comparing:  # whole inputs: their outputs, as many inputs as the share
        groups = {g[0][0]: len(g[1]) for g in _free_groups(link, pool_prepare(link), also=due)}
        real = sum(list(groups.values())[:link.items_per_participant])
    else:
        free = _free(link, also=due).exclude(item_id__in=list(training)).values("item_id").distinct().count()
        real = min(link.items_per_participant, free)
    copies_exist = PlantedOutput.objects.filter(campaign=campaign).exists()
    planted = planted_count(campaign.planted, real) if copies_exist else 0
    controls = len([i for i in link.controls if i not in training])
    times = sorted(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.DONE, is_training=False,
                                             is_control=False).values_list("active_seconds", flat=True))
    promise = Promise(training=len(training), real=real, planted=planted, controls=controls, minutes=None)
    if len(times) < MIN_TIMED:
        return promise
    median = times[len(times) // 2] if len(times) % 2 else (times[len(times) // 2 - 1] + times[len(times) // 2]) / 2
    return replace(promise, minutes=max(1, round(promise.items * median / 60)))


def _releasable(link: StudyLink, now: datetime):
    """Handouts due to go back: unfinished, not released, their holder idle or out of time."""
    cutoff = now - timedelta(minutes=link.release_after_minutes)
    gone = link.participants.filter(Q(last_seen_at__lt=cutoff) | Q(deadline__lte=now)).values("user_id")
    return (Handout.objects.filter(assignment__campaign_id=link.campaign_id, assignment__annotator_id__in=gone,
                                   released_at__isnull=True)
            .exclude(assignment__status=Assignment.Status.DONE))


def assignments_release(*, link: StudyLink, now: datetime) -> int:
    """Return abandoned work to the pool; return how many assignments went back.

    A participant is idle when nothing of theirs reached the server for `release_after_minutes`, and out of
    time past their deadline. Their unfinished handouts go back: one without any work is deleted (its place is
    free again, with its arm; a planted copy waits for the next participant), one with work is kept (they may
    still finish it) and its place is free for someone else unless they finish it first. The caller holds the
    link's lock."""
    open_handouts = list(_releasable(link, now).values_list("pk", "assignment_id"))
    if not open_handouts:
        return 0
    ids = [a for _, a in open_handouts]
    worked = set(WorkAction.objects.filter(assignment_id__in=ids).values_list("assignment_id", flat=True))
    worked |= set(JudgmentEvent.objects.filter(judgment__assignment_id__in=ids)
                  .values_list("judgment__assignment_id", flat=True))
    finished: set[int] = set()
    if protocols.get(link.campaign.protocol).comparing:
        more, finished = _inputs_worked(ids, worked)
        worked |= more
    Handout.objects.filter(assignment_id__in=worked | finished).update(released_at=now)
    untouched = Assignment.objects.filter(pk__in=set(ids) - worked)
    planted_release(campaign=link.campaign, item_ids=list(untouched.values_list("item_id", flat=True)))
    untouched.delete()
    ComparisonUnit.objects.filter(campaign_id=link.campaign_id, outputs__isnull=True).delete()
    return len(ids)


def _inputs_worked(ids: Sequence[int], worked: set[int]) -> tuple[set[int], set[int]]:
    """Under a comparing protocol work on one output of an input keeps all of that judge's outputs of the input
    (their screens are shared): the assignments among `ids` of an (annotator, input) with any worked or finished;
    and those finished outputs, released with them, so the input can be handed out whole again (`_free_groups`)."""
    rows = list(Assignment.objects.filter(pk__in=list(ids)).values_list("pk", "annotator_id", "item__external_id",
                                                                        "campaign_id"))
    if not rows:
        return set(), set()
    kept = {(annotator_id, segment) for pk, annotator_id, segment, _ in rows if pk in worked}
    done = list(Assignment.objects.filter(campaign_id=rows[0][3], annotator_id__in={r[1] for r in rows},
                                          status=Assignment.Status.DONE, handout__isnull=False)
                .values_list("pk", "annotator_id", "item__external_id"))
    open_inputs = {(annotator_id, segment) for _, annotator_id, segment, _ in rows}
    kept |= {(annotator_id, segment) for _, annotator_id, segment in done}
    finished = {pk for pk, annotator_id, segment in done if (annotator_id, segment) in open_inputs}
    return {pk for pk, annotator_id, segment, _ in rows if (annotator_id, segment) in kept}, finished
