"""Set up a study: a campaign with its assignments, control arm, sample, quality checks and participant link.

The one place that composes them, so it sits above the apps it composes (annotator, quality, studies).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import transaction

from accounts.models import Role, User
from annotator.engine.categories import category_set, default_categories
from annotator.engine.crossing import control_arm_draw
from annotator.engine.phases import initial_phase
from annotator.models import Assignment, Campaign, CampaignRun
from annotator.services.campaigns import (
    DEFAULT_GUIDELINES,
    MAX_ASPECT,
    MAX_GUIDELINES,
    MAX_NAME,
    REVIEWER_ROLES,
    SEED_MAX,
    SEED_MIN,
    CampaignError,
    ControlKey,
    _check_text,
    campaign_control_set,
    campaign_name_check,
    neutral_labels,
)
from annotator.services.routing import RoutingSpec, campaign_route_draw
from annotator.services.sampling import SampleSpec, campaign_sample_draw
from annotator.services.units import alone_warnings, comparable, units_make
from corpus import protocols
from corpus.models import Annotation, Dataset, Item
from corpus.protocols.errors import ProtocolError
from errors import UserError
from quality.engine.power import CheckPower
from quality.services import (
    CheckSettings,
    ChecksMade,
    Queues,
    Tally,
    checks_prepare,
    checks_validate,
    planted_companions,
    planted_count,
    planted_near_duplicates,
)
from stats.routing import ACTIVE
from studies.design import (
    Pool,
    WeakChecks,
    arm_warnings,
    checks_power_of,
    checks_power_refusal,
    checks_warnings,
    pool_refusal,
    pool_warnings,
    weak_checks,
)
from studies.models import SetupReport, StudyLink
from studies.participants import LinkSettings, link_create, link_settings_check
from studies.pool import slots_create


@dataclass(frozen=True)
class CampaignSpec:
    """A study's design as the form, the API and scripts give it: what is judged by whom, with which arms,
    checks and participant link. Validated by `campaign_create`, which names the field at fault."""

    name: str
    dataset: Dataset
    runs: Sequence = ()
    annotators: Sequence[User] = ()
    aspects: Sequence[str] = ()
    annotators_per_item: int = 1
    guidelines: str = ""
    seed: int = 0
    item_ids: Sequence[int] | None = None  # default: the items the runs annotated (in the campaign's aspects)
    control_item_ids: Sequence[int] = ()
    categories: Sequence[str] | None = None
    reviewers: Sequence[User] = ()
    sample: SampleSpec | None = None
    control_arm: float = 0.0
    link: LinkSettings | None = None
    checks: CheckSettings = field(default_factory=CheckSettings)
    protocol: str = protocols.DEFAULT  # corpus.protocols: what the item screen asks and how errors are scored
    protocol_options: dict | None = None  # the protocol's settings (MQM: its own tree, its weights)
    routing: RoutingSpec | None = None
    control_keys: Sequence[ControlKey] = ()  # the known verdicts of control and training items' spans
    accept_weak_checks: bool = False  # create a link study with pass/fail codes even if its checks flag nobody

    def __post_init__(self) -> None:
        if self.checks is None:  # the form and the API say "no checks" as None
            object.__setattr__(self, "checks", CheckSettings())


@transaction.atomic
def campaign_create(spec: CampaignSpec, *, created_by: User | None = None, start_jobs: bool = True) -> Campaign:
    """Create a campaign and its assignments: open at once, or a draft while it has decoys to review (or planted
    outputs whose errors a model writes, with PLANTED_WRITE_AUTO on).

    Items default to those the runs annotated. Each item goes to `annotators_per_item` judges: registered
    annotators chosen round-robin so loads stay balanced, and with a `link` the places left over, which
    participants take as they join (studies.pool). Control items go to every annotator and participant. Run
    labels are shuffled with the seed so "Evaluator A" says nothing about which run it is. A `control_arm` share
    of the outputs starts unprimed for half of their judges, registered or participant
    (annotator.engine.crossing). Decoys are proposed over every output judged, planted copies made for each
    registered annotator and for the participants the pool will take. What could not be made as asked is
    returned as warnings in `campaign.warnings` and kept in its `SetupReport`; a link nobody could ever join
    is refused, and so is a link study with a fail code whose checks can flag nobody (unless
    `accept_weak_checks`). The checks' power is in `campaign.checks_power` (studies.design.checks_power_of).
    """
    _validate(spec)
    campaign = _campaign_row(spec, created_by)
    items, training = _items(campaign, spec)
    declared = protocols.get(spec.protocol)
    alone: list[str] = []
    if declared.comparing:  # only outputs with another output of their input can be compared
        items, alone = comparable(items)
        training, alone_training = comparable(training)
        alone += alone_training
    controls = set(spec.control_item_ids)
    outputs = [i for i in items if i not in controls]
    inputs = _inputs(items) if declared.comparing else {}
    per_annotator = _deal(items, controls, spec.annotators, spec.annotators_per_item, inputs)
    registered = min(spec.annotators_per_item, len(spec.annotators))
    pool = None
    if spec.link is not None:
        # Under a comparing protocol a participant takes whole inputs, and items_per_participant counts them.
        pool = Pool(outputs=len(set(inputs[i] for i in outputs)) if declared.comparing else len(outputs),
                    judges=spec.annotators_per_item - registered, registered=registered,
                    per_participant=spec.link.items_per_participant, cap=spec.link.cap,
                    unit="inputs" if declared.comparing else "outputs")
        pool_refusal(pool, spec.annotators_per_item)
    judges = {item_id: [] for item_id in outputs}
    for annotator_pk, queue in per_annotator.items():
        for item_id, ctrl in queue:
            if not ctrl:
                judges[item_id].append(annotator_pk)
    lanes = [-k for k in range(1, pool.judges + 1)] if pool else []  # participant k of each output, by place
    unprimed = _control_arm({i: [*js, *lanes] for i, js in judges.items()}, spec.runs, share=spec.control_arm,
                            seed=spec.seed)
    if declared.comparing:  # one screen, one arm: its outputs all pre-filled, or none of them
        unprimed = _arm_per_screen(unprimed, inputs, {i: [*js, *lanes] for i, js in judges.items()})
    link = None
    if pool is not None:
        link = link_create(campaign=campaign, spec=spec.link, item_ids=outputs,
                           controls=[i for i in items if i in controls])
        slots_create(link=link, judges={i: [(i, lane) in unprimed for lane in lanes] for i in outputs})
    queues = Queues(real={pk: list(queue) for pk, queue in per_annotator.items()},
                    pool=outputs if pool else (),
                    pool_copies=planted_count(spec.checks.planted, pool.share) * pool.expected() if pool else 0)
    made = checks_prepare(campaign=campaign, queues=queues, rng=random.Random(f"{spec.seed}:checks"),
                          start_jobs=start_jobs)
    companions: dict[int, list[int]] = {}
    if declared.comparing:  # a planted copy is a screen of its own: it and its companions share the copy's id
        companions = planted_companions([c for copies in queues.planted.values() for c in copies])
        screens_of = dict(Item.objects.filter(pk__in=[i for c, mates in companions.items() for i in (c, *mates)])
                          .values_list("pk", "external_id"))
        inputs = {**inputs, **screens_of}
    rows = []
    for annotator_pk, queue in per_annotator.items():
        # Planted copies join the shuffle as ordinary work; training items come first, in the order given.
        queue += [(item_id, False) for copy in queues.planted.get(annotator_pk, [])
                  for item_id in (copy, *companions.get(copy, []))]
        queue[:] = _shuffled(queue, inputs, random.Random(f"{spec.seed}:{annotator_pk}"))
        rows += [
            Assignment(campaign=campaign, item_id=item_id, annotator_id=annotator_pk, order=order, is_training=True,
                       phase=initial_phase(training=True))
            for order, item_id in enumerate(training, start=1)
        ]
        rows += [
            Assignment(campaign=campaign, item_id=item_id, annotator_id=annotator_pk, order=order, is_control=ctrl,
                       in_control_arm=(item_id, annotator_pk) in unprimed,
                       phase=initial_phase(unprimed=(item_id, annotator_pk) in unprimed))
            for order, (item_id, ctrl) in enumerate(queue, start=len(training) + 1)
        ]
    Assignment.objects.bulk_create(rows)
    if declared.comparing:
        screens = units_make(campaign=campaign, per_screen=declared.compares,
                             lanes=[(k, outputs) for k in range(1, pool.judges + 1)] if pool else ())
        if link is not None:
            link.screens = screens
            link.save(update_fields=["screens"])
    if spec.control_keys:
        campaign_control_set(campaign=campaign, keys=spec.control_keys)
    warnings = [
        *(pool_warnings(pool) if pool else []),
        *arm_warnings(share=spec.control_arm, outputs=len(outputs), judges=spec.annotators_per_item),
        *alone_warnings(alone),
        *checks_warnings(made, decoys=spec.checks.decoys, planted=spec.checks.planted),
        *([f"planted_near_duplicates: {n} planted cop{'y is' if n == 1 else 'ies are'} of outputs their judge also "
           "judges, one fact apart from an output in the same queue"]
          if (n := planted_near_duplicates(campaign)) else []),
        *([f"qualification: under the {spec.protocol!r} protocol the training items are practice: they come first "
           "and are not graded (a key is verdicts on machine spans, which this protocol does not give), so nobody "
           "is held back"] if spec.checks.qualification_items and not protocols.get(spec.protocol).grades_training
          else []),
    ]
    report = SetupReport.objects.create(
        campaign=campaign, warnings=warnings, decoys_asked=made.decoys.asked, decoys_made=made.decoys.made,
        decoys_why=made.decoys.why, planted_asked=made.planted.asked, planted_made=made.planted.made,
        planted_why=made.planted.why,
    )
    # The power follows from what was made (and the key set), so it is computed once the report is kept.
    campaign.checks_power = checks_power_of(campaign)
    if weak := checks_power_refusal(campaign.checks_power, link=link, accept_weak=spec.accept_weak_checks):
        report.warnings = warnings = [*warnings, *weak]
        report.save(update_fields=["warnings"])
    campaign.warnings = warnings
    return campaign


@dataclass(frozen=True)
class SetupPreview:
    """What creating the campaign would make and say, without making it: its warnings, the checks asked and made,
    their power, and the refusal creation would give for weak checks (None when it would create it)."""

    warnings: list[str]
    checks_made: ChecksMade
    checks_power: list[CheckPower]
    refusal: UserError | None


class _RolledBack(Exception):
    def __init__(self, preview: SetupPreview) -> None:
        super().__init__("dry run")
        self.preview = preview


def campaign_dry_run(spec: CampaignSpec, *, created_by: User | None = None) -> SetupPreview:
    """Set the campaign up exactly as `campaign_create` would, then roll everything back: the figures are the
    ones creation gives (decoys and planted outputs as drawn), and no server is asked. A refusal other than weak
    checks is raised as creation raises it."""
    try:
        with transaction.atomic():
            campaign = campaign_create(replace(spec, accept_weak_checks=True), created_by=created_by,
                                       start_jobs=False)
            report = SetupReport.objects.get(campaign=campaign)
            refusal = None
            try:
                checks_power_refusal(campaign.checks_power, link=StudyLink.objects.filter(campaign=campaign).first(),
                                     accept_weak=spec.accept_weak_checks)
            except WeakChecks as exc:
                refusal = exc
            weak = weak_checks(campaign.checks_power)
            made = ChecksMade(decoys=Tally(report.decoys_asked, report.decoys_made, report.decoys_why),
                              planted=Tally(report.planted_asked, report.planted_made, report.planted_why))
            # A refused design's weakness is the refusal, not also a warning.
            warnings = [w for w in campaign.warnings if refusal is None or weak is None or w != weak[0]]
            raise _RolledBack(SetupPreview(warnings=warnings, checks_made=made, checks_power=campaign.checks_power,
                                           refusal=refusal))
    except _RolledBack as done:
        return done.preview


def _validate(spec: CampaignSpec) -> None:
    """Refuse a design that cannot be set up, naming the field."""
    _check_text("name", spec.name, MAX_NAME, required=True, identifier=True)
    campaign_name_check(spec.name)
    for aspect in spec.aspects:
        _check_text("aspects", aspect, MAX_ASPECT, required=True)
    _check_text("guidelines", spec.guidelines, MAX_GUIDELINES)
    if not SEED_MIN <= spec.seed <= SEED_MAX:
        raise CampaignError(f"seed: must be between {SEED_MIN} and {SEED_MAX}", field="seed")
    if spec.link is not None:
        link_settings_check(spec.link)
    if not spec.annotators and spec.link is None:
        raise CampaignError("a campaign needs at least one annotator (or a participant link)", field="annotators")
    if spec.sample is not None and spec.routing is not None:
        raise CampaignError("sample, routing: a campaign either judges a sample or routes its spans, not both",
                            field=("sample", "routing"))
    if spec.routing is not None:
        spec.routing.check()
        if spec.routing.design == ACTIVE and spec.link is not None:
            # A top-up adds outputs to registered annotators' queues; a link's pool is fixed when it is made.
            raise CampaignError("routing.design, link: the active design tops up registered annotators' queues "
                                "while the campaign runs, and a participant link's pool cannot follow it; use the "
                                "threshold design with a link", field=("routing.design", "link"))
    if not 0 <= spec.control_arm <= 1:
        raise CampaignError(f"control_arm: {spec.control_arm} must be a share between 0 and 1", field="control_arm")
    if spec.link is None and spec.annotators_per_item > len(spec.annotators):
        raise CampaignError(f"{spec.annotators_per_item} annotators per item, but only {len(spec.annotators)} "
                            "annotators", field="annotators_per_item")
    if any(getattr(run, "dataset_id", spec.dataset.pk) != spec.dataset.pk for run in spec.runs):
        raise CampaignError("every evaluator run of a campaign must be on the campaign's dataset", field="runs")
    # The roles the campaign form offers: judges are annotators, reviewers are researchers or admins.
    if wrong := sorted(a.username for a in spec.annotators if a.role != Role.ANNOTATOR or not a.is_active):
        raise CampaignError(f"annotators: {', '.join(wrong)} cannot judge: a judge must be an active user with "
                            "the role 'annotator'", field="annotators")
    if wrong := sorted(r.username for r in spec.reviewers if r.role not in REVIEWER_ROLES or not r.is_active):
        raise CampaignError(f"reviewers: {', '.join(wrong)} cannot review: a reviewer must be an active researcher "
                            "or admin", field="reviewers")
    if judging := sorted({r.username for r in spec.reviewers} & {a.username for a in spec.annotators}):
        # Reviewers read every judge's name and verdicts; a judge of the same campaign must not.
        raise CampaignError(f"reviewers: {', '.join(judging)} also judge this campaign; a reviewer cannot be a judge",
                            field="reviewers")
    checks_validate(spec.checks, spec.dataset.pk)
    try:
        declared = protocols.get(spec.protocol)
        declared.clean_options(spec.protocol_options)
    except ProtocolError as exc:
        raise CampaignError(str(exc), field=exc.field or "protocol_options") from None
    if spec.checks.decoys and not declared.judges_machine_spans:
        raise CampaignError(f"decoys, protocol: a decoy is a machine span annotators should reject, but under the "
                            f"{spec.protocol!r} protocol nobody gives verdicts on machine spans; set decoys to 0",
                            field=("decoys", "protocol"))
    if spec.sample is not None and not declared.judges_machine_spans:
        raise CampaignError(f"sample, protocol: a sample draws machine spans for verdicts, but the {spec.protocol!r} "
                            "protocol gives none; leave the sample out", field=("sample", "protocol"))
    if spec.routing is not None and not declared.judges_machine_spans:
        raise CampaignError(f"routing, protocol: the {spec.protocol!r} protocol does not judge machine spans, so "
                            "there is nothing to route", field=("routing", "protocol"))
    if spec.checks.planted and not declared.plants:
        raise CampaignError(f"planted, protocol: a planted error is found by marking it, but under the "
                            f"{spec.protocol!r} protocol annotators mark no errors of their own; set planted to 0",
                            field=("planted", "protocol"))
    if spec.control_arm and not declared.control_arm:
        raise CampaignError(f"control_arm, protocol: the {spec.protocol!r} protocol has no step without the "
                            "machine's spans, so no output can be in a control arm; set control_arm to 0",
                            field=("control_arm", "protocol"))
    if spec.control_arm and not spec.runs:
        raise CampaignError("control_arm, runs: the control arm is the outputs judged before (or without) the "
                            "machine's spans, and without a run no output shows any; choose a run or set "
                            "control_arm to 0", field=("control_arm", "runs"))


def _campaign_row(spec: CampaignSpec, created_by: User | None) -> Campaign:
    """The campaign, its annotators and reviewers, and its runs under shuffled neutral labels."""
    checks = spec.checks
    # The categories experts pick from when they add an error: the researcher's, else the task's defaults.
    label_set = (category_set(list(spec.categories)) if spec.categories
                 else default_categories(spec.dataset.task.slug))
    campaign = Campaign.objects.create(
        name=spec.name, dataset=spec.dataset, aspects=list(spec.aspects), annotators_per_item=spec.annotators_per_item,
        guidelines=spec.guidelines or DEFAULT_GUIDELINES, seed=spec.seed, created_by=created_by,
        # Decoys wait for the researcher's review on the answer-key page, so their campaign opens by hand; so do
        # planted outputs whose errors a model is to write at creation (PLANTED_WRITE_AUTO), which nobody may see first.
        status=(Campaign.Status.DRAFT if checks.decoys or (checks.planted and settings.PLANTED_WRITE_AUTO)
                else Campaign.Status.OPEN),
        categories=label_set, control_arm=spec.control_arm, decoys=checks.decoys, planted=checks.planted,
        vigilance_min=checks.vigilance_min, qualification=checks.as_qualification(),
        exclude_flagged=checks.exclude_flagged, planted_near_duplicates=checks.planted_near_duplicates,
        protocol=spec.protocol,
        protocol_options=protocols.get(spec.protocol).clean_options(spec.protocol_options),
    )
    campaign.annotators.set(spec.annotators)
    campaign.reviewers.set(spec.reviewers)
    shuffled_runs = list(spec.runs)
    random.Random(spec.seed).shuffle(shuffled_runs)
    CampaignRun.objects.bulk_create(
        CampaignRun(campaign=campaign, run=run, label=label)
        for run, label in zip(shuffled_runs, neutral_labels(len(shuffled_runs)), strict=True)
    )
    return campaign


def _items(campaign: Campaign, spec: CampaignSpec) -> tuple[list[int], list[int]]:
    """The real items to judge in dataset order (a sample's outputs when sampled), and the training items."""
    item_ids = spec.item_ids
    if item_ids is None and not spec.runs and not protocols.get(spec.protocol).judges_machine_spans:
        # A protocol in which annotators mark errors themselves needs no run: it rates every output.
        item_ids = list(spec.dataset.items.values_list("pk", flat=True))
    if item_ids is None:
        annotated = Annotation.objects.filter(source__in=list(spec.runs), item__dataset=spec.dataset)
        if spec.aspects:
            annotated = annotated.filter(aspect__in=list(spec.aspects))
        item_ids = list(annotated.values_list("item_id", flat=True).distinct())
    if spec.sample is not None:
        # A sampled campaign judges only the drawn spans, so only the outputs holding one are assigned.
        item_ids = campaign_sample_draw(campaign=campaign, item_ids=list(item_ids), spec=spec.sample)
    elif spec.routing is not None:  # the same, for the spans experts judge: the uncertain ones and the audit
        item_ids = campaign_route_draw(campaign=campaign, item_ids=list(item_ids), spec=spec.routing)
    items = list(
        # Perturbed texts (DHP) are never shown to annotators as items of their own.
        Item.objects.filter(pk__in={*item_ids, *spec.control_item_ids}, dataset=spec.dataset,
                            derived_from__isnull=True)
        .order_by("position")
        .values_list("pk", flat=True)
    )
    training = list(spec.checks.qualification_items)
    return [i for i in items if i not in set(training)], training  # training items are not real work


def _inputs(items: Sequence[int]) -> dict[int, str]:
    """Item -> its input's id (external_id): a comparing protocol deals an input's outputs together."""
    return dict(Item.objects.filter(pk__in=list(items)).values_list("pk", "external_id"))


def _deal(items: Sequence[int], controls: set[int], annotators: Sequence[User],
          per_item: int, inputs: dict[int, str] | None = None) -> dict[int, list[tuple[int, bool]]]:
    """Each registered annotator's (item, is control) queue: control items to everyone, the rest round-robin
    to `per_item` annotators each, so loads stay balanced. With `inputs` (a comparing protocol) the outputs of
    one input go to the same annotators, so they can be shown together."""
    per_annotator: dict[int, list[tuple[int, bool]]] = {a.pk: [] for a in annotators}
    cursor = 0
    dealt: dict[str, int] = {}  # input -> the cursor its first output was dealt at
    for item_id in items if annotators else ():
        if item_id in controls:
            for annotator in annotators:
                per_annotator[annotator.pk].append((item_id, True))
            continue
        segment = (inputs or {}).get(item_id)
        at = dealt.setdefault(segment, cursor) if segment is not None else cursor
        for k in range(min(per_item, len(annotators))):
            per_annotator[annotators[(at + k) % len(annotators)].pk].append((item_id, False))
        if at == cursor:
            cursor += per_item
    return per_annotator


def _arm_per_screen(unprimed: set[tuple[int, int]], inputs: dict[int, str],
                    judges: dict[int, list[int]]) -> set[tuple[int, int]]:
    """The control arm drawn per output and judge, made one per input and judge: an input's outputs take the arm
    drawn for its first output (in item order), so a screen never mixes pre-filled and plain outputs."""
    first: dict[tuple[str, int], int] = {}
    for item_id in sorted(judges):
        for judge in judges[item_id]:
            first.setdefault((inputs[item_id], judge), item_id)
    return {(item_id, judge) for item_id in judges for judge in judges[item_id]
            if (first[(inputs[item_id], judge)], judge) in unprimed}


def _shuffled(queue: list[tuple[int, bool]], inputs: dict[int, str],
              rng: random.Random) -> list[tuple[int, bool]]:
    """The queue in a seeded random order; a comparing protocol's outputs of one input stay next to each other
    (their inputs are shuffled instead), so a screen's outputs are one stretch of the queue."""
    if not inputs:
        rng.shuffle(queue)
        return queue
    groups: dict[object, list[tuple[int, bool]]] = {}
    for entry in queue:
        groups.setdefault(inputs.get(entry[0], ("alone", entry[0])), []).append(entry)
    order = list(groups.values())
    rng.shuffle(order)
    return [entry for group in order for entry in group]


def _control_arm(judges: dict[int, list[int]], runs: Sequence, *, share: float, seed: int) -> set[tuple[int, int]]:
    """The (output, judge) pairs that start unprimed: a judge is a registered annotator's pk, or -k for the k-th
    participant place of the output. Control items (known answers) are never in the arm."""
    if share <= 0:
        return set()
    evaluators: dict[int, list[int]] = {}
    annotated = Annotation.objects.filter(source__in=list(runs), item_id__in=list(judges))
    for item_id, source_id in annotated.values_list("item_id", "source_id").distinct():
        evaluators.setdefault(item_id, []).append(source_id)
    return control_arm_draw({i: js for i, js in judges.items() if js}, evaluators, share=share, seed=seed)
