"""The analytics' scope: which judgments, runs and answers a report covers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connections
from django.db.models import Q, QuerySet

from accounts.models import User
from annotator.models import Assignment, CampaignRun, SpanJudgment
from corpus.models import Annotation, SourceKind
from evaluation.answers import answer_annotation_ids, answer_kind
from evaluation.selectors import own_runs
from quality.selectors.vigilance import excluded_annotator_ids
from stats.accuracy import EXPLANATION_ROWS, SPAN_COLUMNS

RUN = "span__annotation__source_id"  # a run is its annotations' source
ITEM = "span__annotation__item_id"
DEFAULT_RESAMPLES = 1000


@dataclass(frozen=True)
class Scope:
    """Which judgments count: of one campaign and/or dataset, optionally one aspect, system or run.

    `exclude_flagged` decides whether the campaign's flagged annotators count: None follows the campaign's
    setting, True leaves them out, False keeps them (the choice of one page, API call or report)."""

    campaign_id: int | None = None
    dataset_id: int | None = None
    aspect: str = ""
    system: str = ""
    run_id: int | None = None
    exclude_flagged: bool | None = None


@dataclass(frozen=True)
class RunInfo:
    run_id: int
    label: str
    evaluator: str
    aspect: str
    dataset_id: int
    neutral_label: str = ""
    simulated: bool = False  # answered by the simulator: every row naming it says so


def _span_q(scope: Scope, prefix: str) -> Q:
    """Conditions on a machine span reached through `prefix` ("span__" from a judgment, "" from a span)."""
    q = Q(**{f"{prefix}annotation__item__derived_from__isnull": True})  # DHP perturbations are not items here
    if scope.dataset_id is not None:
        q &= Q(**{f"{prefix}annotation__item__dataset_id": scope.dataset_id})
    if scope.aspect:
        q &= Q(**{f"{prefix}annotation__source__run__aspect__name": scope.aspect})
    if scope.system:
        q &= Q(**{f"{prefix}annotation__item__system": scope.system})
    if scope.run_id is not None:
        q &= Q(**{f"{prefix}annotation__source_id": scope.run_id})
    return q


def judgments_in_scope(scope: Scope, *, complete: bool = True) -> QuerySet[SpanJudgment]:
    """Judgments of machine spans in scope; `complete` keeps those with both verdicts given.

    Known answers never count (decoys are a check source's spans, planted outputs are derived items, training
    items are not work), and flagged annotators' verdicts are left out when the scope excludes them. Work a
    study-link participant abandoned (their item went back to the pool unfinished) is kept but not counted: it
    counts once they finish the item."""
    qs = SpanJudgment.objects.filter(_span_q(scope, "span__")).exclude(
        span__annotation__source__kind=SourceKind.CHECK).exclude(assignment__is_training=True).exclude(
        Q(assignment__handout__released_at__isnull=False) & ~Q(assignment__status=Assignment.Status.DONE)
    )
    if scope.campaign_id is not None:
        qs = qs.filter(assignment__campaign_id=scope.campaign_id)
        if excluded := excluded_annotator_ids(scope.campaign_id, exclude_flagged=scope.exclude_flagged):
            qs = qs.exclude(annotator_id__in=excluded)
    if complete:
        qs = qs.filter(span_verdict__in=SPAN_COLUMNS, explanation_verdict__in=EXPLANATION_ROWS)
    return qs.order_by()


def _raw_rows(qs: QuerySet) -> list[tuple]:
    """Run a values().annotate() query and return its rows as the database sent them.

    The columns come in SQL order: the values() fields, then the annotations in the order given. Plain
    cursor rows skip the ORM's per-value converters, which cost more than the query itself on wide
    aggregates of tens of thousands of groups.
    """
    sql, params = qs.query.sql_with_params()
    with connections[qs.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def runs_in_scope(scope: Scope) -> list[RunInfo]:
    """The evaluator runs a dashboard reports on: a campaign's runs (with their neutral labels) or a dataset's."""
    if scope.campaign_id is not None:
        links = CampaignRun.objects.filter(campaign_id=scope.campaign_id).select_related(
            "run__evaluator", "run__aspect"
        )
        pairs = [(link.run, link.label) for link in links.order_by("label")]
    else:
        runs = own_runs().select_related("evaluator", "aspect").order_by("label")
        if scope.dataset_id is not None:
            runs = runs.filter(dataset_id=scope.dataset_id)
        pairs = [(run, "") for run in runs]
    return [
        RunInfo(
            run_id=run.pk, label=run.label, evaluator=run.evaluator.name, aspect=run.aspect.name,
            dataset_id=run.dataset_id, neutral_label=neutral, simulated=run.simulated,
        )
        for run, neutral in pairs
        if not scope.aspect or run.aspect.name == scope.aspect
        if scope.run_id is None or run.pk == scope.run_id
    ]


def annotator_names(user_ids: Iterable[int]) -> dict[int, str]:
    return dict(User.objects.filter(pk__in=set(user_ids)).values_list("pk", "username"))



# --------------------------------------------------------------------------------------------- runs' answers


def final_kinds(run_ids: Sequence[int]) -> dict[int, str]:
    """Return the kind of each run's final annotations: the merged ensemble one, else a single model's."""
    present: dict[int, set[str]] = defaultdict(set)
    pairs = Annotation.objects.filter(source_id__in=run_ids).values_list("source_id", "kind").order_by().distinct()
    for run_id, kind in pairs:
        present[run_id].add(kind)
    chosen = {run_id: answer_kind(kinds) for run_id, kinds in present.items()}
    return {run_id: kind for run_id, kind in chosen.items() if kind is not None}


def _final_q(kinds: dict[int, str], prefix: str = "") -> Q:
    """The answer annotations of these runs, decided per run, item and aspect (evaluation.answers), as the
    judging screen decides them."""
    ids = answer_annotation_ids(source_ids=list(kinds))
    return Q(**{f"{prefix}pk__in" if prefix else "pk__in": sorted(ids)})


