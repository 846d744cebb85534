"""Create campaigns: neutral evaluator labels, balanced assignments, per-annotator shuffled order."""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.db import IntegrityError, connection, transaction

from accounts.access import AccessError
from accounts.models import Role, User
from annotator.models import Campaign, ControlVerdict, ExplanationVerdict, SpanVerdict
from annotator.selectors.campaigns import campaign_key_items
from corpus import cleaning
from corpus.models import Dataset, ErrorSpan, Item
from errors import Conflict, UserError

DEFAULT_GUIDELINES = (Path(__file__).resolve().parent.parent / "guidelines.md").read_text(encoding="utf-8")


def neutral_labels(n: int) -> list[str]:
    letters = string.ascii_uppercase
    return [f"Evaluator {letters[i % 26]}{'' if i < 26 else i // 26}" for i in range(n)]


REVIEWER_ROLES = (Role.RESEARCHER, Role.ADMIN)


class CampaignError(UserError):
    """A campaign that cannot be set up as asked; the message names the field."""


MAX_NAME = 200  # Campaign.name
MAX_ASPECT = 200  # Annotation.aspect
MAX_GUIDELINES = 200_000
SEED_MIN, SEED_MAX = 0, 2**31 - 1  # Campaign.seed is a 32-bit integer


def campaign_name_check(name: str) -> None:
    """Refuse a name another campaign has, before anything is written (the name's unique constraint stays the
    invariant; `campaign_name_clash` tells when a race reached it)."""
    if Campaign.objects.filter(name=name).exists():
        raise Conflict(f"name: a campaign named {name!r} exists", field="name")


def campaign_name_clash(exc: IntegrityError) -> bool:
    """Whether the database refused a campaign for its name's unique constraint, and not for any other: only
    then is the refusal about the name. PostgreSQL names the violated constraint; SQLite names its columns."""
    table = Campaign._meta.db_table
    diag = getattr(exc.__cause__, "diag", None)
    if diag is not None:
        with connection.cursor() as cursor:
            constraints = connection.introspection.get_constraints(cursor, table)
        names = {name for name, c in constraints.items() if c["unique"] and c["columns"] == ["name"]}
        return diag.table_name == table and diag.constraint_name in names
    return str(exc) == f"UNIQUE constraint failed: {table}.name"


def _check_text(field: str, value: str, limit: int, *, required: bool = False, identifier: bool = False) -> None:
    cleaning.check_field(value, field, max_length=limit, required=required, error=CampaignError,
                         identifier=identifier)


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
    control_items = campaign_key_items(campaign)
    spans = dict(ErrorSpan.objects.filter(pk__in=[k.span_id for k in keys]).values_list("pk", "annotation__item_id"))
    for key in keys:
        if spans.get(key.span_id) not in control_items:
            raise CampaignError(f"span {key.span_id} is not on a control item of campaign {campaign.name!r}",
                                field="span_id")
        if key.span_verdict not in SpanVerdict.values:
            raise CampaignError(f"span {key.span_id}: unknown span verdict {key.span_verdict!r}", field="span_verdict")
        if key.explanation_verdict and key.explanation_verdict not in ExplanationVerdict.values:
            raise CampaignError(f"span {key.span_id}: unknown explanation verdict {key.explanation_verdict!r}",
                                field="explanation_verdict")
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
        raise CampaignError(f"campaign_id: campaign {campaign.name!r} is not on dataset {dataset.name!r}",
                            field="campaign_id")
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
