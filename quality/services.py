"""Quality checks of a campaign: validate its settings, propose decoys, plant errors into hidden copies, and
grade the qualification step (docs/guides/quality-checks.md)."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone

from accounts.models import User
from annotator.engine.phases import Phase
from annotator.models import Assignment, Campaign, CampaignRun, ControlVerdict, SpanJudgment
from annotator.selectors.spans import judged_spans
from annotator.services.phases import assignments_move
from corpus import protocols
from corpus.cleaning import INT32_MAX
from corpus.models import Annotation, AnnotationKind, ErrorSpan, Item, MatchKind
from corpus.protocols import opennlgauge as protocol
from corpus.protocols.opennlgauge import SEVERITIES
from errors import UserError
from quality.decoy_explaining import decoy_explanations_autostart
from quality.engine import decoys, drawing
from quality.engine.planting import plant, planted_count
from quality.models import CheckSource, CheckSpan, PlantedOutput, Qualification
from quality.planted_writing import planted_writing_autostart
from quality.selectors.spans import spans_taken
from stats.overlap import shared_chars

MAX_SHARE = 0.5
# The span verdict and explanation verdict a decoy is judged right with
DECOY_KEY = (protocol.SPAN_NOT_ERROR, protocol.EXPLANATION_NOT_ERROR)
DECOY_EXPLANATION_KEYS = (protocol.EXPLANATION_NOT_ERROR, protocol.EXPLANATION_INCORRECT)


def decoy_key_choices() -> list[tuple[str, str]]:
    """(value, label) of each key a researcher may give a decoy: its span verdict, then its explanation's."""
    span = next(t.label for t in protocol.SPAN_VERDICTS if t.value == DECOY_KEY[0])
    labels = {t.value: t.label for t in protocol.EXPLANATION_VERDICTS}
    return [(value, f"{span} · {labels[value]}") for value in DECOY_EXPLANATION_KEYS]


class CheckError(UserError):
    """Check settings or a decoy that cannot be used as given; the message names the field."""


@dataclass(frozen=True)
class CheckSettings:
    """A campaign's check settings as the API and the form take them."""

    decoys: float = 0.0
    planted: float = 0.0
    vigilance_min: float = 0.6
    qualification_items: tuple[int, ...] = ()
    qualification_pass: float = 0.8
    exclude_flagged: bool = False
    planted_near_duplicates: bool = False  # copies may be of outputs their holder judges (else only of others)

    def as_qualification(self) -> dict[str, Any]:
        if not self.qualification_items:
            return {}
        return {"items": list(self.qualification_items), "pass": self.qualification_pass}


def checks_validate(settings: CheckSettings, dataset_id: int) -> None:
    """Refuse a setting out of range, or a training item not in the dataset, naming the field (and the ids)."""
    for name in ("decoys", "planted"):
        value = getattr(settings, name)
        if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= MAX_SHARE):
            raise CheckError(f"{name}: must be a share between 0 and {MAX_SHARE}; got {value!r}", field=name)
    for name, value in (("vigilance_min", settings.vigilance_min), ("qualification.pass", settings.qualification_pass)):
        if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1):
            raise CheckError(f"{name}: must be between 0 and 1; got {value!r}", field=name)
    ids = list(settings.qualification_items)
    if len(set(ids)) != len(ids):
        raise CheckError("qualification.items: an item is named twice", field="qualification.items")
    known = set(Item.objects.filter(pk__in=ids, dataset_id=dataset_id, derived_from__isnull=True)
                .values_list("pk", flat=True))
    if bad := [i for i in ids if i not in known]:
        raise CheckError(f"qualification.items: not items of this dataset: {', '.join(map(str, bad))}",
                         field="qualification.items")


def _inputs_text(item: Item) -> str:
    return "\n".join(str(v) for v in (item.inputs or {}).values())


def _check_annotation(campaign: Campaign, item_id: int, aspect: str) -> Annotation:
    label = f"checks of campaign {campaign.pk}"
    source, _ = CheckSource.objects.get_or_create(campaign=campaign, defaults={"label": label})
    annotation, _ = Annotation.objects.get_or_create(
        item_id=item_id, aspect=aspect, source=source, kind=AnnotationKind.ANNOTATOR, model="",
    )
    return annotation


def _machine_spans(campaign: Campaign, item_id: int) -> list[tuple[ErrorSpan, CampaignRun]]:
    links = {link.run_id: link for link in CampaignRun.objects.filter(campaign=campaign)}
    probe = Assignment(campaign=campaign, item_id=item_id)
    return [(span, links[span.annotation.source_id]) for span, _ in
            judged_spans(probe, {run_id: link.label for run_id, link in links.items()}, with_checks=False)]


def planted_outputs_make(
    *, campaign: Campaign, annotator_pk: int | None, own: Sequence[int], pool: Sequence[int], n: int,
    rng: random.Random, numbered: bool = False,
) -> list[int]:
    """Make up to n planted copies for one annotator from outputs outside their own queue (so they never see an
    output twice, one fact apart), and from their own outputs only when the campaign allows near-duplicates;
    return the planted items' ids. Without an annotator they are copies of a link's pool, handed to participants
    as they join (`planted_hand_out`). `numbered` names each copy by its position, for callers that may copy one
    output more than once for the same holder. Under a comparing protocol each copy comes with companions, the
    other outputs of its input copied verbatim (`planted_companions`)."""
    declared = protocols.get(campaign.protocol)
    per_screen = declared.compares
    others = [i for i in pool if i not in set(own)]
    rng.shuffle(others)
    mine = list(own)
    rng.shuffle(mine)
    made: list[int] = []
    originals = {i.pk: i for i in Item.objects.filter(pk__in=[*others, *mine])}
    taken = spans_taken(list(originals))
    next_position = (Item.objects.filter(dataset_id=campaign.dataset_id).aggregate(m=Max("position"))["m"] or 0) + 1
    for item_id in [*others, *mine] if campaign.planted_near_duplicates else others:
        if len(made) == n:
            break
        original = originals[item_id]
        # Other outputs lend the sentence kinds a sentence (one that states what this input does not).
        lenders = [o.output for pk, o in originals.items() if pk != item_id][:30]
        result = plant(original.output, _inputs_text(original), keep=taken[item_id], rng=rng, others=lenders)
        if result is None:
            continue
        copy = Item.objects.create(
            dataset_id=campaign.dataset_id, position=next_position, system=original.system,
            external_id=_copy_id(original.external_id, campaign.pk, annotator_pk, next_position if numbered else None),
            inputs=original.inputs, output=result.text, reference=original.reference, derived_from=original,
            perturbation={"planted": True, "campaign": campaign.pk, "kind": f"planted:{result.kind}"},
        )
        next_position += 1
        old_end = result.start + len(result.before)
        shift = len(result.after) - len(result.before)
        PlantedOutput.objects.create(
            campaign=campaign, annotator_id=annotator_pk, original=original, item=copy, kind=result.kind,
            start=result.start, end=result.end, before=result.before, after=result.after,
        )
        _spans_copy(campaign, item_id, copy.pk, old_end=old_end, shift=shift)
        if per_screen > 1:
            next_position = _companions_make(campaign, original, copy, pool=pool, n=per_screen - 1,
                                             position=next_position,
                                             beside_original=declared.planted_check == protocols.PREFERRED)
        made.append(copy.pk)
    return made


def _spans_copy(campaign: Campaign, item_id: int, copy_id: int, *, old_end: int = 0, shift: int = 0) -> None:
    """The machine spans of the campaign's runs on `item_id`, copied onto `copy_id` (moved by `shift` past
    `old_end`), so the copy shows what its original would."""
    for span, link in _machine_spans(campaign, item_id):
        start, end = span.start, span.end
        if start is not None and start >= old_end and shift:
            start, end = start + shift, end + shift
        twin = ErrorSpan.objects.create(
            annotation=_check_annotation(campaign, copy_id, span.annotation.aspect), position=span.position,
            text=span.text, start=start, end=end, match=span.match, multi_part=span.multi_part,
            ambiguous=span.ambiguous, explanation=span.explanation, severity=span.severity,
            category=span.category,
        )
        CheckSpan.objects.create(campaign=campaign, span=twin, campaign_run=link, role=CheckSpan.Role.COPY,
                                 original=span)


ORIGINAL_SUFFIX = "~original"  # a companion that is its copy's original has its system so suffixed (one per screen)


def _companions_make(campaign: Campaign, original: Item, copy: Item, *, pool: Sequence[int], n: int,
                     position: int, beside_original: bool = False) -> int:
    """Under a comparing protocol a planted copy is shown on a screen of its own: beside it, verbatim copies of up
    to `n` other outputs of its input (of the campaign's outputs), under the copy's id, so the screen looks like
    any screen of that input with one output changed; `beside_original` (a preference finds the copy) shows a
    verbatim copy of the original instead. Copies are never real work, so the companions are in no figure
    either. Return the next free position."""
    if beside_original:
        others = [original]
    else:
        others = list(Item.objects.filter(dataset_id=campaign.dataset_id, external_id=original.external_id,
                                          derived_from__isnull=True, pk__in=list(pool)).exclude(pk=original.pk)
                      .order_by("system", "pk")[:n])
    for other in others:
        twin = Item.objects.create(
            dataset_id=campaign.dataset_id, position=position,
            system=other.system + ORIGINAL_SUFFIX if other.pk == original.pk else other.system,
            external_id=copy.external_id,
            inputs=other.inputs, output=other.output, reference=other.reference, derived_from=other,
            perturbation={"planted_companion": True, "campaign": campaign.pk, "copy": copy.pk},
        )
        position += 1
        _spans_copy(campaign, other.pk, twin.pk)
    return position


def planted_companions(copies: Sequence[int]) -> dict[int, list[int]]:
    """Each planted copy's companions on its screen (item ids, by system): empty outside comparing protocols."""
    rows = Item.objects.filter(perturbation__planted_companion=True, perturbation__copy__in=list(copies))
    found: dict[int, list[int]] = {c: [] for c in copies}
    for pk, copy in rows.order_by("system", "pk").values_list("pk", "perturbation__copy"):
        found[int(copy)].append(pk)
    return found


def _copy_id(original: str, campaign_pk: int, annotator_pk: int | None, position: int | None) -> str:
    """The copy's external id, unique in its dataset beside the original's system: a holder without `position`
    gets one copy of an original; with it (the copy's own position, unique in the dataset) as many as it needs,
    as the link's pool does, copying an original once per round for as many participants as it will take."""
    holder = "pool" if annotator_pk is None else str(annotator_pk)
    suffix = f"~planted-{campaign_pk}-{holder}" + (f"-{position}" if position is not None else "")
    return original[: 200 - len(suffix)] + suffix


def planted_hand_out(*, campaign: Campaign, annotator_pk: int, n: int, avoid: set[int], pool: Sequence[int],
                     rng: random.Random) -> list[int]:
    """Give a participant n planted copies: the pool's waiting copies first (never of an output in `avoid`,
    which they judge or hold a copy of already), then new ones made like a registered annotator's; return the
    copies' item ids. Each waiting copy is claimed with a conditional update, so two participants furnished at
    once never get the same one."""
    if n <= 0:
        return []
    waiting = list(PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=True)
                   .exclude(original_id__in=avoid).order_by("pk").values_list("pk", "original_id", "item_id"))
    given: list[tuple[int, int]] = []
    seen: set[int] = set()
    for pk, original_id, item_id in waiting:
        if len(given) == n:
            break
        if original_id not in seen and PlantedOutput.objects.filter(pk=pk, annotator__isnull=True).update(
                annotator_id=annotator_pk):
            given.append((pk, item_id))
            seen.add(original_id)
    made = []
    if len(given) < n:
        made = planted_outputs_make(campaign=campaign, annotator_pk=annotator_pk, own=sorted(avoid | seen),
                                    pool=pool, n=n - len(given), rng=rng, numbered=True)
    return [item_id for _, item_id in given] + made


def planted_near_duplicates(campaign: Campaign) -> int:
    """How many planted copies are of an output their holder also judges (near-duplicates one fact apart)."""
    judged = Assignment.objects.filter(campaign=campaign, annotator_id=OuterRef("annotator_id"),
                                       item_id=OuterRef("original_id"))
    return PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=False).filter(Exists(judged)).count()


def planted_release(*, campaign: Campaign, item_ids: Sequence[int]) -> int:
    """Put planted copies back in the pool (their holder left before working on them); return how many."""
    return PlantedOutput.objects.filter(campaign=campaign, item_id__in=list(item_ids)).update(annotator=None)


def decoys_per_output(campaign: Campaign) -> dict[int, int]:
    """How many decoys each output of the campaign shows (outputs without one are absent)."""
    rows = (CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY)
            .values_list("span__annotation__item_id", flat=True))
    return dict(Counter(rows))


# ---- decoys -----------------------------------------------------------------------------------------------


@dataclass
class DecoyProposal:
    item_id: int
    start: int
    end: int
    text: str
    label: str
    explanation: str
    severity: int | None = None
    category: str = ""
    aspect: str = ""
    donor_id: int | None = None  # the real span it copies (its model explains it: quality.decoy_explaining)
    written: str = ""  # the location as its evaluator wrote it, when not the stretch itself (with `match`)
    match: str = MatchKind.EXACT


@transaction.atomic
def decoy_add(*, campaign: Campaign, proposal: DecoyProposal,
              key_explanation: str = protocol.EXPLANATION_NOT_ERROR) -> CheckSpan:
    """Store one decoy of the campaign (refused when it overlaps a span of any source on that output)."""
    item = Item.objects.filter(pk=proposal.item_id, dataset_id=campaign.dataset_id).first()
    if item is None:
        raise CheckError(f"item: {proposal.item_id} is not an item of this campaign's dataset", field="item")
    if not 0 <= proposal.start < proposal.end <= len(item.output):
        raise CheckError(f"start/end: must satisfy 0 <= start < end <= {len(item.output)}", field=("start", "end"))
    if any(shared_chars((proposal.start, proposal.end), span) for span in spans_taken([item.pk])[item.pk]):
        raise CheckError(f"start/end: {proposal.start}-{proposal.end} overlaps a span some source marks",
                         field=("start", "end"))
    link = CampaignRun.objects.filter(campaign=campaign, label=proposal.label).first()
    if link is None:
        raise CheckError(f"label: {proposal.label!r} is not an evaluator label of this campaign", field="label")
    if proposal.match not in (MatchKind.EXACT, *LOOSE_MATCHES):
        raise CheckError(f"match: a decoy's location is found by an exact, normalized or fuzzy match, not "
                         f"{proposal.match!r}", field="match")
    if key_explanation not in DECOY_EXPLANATION_KEYS:
        raise CheckError(f"key: the explanation key of a decoy is one of {', '.join(DECOY_EXPLANATION_KEYS)}",
                         field="key")
    span = ErrorSpan.objects.create(
        annotation=_check_annotation(campaign, item.pk, proposal.aspect), position=0,
        text=proposal.written or item.output[proposal.start:proposal.end], start=proposal.start, end=proposal.end,
        match=proposal.match, explanation=proposal.explanation, severity=proposal.severity,
        category=proposal.category,
        # As the aligner marks a run's span whose quoted text occurs more than once (the explanation names none).
        ambiguous=item.output.count(item.output[proposal.start:proposal.end]) > 1,
    )
    return CheckSpan.objects.create(
        campaign=campaign, span=span, campaign_run=link, role=CheckSpan.Role.DECOY, donor_id=proposal.donor_id,
        key_span_verdict=DECOY_KEY[0], key_explanation_verdict=key_explanation,
    )


@dataclass(frozen=True)
class Tally:
    """Known answers a campaign asked for and the number made, with the reason when fewer were made."""

    asked: int = 0
    made: int = 0
    why: str = ""


LOOSE_MATCHES = (MatchKind.NORMALIZED, MatchKind.FUZZY)


def decoys_propose(*, campaign: Campaign, item_ids: Sequence[int],
                   rng: random.Random) -> tuple[list[DecoyProposal], Tally]:
    """Propose decoys making up about `campaign.decoys` of the machine spans on these outputs, drawn like them
    (quality.engine.drawing): each copies a real machine span (its label, severity, category and the voice of its
    explanation) onto a stretch the input supports and no source marks, on its own output or another written from
    the same input data. The tally says how many the share asks for and why fewer were proposed."""
    machine = {i: _machine_spans(campaign, i) for i in item_ids}
    n_machine = sum(len(v) for v in machine.values())
    wanted = round(campaign.decoys * n_machine / (1 - campaign.decoys)) if campaign.decoys else 0
    items = {i.pk: i for i in Item.objects.filter(pk__in=list(item_ids))}
    sources = [
        drawing.Source(output=item_id, start=span.start, end=span.end, ref=span.pk, donor=decoys.Donor(
            label=link.label, text=span.text, explanation=span.explanation, severity=span.severity,
            category=span.category, aspect=span.annotation.aspect,
            position=span.start / max(len(items[item_id].output), 1), ambiguous=span.ambiguous,
            match=span.match if span.match in LOOSE_MATCHES else MatchKind.EXACT))
        for item_id, pairs in machine.items() for span, link in pairs if span.start is not None and span.text
    ]
    if campaign.decoys and not sources:
        labelled = CampaignRun.objects.filter(campaign=campaign).exists()
        why = (f"the {len(item_ids)} outputs carry no machine span with a location, so no share of their spans can be "
               "decoys" if labelled else "the campaign judges no evaluator run, so there is no label to show a decoy "
               "under")
        return [], Tally(0, 0, why)
    if not wanted:
        return [], Tally()
    taken = spans_taken(list(items))
    links = {link.run_id: link.label for link in CampaignRun.objects.filter(campaign=campaign)}
    judged: dict[int, set[str]] = {i: set() for i in items}
    for item_id, run_id in Annotation.objects.filter(item_id__in=list(items), source_id__in=list(links)).values_list(
            "item_id", "source_id"):
        judged[item_id].add(links[run_id])
    outputs = [
        drawing.Output(key=item.pk, text=item.output, group=json.dumps(item.inputs or {}, sort_keys=True),
                       candidates=tuple(decoys.decoy_candidates(item.output, _inputs_text(item), taken[item.pk])),
                       labels=frozenset(judged[item.pk]))
        for item in items.values()
    ]
    drawn = drawing.draw_decoys(outputs, sources, campaign.decoys, rng)
    proposals = [
        DecoyProposal(item_id=p.output, start=p.candidate.start, end=p.candidate.end, text=p.candidate.text,
                      label=p.source.donor.label, explanation=p.explanation, severity=p.source.donor.severity,
                      category=p.source.donor.category, aspect=p.source.donor.aspect, donor_id=p.source.ref,
                      written=p.written if p.written != p.candidate.text else "", match=p.match)
        for p in drawn.placements
    ]
    why = ""
    if len(proposals) < wanted:
        if 0 < drawn.share < campaign.decoys - 1e-9:
            why = (f"{campaign.decoys:g} of {n_machine} machine spans asks for {wanted} decoys, but the outputs "
                   f"holding most real spans leave room for a share of only {drawn.share:.2f} beside them (their "
                   "evaluators mark most of their text); decoys follow the real spans rather than crowd onto the "
                   f"lightly marked outputs, where annotators could learn to expect them: {len(proposals)} proposed")
        else:
            why = (f"{campaign.decoys:g} of {n_machine} machine spans asks for {wanted} decoys, but the "
                   f"{len(item_ids)} outputs hold only {len(proposals)} stretches like their machine spans that the "
                   "input supports and no source marks")
    return proposals, Tally(wanted, len(proposals), why)


def decoy_update(*, decoy: CheckSpan, explanation: str | None = None, label: str | None = None,
                 key_explanation: str | None = None) -> CheckSpan:
    """The answer-key page's edit of a decoy: its explanation, the label it is shown under, its key."""
    if explanation is not None:
        if not explanation.strip():
            raise CheckError("explanation: must not be blank", field="explanation")
        decoy.span.explanation = explanation
        decoy.span.save(update_fields=["explanation"])
    if label is not None:
        link = CampaignRun.objects.filter(campaign_id=decoy.campaign_id, label=label).first()
        if link is None:
            raise CheckError(f"label: {label!r} is not an evaluator label of this campaign", field="label")
        decoy.campaign_run = link
    if key_explanation is not None:
        if key_explanation not in DECOY_EXPLANATION_KEYS:
            raise CheckError(f"key: one of {', '.join(DECOY_EXPLANATION_KEYS)}", field="key")
        decoy.key_explanation_verdict = key_explanation
    decoy.save()
    return decoy


def _offset(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= INT32_MAX:
        raise ValueError(f"{name}: a character offset, a whole number from 0")
    return value


def _severity(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value not in SEVERITIES:
        raise ValueError(f"severity: one of {', '.join(map(str, SEVERITIES))} (or null)")
    return value


@transaction.atomic
def decoys_import(campaign: Campaign, text: str) -> int:
    """Parse and store decoys from JSONL, all or nothing; a bad line is named with its field."""
    ids = dict(Item.objects.filter(dataset_id=campaign.dataset_id, derived_from__isnull=True)
               .values_list("external_id", "pk"))
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise TypeError("a JSON object per line")
            proposal = DecoyProposal(
                item_id=ids[str(data["item_id"])], start=_offset(data["start"], "start"),
                end=_offset(data["end"], "end"), text="", label=str(data["label"]),
                explanation=str(data["explanation"]), severity=_severity(data.get("severity")),
                category=str(data.get("category", "")),
                aspect=campaign.aspects[0] if campaign.aspects else "",
            )
        except json.JSONDecodeError as exc:
            raise CheckError(f"line {number}: not JSON ({exc.msg})") from None
        except KeyError as exc:
            raise CheckError(f"line {number}: {exc.args[0]!r} is missing or names no item of the dataset") from None
        except (TypeError, ValueError) as exc:
            raise CheckError(f"line {number}: {exc}") from None
        rows.append((number, proposal, str(data.get("key_explanation", protocol.EXPLANATION_NOT_ERROR))))
    for number, proposal, key in rows:
        try:
            decoy_add(campaign=campaign, proposal=proposal, key_explanation=key)
        except UserError as exc:
            raise CheckError(f"line {number}: {exc}") from None
    return len(rows)


@transaction.atomic
def decoy_drop(*, decoy: CheckSpan) -> None:
    """Drop a decoy with the judgments made of it (it was never real work)."""
    decoy.span.delete()


# ---- the campaign's checks, made once at creation ----------------------------------------------------------


@dataclass
class Queues:
    """Per annotator: (item id, is control) pairs of real work, and the planted copies added to it; with a
    participant link, its pool's outputs and how many planted copies its participants will need."""

    real: dict[int, list[tuple[int, bool]]]
    planted: dict[int, list[int]] = field(default_factory=dict)
    pool: Sequence[int] = ()
    pool_copies: int = 0


@dataclass(frozen=True)
class ChecksMade:
    decoys: Tally = Tally()
    planted: Tally = Tally()


def checks_prepare(*, campaign: Campaign, queues: Queues, rng: random.Random, start_jobs: bool = True) -> ChecksMade:
    """Propose and store the decoys over every output judged (the registered annotators' and the link's pool) and
    start the job that has their evaluators' models explain them; make each annotator's planted copies (they join
    their queue) and the pool's copies for participants, and start the job that has a model write their errors
    (unless not `start_jobs`: a dry run asks no server); return what was asked and made."""
    assigned = sorted({item_id for queue in queues.real.values() for item_id, _ in queue} | set(queues.pool))
    proposed = Tally()
    if campaign.decoys:
        proposals, proposed = decoys_propose(campaign=campaign, item_ids=assigned, rng=rng)
        for proposal in proposals:
            decoy_add(campaign=campaign, proposal=proposal)
        if start_jobs:
            decoy_explanations_autostart(campaign)
    planted = Tally()
    if campaign.planted:
        asked = made = 0
        short: list[int] = []  # made by a call that ran out of outputs: how many outputs could take one
        comparing = protocols.get(campaign.protocol).comparing
        segments = dict(Item.objects.filter(pk__in=assigned).values_list("pk", "external_id")) if comparing else {}
        for annotator_pk, queue in queues.real.items():
            own = [item_id for item_id, _ in queue]
            # under a comparing protocol a planted copy is a screen, so the share is of the judge's inputs
            n = planted_count(campaign.planted, len({segments[i] for i in own}) if comparing else len(own))
            queues.planted[annotator_pk] = planted_outputs_make(
                campaign=campaign, annotator_pk=annotator_pk, own=own, pool=assigned, n=n,
                rng=random.Random(f"{campaign.seed}:planted:{annotator_pk}"),
            )
            asked, made = asked + n, made + len(queues.planted[annotator_pk])
            if len(queues.planted[annotator_pk]) < n:
                short.append(len(queues.planted[annotator_pk]))
        pool_made = 0
        for round_ in range(queues.pool_copies):  # each round copies an output at most once
            if pool_made >= queues.pool_copies:
                break
            batch = planted_outputs_make(
                campaign=campaign, annotator_pk=None, own=(), pool=queues.pool, n=queues.pool_copies - pool_made,
                rng=random.Random(f"{campaign.seed}:planted:pool:{round_}"), numbered=True,
            )
            pool_made += len(batch)
            if not batch:
                short.append(0)
                break
        asked, made = asked + queues.pool_copies, made + pool_made
        why = ""
        if made < asked:
            why = (f"only {min(short)} of the {len(assigned)} outputs can take a planted error (a number, a name "
                   "the input mentions, or a sentence to swap or add, outside every span of any source)")
            if not campaign.planted_near_duplicates and queues.real:
                why += (" outside the judge's own queue; planted_near_duplicates allows copies of their own outputs, "
                        "one fact apart from what they judge")
        planted = Tally(asked, made, why)
        if start_jobs:
            planted_writing_autostart(campaign)
    return ChecksMade(decoys=proposed, planted=planted)


# ---- qualification -----------------------------------------------------------------------------------------


def qualification_grade(*, campaign: Campaign, annotator: User) -> Qualification | None:
    """Grade the annotator's training once every training item is finished: the share of span verdicts equal
    to the key. None while training items are still open (or the campaign has none)."""
    training = Assignment.objects.filter(campaign=campaign, annotator=annotator, is_training=True)
    if not training.exists() or training.exclude(status=Assignment.Status.DONE).exists():
        return None
    key = dict(ControlVerdict.objects.filter(campaign=campaign).values_list("span_id", "span_verdict"))
    given = SpanJudgment.objects.filter(assignment__in=training, span_id__in=list(key)).values_list(
        "span_id", "span_verdict")
    answers = dict(given)
    score = sum(answers.get(span_id) == verdict for span_id, verdict in key.items()) / len(key) if key else 1.0
    mark = float((campaign.qualification or {}).get("pass", 0.8))
    row, created = Qualification.objects.get_or_create(campaign=campaign, annotator=annotator)
    row.score, row.passed, row.decided_at = score, score >= mark, timezone.now()
    row.save()
    return row


@transaction.atomic
def qualification_reopen(*, campaign: Campaign, annotator: User) -> int:
    """The researcher re-opens training for an annotator below the pass mark: their training items return to
    the training phase (their verdicts stay, to be changed); return how many."""
    row = Qualification.objects.filter(campaign=campaign, annotator=annotator).first()
    if row is None or row.passed is not False:
        raise CheckError(f"{annotator.username} has no failed qualification to re-open")
    n = assignments_move(Assignment.objects.filter(campaign=campaign, annotator=annotator, is_training=True),
                         Phase.DONE, Phase.TRAINING)
    row.passed, row.score, row.attempts = None, None, row.attempts + 1
    row.save()
    return n
