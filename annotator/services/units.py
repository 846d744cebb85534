"""Comparison units of a comparing protocol's campaign: made with the campaign (counterbalanced positions), the
annotator's choice on each (on the undo stack), and finishing a unit, which finishes each of its outputs once
every unit holding that output is finished.

An input's outputs are dealt to the same annotators next to each other in their queues (studies.setup); here they
are cut into screens of the protocol's size. A pairwise input of three outputs gives two screens, the first
output in both, so every output is compared and none waits alone.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from annotator.access import OtherProtocol, check_can_work
from annotator.engine.phases import Phase
from annotator.engine.positions import pair_orders, rotation_orders
from annotator.models import Assignment, Campaign, ComparisonUnit, UnitOutput, WorkAction
from annotator.services.actions import action_record, activity_record
from annotator.services.added_spans import added_span_create, added_span_delete, snapshot
from annotator.services.phases import assignments_move
from corpus import protocols
from corpus.models import ErrorSpan, Item
from corpus.protocols import pairwise
from errors import Conflict, UserError

ASIDE = 1_000_000_000  # added to queue places for a moment while two of them swap (below 2**31, above any queue)


class UnitError(UserError):
    """A unit that cannot finish yet (422), naming what it lacks."""


class UnitFinished(Conflict):
    """A change to a unit its annotator finished (409)."""


def _screens(outputs: list[int], per_screen: int) -> list[list[int]]:
    """An input's outputs cut into screens of `per_screen`; a short last screen borrows from the first outputs, so
    it compares as many as the others (an input with fewer outputs than that is one screen of all of them)."""
    if len(outputs) <= per_screen:
        return [outputs]
    screens = [outputs[i:i + per_screen] for i in range(0, len(outputs), per_screen)]
    short = per_screen - len(screens[-1])
    if short:
        screens[-1] = screens[-1] + [o for o in outputs if o not in screens[-1]][:short]
    return screens


Plan = list[tuple[object, str, list[int]]]
"""Screens as planned: (judge, input, its outputs in position order); a judge is an annotator's pk or a pool lane,
an output an assignment's pk or an item's."""


def screens_plan(queues: dict[object, dict[str, list[int]]], systems: dict[int, str], *, per_screen: int,
                 seed: int) -> Plan:
    """Cut each judge's inputs (outputs in queue order) into screens and counterbalance their positions over all of
    them together: plain ids in, plain ids out, so registered annotators and a
    link's pool lanes are balanced as one design. Inputs with one output give no screen."""
    planned: Plan = []
    for judge, inputs in queues.items():
        rng = random.Random(f"{seed}:units:{judge}")
        for segment, keys in inputs.items():
            if len(keys) < 2:
                continue
            outputs = sorted(keys, key=lambda k: systems[k])
            rng.shuffle(outputs)  # which outputs share a screen differs from judge to judge
            planned += [(judge, segment, sorted(screen, key=lambda k: systems[k]))
                        for screen in _screens(outputs, per_screen)]
    labelled = [tuple(systems[k] for k in screen) for _, _, screen in planned]
    if per_screen == 2:
        orders = pair_orders([(segment, screen) for (_, segment, _), screen in zip(planned, labelled, strict=True)],
                             seed=seed)
    else:
        orders = rotation_orders(labelled, seed=seed, inputs=[segment for _, segment, _ in planned])
    answer: Plan = []
    for (judge, segment, screen), order in zip(planned, orders, strict=True):
        by_system = {systems[k]: k for k in screen}
        answer.append((judge, segment, [by_system[system] for system in order]))
    return answer


def lane_name(k: int) -> str:
    """A link's pool lane (participant place k of every output) as a judge of `screens_plan`."""
    return f"lane{k}"


@transaction.atomic
def units_make(*, campaign: Campaign, per_screen: int,
               lanes: Sequence[tuple[int, Sequence[int]]] = ()) -> list[dict]:
    """Make every annotator's units from their assignments (outputs of one input, in queue order), with positions
    counterbalanced over the campaign together with a link's pool `lanes` ((k, pool items in item order) for each
    participant place k); return the lanes' screens as the link keeps them ({"segment", "judge", "items"} with the
    items in position order), which participants' units are made from as they take the places."""
    rows = list(Assignment.objects.filter(campaign=campaign).order_by("annotator_id", "order")
                .values_list("pk", "annotator_id", "item__external_id", "item__system"))
    systems = {pk: system for pk, _, _, system in rows}
    queued: dict[object, dict[str, list[int]]] = defaultdict(dict)  # judge -> input -> outputs, in order
    for pk, annotator_id, segment, _ in rows:
        queued[annotator_id].setdefault(segment, []).append(pk)
    pool_items = {i for _, items in lanes for i in items}
    pool_rows = {pk: (segment, system) for pk, segment, system in
                 Item.objects.filter(pk__in=pool_items).values_list("pk", "external_id", "system")} if lanes else {}
    offset = max(systems, default=0) + 1  # pool items are keyed apart from assignments: item id + offset
    for k, items in lanes:
        for item_id in items:
            segment, system = pool_rows[item_id]
            queued[lane_name(k)].setdefault(segment, []).append(item_id + offset)
            systems[item_id + offset] = system
    planned = screens_plan(queued, systems, per_screen=per_screen, seed=campaign.seed)
    registered = [entry for entry in planned if not isinstance(entry[0], str)]
    _queue_in_screen_order(registered)
    numbers: dict[int, int] = defaultdict(int)
    outputs_rows = []
    for annotator_id, segment, screen in registered:
        numbers[annotator_id] += 1
        unit = ComparisonUnit.objects.create(campaign=campaign, annotator_id=annotator_id, segment=segment,
                                             number=numbers[annotator_id])
        outputs_rows += [UnitOutput(unit=unit, assignment_id=pk, position=position)
                         for position, pk in enumerate(screen, start=1)]
    UnitOutput.objects.bulk_create(outputs_rows)
    lane_of = {lane_name(k): k for k, _ in lanes}
    return [{"segment": segment, "judge": lane_of[judge], "items": [key - offset for key in screen]}
            for judge, segment, screen in planned if isinstance(judge, str)]


def units_add(*, campaign: Campaign, annotator_id: int, screens: Sequence[tuple[str, Sequence[int]]]) -> int:
    """Give an annotator more units after the campaign is made (a participant's share): `screens` are (input, its
    assignments in position order), in queue order; they are numbered after the annotator's last. Return how many."""
    last = (ComparisonUnit.objects.filter(campaign=campaign, annotator_id=annotator_id)
            .order_by("-number").values_list("number", flat=True).first() or 0)
    rows = []
    for n, (segment, screen) in enumerate(screens, start=last + 1):
        unit = ComparisonUnit.objects.create(campaign=campaign, annotator_id=annotator_id, segment=segment, number=n)
        rows += [UnitOutput(unit=unit, assignment_id=pk, position=p) for p, pk in enumerate(screen, start=1)]
    UnitOutput.objects.bulk_create(rows)
    return len(screens)


def screens_cut(outputs: Sequence[int], systems: dict[int, str], *, per_screen: int,
                rng: random.Random) -> list[list[int]]:
    """An input's outputs (assignments) cut into screens for one annotator outside the campaign's design (training
    and control items a participant is given): positions drawn by `rng`, since practice is in no figure."""
    screens = []
    for screen in _screens(sorted(outputs, key=lambda k: systems[k]), per_screen):
        screen = list(screen)
        rng.shuffle(screen)
        screens.append(screen)
    return screens


def comparable(items: Sequence[int]) -> tuple[list[int], list[str]]:
    """The items whose input has another output among them (in the given order), and the inputs left alone."""
    inputs = dict(Item.objects.filter(pk__in=list(items)).values_list("pk", "external_id"))
    per_input: dict[str, int] = defaultdict(int)
    for item_id in items:
        per_input[inputs[item_id]] += 1
    alone = sorted(segment for segment, n in per_input.items() if n < 2)
    return [i for i in items if per_input[inputs[i]] >= 2], alone


def _queue_in_screen_order(planned: Plan) -> None:
    """Where an input is one screen, its outputs take their places in the queue in screen order, so finishing the
    first opens the second (their queue places are adjacent; they swap, through places no queue uses)."""
    screens: dict[tuple, int] = defaultdict(int)
    for annotator_id, segment, _ in planned:
        screens[(annotator_id, segment)] += 1
    wanted: dict[int, int] = {}
    for annotator_id, segment, screen in planned:
        if screens[(annotator_id, segment)] != 1:
            continue
        places = sorted(Assignment.objects.filter(pk__in=screen).values_list("order", flat=True))
        wanted.update(dict(zip(screen, places, strict=True)))
    current = dict(Assignment.objects.filter(pk__in=list(wanted)).values_list("pk", "order"))
    moving = [pk for pk, place in wanted.items() if current[pk] != place]
    if not moving:
        return
    Assignment.objects.filter(pk__in=moving).update(order=F("order") + ASIDE)
    for pk in moving:
        Assignment.objects.filter(pk=pk).update(order=wanted[pk])


def alone_warnings(alone: Sequence[str]) -> list[str]:
    """What setting up a comparing campaign left out: inputs with a single output, which no screen can show."""
    if not alone:
        return []
    shown = ", ".join(alone[:5]) + (f" and {len(alone) - 5} more" if len(alone) > 5 else "")
    return [f"protocol: {len(alone)} input(s) have a single output ({shown}), so nothing can be shown beside them; "
            "they are left out of the campaign"]


def units_of(assignment: Assignment):
    return ComparisonUnit.objects.filter(outputs__assignment_id=assignment.pk).order_by("number")


def unit_for_screen(assignment: Assignment, unit_pk: object = None) -> ComparisonUnit | None:
    """The unit the screen of this assignment shows: the one asked for (if it holds the assignment), else its first
    unfinished unit, else its first."""
    units = units_of(assignment)
    if unit_pk not in (None, ""):
        try:
            chosen = units.filter(pk=int(str(unit_pk))).first()
        except ValueError:
            raise UserError(f"unit: a unit id, not {unit_pk!r}", field="unit") from None
        if chosen is None:
            raise UserError(f"unit: {unit_pk} is not a screen of item {assignment.order}", field="unit")
        return chosen
    return units.filter(finished_at__isnull=True).first() or units.first()


def unit_assignments(unit: ComparisonUnit) -> list[Assignment]:
    """The unit's outputs' assignments in screen order, with their items."""
    rows = UnitOutput.objects.filter(unit=unit).select_related("assignment__item", "assignment__campaign")
    return [row.assignment for row in rows.order_by("position")]


def anchor(unit: ComparisonUnit) -> Assignment:
    """The assignment a unit's actions are recorded on (undo, time): its first position's."""
    return unit_assignments(unit)[0]


def _locked(unit: ComparisonUnit, user: User) -> ComparisonUnit:
    """The unit locked, for its judge, under a protocol whose screens ask for a choice (409 otherwise)."""
    locked = ComparisonUnit.objects.select_for_update().select_related("campaign").get(pk=unit.pk)
    first = anchor(locked)
    check_can_work(first, user)
    declared = protocols.get(locked.campaign.protocol)
    if not declared.prefers:
        raise OtherProtocol(f"Screen {locked.number} is judged under {declared.label.split(' (')[0]}: its outputs' "
                            "marks compare them, and it asks no choice.")
    return locked


def choice_write(unit: ComparisonUnit, choice: int | None, reason: str, ms: int | None) -> tuple[list, list]:
    """Store the choice and reason; return (old, new) as [choice, reason]. The caller holds the lock."""
    old = list(ComparisonUnit.objects.filter(pk=unit.pk).values_list("choice", "reason").get())
    changes: dict = {"choice": choice, "reason": reason, "chosen_at": timezone.now(), "choice_ms": ms,
                     "changes": F("changes") + 1}
    if unit.first_ms is None and choice is not None:
        changes["first_ms"] = ms
    ComparisonUnit.objects.filter(pk=unit.pk).update(**changes)
    return old, [choice, reason]


@transaction.atomic
def choice_set(*, unit: ComparisonUnit, user: User, choice: object = None, reason: object | None = None,
               ms: int | None = None) -> ComparisonUnit:
    """Set the unit's choice (the better output's position, or a tie) and its reason; on the undo stack of the
    unit's first output. Never once the unit is finished (409)."""
    locked = _locked(unit, user)
    if locked.finished_at is not None:
        raise UnitFinished(f"Screen {locked.number} is finished: its choice can no longer change.")
    value = pairwise.check_choice(choice) if choice not in (None, "") else locked.choice
    text = pairwise.check_reason(reason) if reason is not None else locked.reason
    old, new = choice_write(locked, value, text, ms)
    first = anchor(locked)
    if old != new:
        action_record(assignment=first, user=user, kind=WorkAction.Kind.PREFERENCE,
                      payloads=[{"unit": locked.pk, "old": old, "new": new}], ms=ms)
    activity_record(assignment=first)
    return ComparisonUnit.objects.get(pk=locked.pk)


def _output_of(unit: ComparisonUnit, position: object) -> Assignment:
    try:
        number = int(str(position))
    except ValueError:
        raise UserError(f"position: an output's place on the screen (1 or 2), not {position!r}",
                        field="position") from None
    found = UnitOutput.objects.filter(unit=unit, position=number).select_related("assignment__item",
                                                                                 "assignment__campaign").first()
    if found is None:
        raise UserError(f"position: screen {unit.number} has no output {number}", field="position")
    return found.assignment


@transaction.atomic
def unit_span_add(*, unit: ComparisonUnit, user: User, position: object, start: object, end: object,
                  ms: int | None = None) -> ErrorSpan:
    """Mark a stretch of one output of a preference screen (offsets into that output), a span that backs the
    choice; on the undo stack of the screen's first output, with the output it belongs to."""
    locked = _locked(unit, user)
    if locked.finished_at is not None:
        raise UnitFinished(f"Screen {locked.number} is finished: its spans can no longer change.")
    output = _output_of(locked, position)
    span = added_span_create(assignment=output, user=user, start=start, end=end, category="", record=False)
    first = anchor(locked)
    action_record(assignment=first, user=user, kind=WorkAction.Kind.ADDED,
                  payloads=[{"span": span.pk, "before": None, "after": snapshot(span), "output": output.pk}], ms=ms)
    activity_record(assignment=first)
    return span


@transaction.atomic
def unit_span_remove(*, unit: ComparisonUnit, user: User, span_pk: object, ms: int | None = None) -> str:
    """Remove one of the judge's spans on the screen's outputs; return its text."""
    locked = _locked(unit, user)
    if locked.finished_at is not None:
        raise UnitFinished(f"Screen {locked.number} is finished: its spans can no longer change.")
    members = {a.item_id: a for a in unit_assignments(locked)}
    try:
        pk = int(str(span_pk))
    except ValueError:
        raise UserError(f"span: a span id, not {span_pk!r}", field="span") from None
    span = (ErrorSpan.objects.select_related("annotation")
            .filter(pk=pk, annotation__source__added__campaign_id=locked.campaign_id,
                    annotation__source__added__annotator=user, annotation__item_id__in=list(members)).first())
    if span is None:
        raise UserError(f"span: {span_pk} is not one of your spans on screen {locked.number}", field="span")
    output = members[span.annotation.item_id]
    first = anchor(locked)
    action_record(assignment=first, user=user, kind=WorkAction.Kind.ADDED,
                  payloads=[{"span": span.pk, "before": snapshot(span), "after": None, "output": output.pk}], ms=ms)
    activity_record(assignment=first)
    text = span.text
    added_span_delete(span=span, assignment=output, user=user, record=False)
    return text


def unit_spans(unit: ComparisonUnit) -> dict[int, list[ErrorSpan]]:
    """The judge's spans on each output of the screen, by assignment, in text order."""
    members = unit_assignments(unit)
    spans = (ErrorSpan.objects.filter(annotation__source__added__campaign_id=unit.campaign_id,
                                      annotation__source__added__annotator_id=unit.annotator_id,
                                      annotation__item_id__in=[a.item_id for a in members], start__isnull=False)
             .select_related("annotation").order_by("start", "end", "pk"))
    by_item: dict[int, list[ErrorSpan]] = defaultdict(list)
    for span in spans:
        by_item[span.annotation.item_id].append(span)
    return {a.pk: by_item.get(a.item_id, []) for a in members}


def unit_unfinished(unit: ComparisonUnit) -> str | None:
    """What the unit needs before it can finish (None: nothing)."""
    if not protocols.get(unit.campaign.protocol).prefers:
        return None  # its outputs' own marks compare them: each output finishes on its own screen
    if unit.choice is None:
        return f"screen {unit.number} still needs a choice: which output is better, or a tie"
    if pairwise.reason_required(unit.campaign.protocol_options) and not unit.reason.strip():
        return f"screen {unit.number} still needs a reason for its choice"
    return None


@transaction.atomic
def unit_finish(*, unit: ComparisonUnit, user: User, seconds: int = 0) -> list[Assignment]:
    """Finish the unit; each of its outputs whose units are all finished is finished too (the shared finishing,
    with its checks). Return the outputs' assignments finished now."""
    from annotator.services.assignments import assignment_finish  # it asks the hooks, which read units

    locked = _locked(unit, user)
    if (needs := unit_unfinished(locked)) is not None:
        raise UnitError(needs, field="choice")
    if locked.finished_at is None:
        ComparisonUnit.objects.filter(pk=locked.pk).update(finished_at=timezone.now())
    done = []
    members = unit_assignments(locked)
    for position, assignment in enumerate(members):
        if assignment.is_done() or units_of(assignment).filter(finished_at__isnull=True).exists():
            continue
        done.append(assignment_finish(assignment=assignment, user=user, seconds=seconds if position == 0 else 0))
    return done


def unit_open(unit: ComparisonUnit) -> None:
    """Stamp the screen's first open (a conditional update: later opens keep the first)."""
    ComparisonUnit.objects.filter(pk=unit.pk, opened_at__isnull=True).update(opened_at=timezone.now())


def unit_reopen(unit: ComparisonUnit) -> bool:
    """An undo took a finished unit's choice away: the unit and its finished outputs open again."""
    if not ComparisonUnit.objects.filter(pk=unit.pk, finished_at__isnull=False).update(finished_at=None):
        return False
    for assignment in unit_assignments(unit):
        assignments_move(Assignment.objects.filter(pk=assignment.pk), Phase.DONE, assignment.reopened_phase())
    return True


def neighbour_units(unit: ComparisonUnit) -> tuple[ComparisonUnit | None, ComparisonUnit | None, int]:
    """The annotator's previous and next screens, and how many they have."""
    mine = ComparisonUnit.objects.filter(campaign_id=unit.campaign_id, annotator_id=unit.annotator_id)
    prev = mine.filter(number__lt=unit.number).order_by("-number").first()
    nxt = mine.filter(number__gt=unit.number).order_by("number").first()
    return prev, nxt, mine.count()



def next_open_unit(unit: ComparisonUnit) -> ComparisonUnit | None:
    """The annotator's next unfinished screen after this one, wrapping around; None when all are finished."""
    mine = ComparisonUnit.objects.filter(campaign_id=unit.campaign_id, annotator_id=unit.annotator_id,
                                         finished_at__isnull=True).exclude(pk=unit.pk)
    return mine.filter(number__gt=unit.number).order_by("number").first() or mine.order_by("number").first()
