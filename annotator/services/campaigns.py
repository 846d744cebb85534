"""Create campaigns: neutral evaluator labels, balanced assignments, per-annotator shuffled order."""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.db.models import Q

from accounts.access import AccessError
from accounts.models import Role, User
from annotator.categories import category_set, default_categories
from annotator.crossing import control_arm_draw
from annotator.models import Assignment, Campaign, CampaignRun, ControlVerdict, ExplanationVerdict, SpanVerdict
from annotator.phases import initial_phase
from annotator.services.checks import CheckSettings, Queues, checks_prepare, checks_validate
from annotator.services.participants import LinkSettings, link_create, link_settings_check
from annotator.services.sampling import SampleSpec, campaign_sample_draw
from corpus import cleaning
from corpus.models import Annotation, Dataset, ErrorSpan, Item
from errors import UserError

DEFAULT_GUIDELINES = (Path(__file__).resolve().parent.parent / "guidelines.md").read_text(encoding="utf-8")


def neutral_labels(n: int) -> list[str]:
    letters = string.ascii_uppercase
    return [f"Evaluator {letters[i % 26]}{'' if i < 26 else i // 26}" for i in range(n)]


REVIEWER_ROLES = (Role.RESEARCHER, Role.ADMIN)


class CampaignError(UserError, ValueError):
    """A campaign that cannot be set up as asked; the message names the field."""


MAX_NAME = 200  # Campaign.name
MAX_ASPECT = 200  # Annotation.aspect
MAX_GUIDELINES = 200_000
SEED_MIN, SEED_MAX = 0, 2**31 - 1  # Campaign.seed is a 32-bit integer


def _check_text(field: str, value: str, limit: int, *, required: bool = False) -> None:
    cleaning.check_field(value, field, max_length=limit, required=required, error=CampaignError)


@transaction.atomic
def campaign_create(
    *,
    name: str,
    dataset: Dataset,
    runs: Sequence,
    annotators: Sequence[User],
    aspects: Sequence[str] = (),
    annotators_per_item: int = 1,
    guidelines: str = "",
    seed: int = 0,
    item_ids: Sequence[int] | None = None,
    control_item_ids: Sequence[int] = (),
    created_by: User | None = None,
    categories: Sequence[str] | None = None,
    reviewers: Sequence[User] = (),
    sample: SampleSpec | None = None,
    control_arm: float = 0.0,
    link: LinkSettings | None = None,
    checks: CheckSettings | None = None,
) -> Campaign:
    """Create a campaign and its assignments: open at once, or a draft while it has decoys to review.

    Items default to those the runs annotated. Each item goes to `annotators_per_item` annotators,
    chosen round-robin so loads stay balanced; control items go to every annotator. Run labels are
    shuffled with the seed so "Evaluator A" says nothing about which run it is. A `control_arm` share of
    the outputs starts unprimed for half of their annotators (annotator.crossing).
    With a `link`, the items
    not assigned here form the pool participants draw from as they join (annotator.services.participants);
    such a campaign may start without registered annotators.
    """
    _check_text("name", name, MAX_NAME, required=True)
    for aspect in aspects:
        _check_text("aspects", aspect, MAX_ASPECT, required=True)
    _check_text("guidelines", guidelines, MAX_GUIDELINES)
    if not SEED_MIN <= seed <= SEED_MAX:
        raise CampaignError(f"seed: must be between {SEED_MIN} and {SEED_MAX}")
    if link is not None:
        link_settings_check(link)
    if not annotators and link is None:
        raise CampaignError("a campaign needs at least one annotator (or a participant link)")
    if not 0 <= control_arm <= 1:
        raise CampaignError(f"control_arm: {control_arm} must be a share between 0 and 1")
    if link is None and annotators_per_item > len(annotators):
        raise CampaignError(f"{annotators_per_item} annotators per item, but only {len(annotators)} annotators")
    if any(getattr(run, "dataset_id", dataset.pk) != dataset.pk for run in runs):
        raise CampaignError("every evaluator run of a campaign must be on the campaign's dataset")
    # The roles the campaign form offers: judges are annotators, reviewers are researchers or admins.
    if wrong := sorted(a.username for a in annotators if a.role != Role.ANNOTATOR or not a.is_active):
        raise CampaignError(f"annotators: {', '.join(wrong)} cannot judge: a judge must be an active user with "
                            "the role 'annotator'")
    if wrong := sorted(r.username for r in reviewers if r.role not in REVIEWER_ROLES or not r.is_active):
        raise CampaignError(f"reviewers: {', '.join(wrong)} cannot review: a reviewer must be an active researcher "
                            "or admin")
    if judging := sorted({r.username for r in reviewers} & {a.username for a in annotators}):
        # Reviewers read every judge's name and verdicts; a judge of the same campaign must not.
        raise CampaignError(f"reviewers: {', '.join(judging)} also judge this campaign; a reviewer cannot be a judge")
    checks = checks or CheckSettings()
    checks_validate(checks, dataset.pk)
    rng = random.Random(seed)
    # The categories experts pick from when they add an error: the researcher's, else the task's defaults.
    label_set = category_set(list(categories)) if categories else default_categories(dataset.task.slug)
    campaign = Campaign.objects.create(
        name=name, dataset=dataset, aspects=list(aspects), annotators_per_item=annotators_per_item,
        guidelines=guidelines or DEFAULT_GUIDELINES, seed=seed, created_by=created_by,
        # Decoys wait for the researcher's review on the answer-key page, so their campaign opens by hand.
        status=Campaign.Status.DRAFT if checks.decoys else Campaign.Status.OPEN,
        categories=label_set, control_arm=control_arm, decoys=checks.decoys, planted=checks.planted,
        vigilance_min=checks.vigilance_min, qualification=checks.as_qualification(),
        exclude_flagged=checks.exclude_flagged,
    )
    campaign.annotators.set(annotators)
    shuffled_runs = list(runs)
    rng.shuffle(shuffled_runs)
    CampaignRun.objects.bulk_create(
        CampaignRun(campaign=campaign, run=run, label=label)
        for run, label in zip(shuffled_runs, neutral_labels(len(shuffled_runs)), strict=True)
    )
    if item_ids is None:
        annotated = Annotation.objects.filter(source__in=list(runs), item__dataset=dataset)
        if aspects:
            annotated = annotated.filter(aspect__in=list(aspects))
        item_ids = list(annotated.values_list("item_id", flat=True).distinct())
    campaign.reviewers.set(reviewers)
    if sample is not None:
        # A sampled campaign judges only the drawn spans, so only the outputs holding one are assigned.
        item_ids = campaign_sample_draw(campaign=campaign, item_ids=list(item_ids), spec=sample)
    items = list(
        # Perturbed texts (DHP) are never shown to annotators as items of their own.
        Item.objects.filter(pk__in={*item_ids, *control_item_ids}, dataset=dataset, derived_from__isnull=True)
        .order_by("position")
        .values_list("pk", flat=True)
    )
    training = list(checks.qualification_items)
    items = [i for i in items if i not in set(training)]  # training items are not real work
    controls = set(control_item_ids)
    per_annotator: dict[int, list[tuple[int, bool]]] = {a.pk: [] for a in annotators}
    cursor = 0
    if link is not None:
        # Registered annotators (if any) get their items as usual; the link's pool is every non-control item.
        link_create(campaign=campaign, spec=link, item_ids=[i for i in items if i not in controls])
    for item_id in items if annotators else ():
        if item_id in controls:
            for annotator in annotators:
                per_annotator[annotator.pk].append((item_id, True))
            continue
        for k in range(min(annotators_per_item, len(annotators))):
            annotator = annotators[(cursor + k) % len(annotators)]
            per_annotator[annotator.pk].append((item_id, False))
        cursor += annotators_per_item
    unprimed = _control_arm(per_annotator, runs, share=control_arm, seed=seed)
    queues = Queues(real={pk: list(queue) for pk, queue in per_annotator.items()})
    checks_prepare(campaign=campaign, queues=queues, rng=random.Random(f"{seed}:checks"))
    rows = []
    for annotator_pk, queue in per_annotator.items():
        # Planted copies join the shuffle as ordinary work; training items come first, in the order given.
        queue += [(item_id, False) for item_id in queues.planted.get(annotator_pk, [])]
        random.Random(f"{seed}:{annotator_pk}").shuffle(queue)
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
    return campaign


def _control_arm(per_annotator: dict[int, list[tuple[int, bool]]], runs: Sequence, *, share: float,
                 seed: int) -> set[tuple[int, int]]:
    """The (item, annotator) pairs that start unprimed; control items (known answers) never do."""
    if share <= 0:
        return set()
    outputs: dict[int, list[int]] = {}
    for annotator_pk, queue in per_annotator.items():
        for item_id, ctrl in queue:
            if not ctrl:
                outputs.setdefault(item_id, []).append(annotator_pk)
    evaluators: dict[int, list[int]] = {}
    annotated = Annotation.objects.filter(source__in=list(runs), item_id__in=list(outputs))
    for item_id, source_id in annotated.values_list("item_id", "source_id").distinct():
        evaluators.setdefault(item_id, []).append(source_id)
    return control_arm_draw(outputs, evaluators, share=share, seed=seed)


@dataclass(frozen=True)
class ControlKey:
    """The known verdicts of one span on a control item."""

    span_id: int
    span_verdict: str
    explanation_verdict: str = ""
    note: str = ""


@transaction.atomic
def campaign_control_set(*, campaign: Campaign, keys: Sequence[ControlKey]) -> int:
    """Store (or replace) the known verdicts of spans on the campaign's control items; return how many.

    A key for a span that is not on a control item of this campaign, or with an unknown verdict, is refused."""
    # Qualification items carry a key the same way: shown to the annotator once each training item is done.
    control_items = set(Assignment.objects.filter(Q(is_control=True) | Q(is_training=True), campaign=campaign)
                        .values_list("item_id", flat=True))
    spans = dict(ErrorSpan.objects.filter(pk__in=[k.span_id for k in keys]).values_list("pk", "annotation__item_id"))
    for key in keys:
        if spans.get(key.span_id) not in control_items:
            raise CampaignError(f"span {key.span_id} is not on a control item of campaign {campaign.name!r}")
        if key.span_verdict not in SpanVerdict.values:
            raise CampaignError(f"span {key.span_id}: unknown span verdict {key.span_verdict!r}")
        if key.explanation_verdict and key.explanation_verdict not in ExplanationVerdict.values:
            raise CampaignError(f"span {key.span_id}: unknown explanation verdict {key.explanation_verdict!r}")
        _check_text("note", key.note, MAX_GUIDELINES)
    for key in keys:
        ControlVerdict.objects.update_or_create(
            campaign=campaign, span_id=key.span_id,
            defaults={"span_verdict": key.span_verdict, "explanation_verdict": key.explanation_verdict,
                      "note": key.note},
        )
    return len(keys)


@transaction.atomic
def campaign_set_labeling(*, dataset: Dataset, campaign: Campaign | None) -> Campaign | None:
    """Make `campaign` the dataset's labeling campaign (None: the dataset has none): the campaign whose
    judges and reviewers give a dataset export's consensus when the export names no campaign."""
    if campaign is not None and campaign.dataset_id != dataset.pk:
        raise CampaignError(f"campaign_id: campaign {campaign.name!r} is not on dataset {dataset.name!r}")
    Campaign.objects.select_for_update().filter(dataset=dataset, is_labeling=True).update(is_labeling=False)
    if campaign is not None:
        Campaign.objects.filter(pk=campaign.pk).update(is_labeling=True)
        campaign.is_labeling = True
    return campaign


def campaign_open(*, campaign: Campaign, user: User) -> Campaign:
    """Open a draft campaign to its annotators once a researcher has reviewed its decoys."""
    if not user.sees_everything:
        raise AccessError.forbidden("Only researchers and admins open a campaign.")
    opened = Campaign.objects.filter(pk=campaign.pk, status=Campaign.Status.DRAFT).update(status=Campaign.Status.OPEN)
    if not opened:
        campaign.refresh_from_db(fields=["status"])
        raise AccessError.conflict(f"This campaign is {campaign.get_status_display().lower()}, not a draft; "
                                   "only a draft can be opened.")
    campaign.status = Campaign.Status.OPEN
    return campaign


@transaction.atomic
def campaigns_delete(campaigns: Sequence[Campaign]) -> list[str]:
    """Delete `campaigns` with what only they use, and return their names. The cascade from a campaign takes its
    assignments, judgments and check spans, but a planted output is an item of its own in the dataset (hidden
    from every real figure), which the cascade would leave behind: it goes first."""
    pks = [c.pk for c in campaigns]
    names = list(Campaign.objects.filter(pk__in=pks).order_by("created_at", "pk").values_list("name", flat=True))
    Item.objects.filter(planted__campaign_id__in=pks).delete()
    Campaign.objects.filter(pk__in=pks).delete()
    return names
