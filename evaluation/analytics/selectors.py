"""Aggregation queries behind the analytics, and the reports they feed (numbers only, no presentation)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from django.db import connections
from django.db.models import Avg, Count, F, Q, QuerySet
from django.db.models.fields.json import KeyTransform
from scipy import sparse

from annotator.models import (
    Annotation,
    AnnotationKind,
    Assignment,
    Campaign,
    CampaignRun,
    Dataset,
    ErrorSpan,
    SpanJudgment,
    User,
)
from evaluation.engine import stats
from evaluation.engine.stats import (
    EXPLANATION_VERDICTS,
    FLAGS,
    PRF,
    SPAN_VERDICTS,
    AccuracyMatrix,
    Correlation,
    Interval,
    SeverityCalibration,
)
from evaluation.models import EvaluatorRun

RUN = "span__annotation__run_id"
ITEM = "span__annotation__item_id"
# Which of a run's annotations is its answer: the merged ensemble one first, a lone model's last.
FINAL_KIND_PRIORITY: tuple[str, ...] = (
    AnnotationKind.ENSEMBLE, AnnotationKind.SUPERVISOR, AnnotationKind.ANNOTATOR, AnnotationKind.HUMAN,
    AnnotationKind.GOLD,
)
DEFAULT_RESAMPLES = 1000


@dataclass(frozen=True)
class Scope:
    """Which judgments count: of one campaign and/or dataset, optionally one aspect, system or run."""

    campaign_id: int | None = None
    dataset_id: int | None = None
    aspect: str = ""
    system: str = ""
    run_id: int | None = None


@dataclass(frozen=True)
class RunInfo:
    run_id: int
    label: str
    evaluator: str
    aspect: str
    dataset_id: int
    neutral_label: str = ""


def _span_q(scope: Scope, prefix: str) -> Q:
    """Conditions on a machine span reached through `prefix` ("span__" from a judgment, "" from a span)."""
    q = Q()
    if scope.dataset_id is not None:
        q &= Q(**{f"{prefix}annotation__item__dataset_id": scope.dataset_id})
    if scope.aspect:
        q &= Q(**{f"{prefix}annotation__run__aspect__name": scope.aspect})
    if scope.system:
        q &= Q(**{f"{prefix}annotation__item__system": scope.system})
    if scope.run_id is not None:
        q &= Q(**{f"{prefix}annotation__run_id": scope.run_id})
    return q


def judgments_in_scope(scope: Scope, *, complete: bool = True) -> QuerySet[SpanJudgment]:
    """Judgments of machine spans in scope; `complete` keeps those with both verdicts given."""
    qs = SpanJudgment.objects.filter(_span_q(scope, "span__"))
    if scope.campaign_id is not None:
        qs = qs.filter(assignment__campaign_id=scope.campaign_id)
    if complete:
        qs = qs.filter(span_verdict__in=SPAN_VERDICTS, explanation_verdict__in=EXPLANATION_VERDICTS)
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
        runs = EvaluatorRun.objects.select_related("evaluator", "aspect").order_by("label")
        if scope.dataset_id is not None:
            runs = runs.filter(dataset_id=scope.dataset_id)
        pairs = [(run, "") for run in runs]
    return [
        RunInfo(
            run_id=run.pk, label=run.label, evaluator=run.evaluator.name, aspect=run.aspect.name,
            dataset_id=run.dataset_id, neutral_label=neutral,
        )
        for run, neutral in pairs
        if not scope.aspect or run.aspect.name == scope.aspect
        if scope.run_id is None or run.pk == scope.run_id
    ]


def annotator_names(user_ids: Iterable[int]) -> dict[int, str]:
    return dict(User.objects.filter(pk__in=set(user_ids)).values_list("pk", "username"))


# --------------------------------------------------------------------------------------------- accuracy


@dataclass
class AccuracyGroup:
    """Table 4 for one group of judgments (an evaluator, an evaluator and annotator, an annotator, or all)."""

    matrix: AccuracyMatrix = field(default_factory=AccuracyMatrix)
    flags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FLAGS, 0))
    n_items: int = 0
    span_ok_ci: Interval | None = None
    exp_correct_ci: Interval | None = None

    def flag_rates(self) -> dict[str, float | None]:
        return {name: stats.ratio(n, self.matrix.total) for name, n in self.flags.items()}


@dataclass
class AccuracyReport:
    by_run: dict[int | None, AccuracyGroup]
    by_run_annotator: dict[tuple[int | None, int], AccuracyGroup]
    by_annotator: dict[int, AccuracyGroup]
    pooled: AccuracyGroup
    incomplete: int
    annotators: dict[int, str]


# Per-(run, annotator, item) columns: the 24 (explanation, span) verdict cells, the five flags, incomplete.
_CELLS: tuple[tuple[str, str], ...] = tuple((e, v) for e in EXPLANATION_VERDICTS for v in SPAN_VERDICTS)
_RATIOS = {"span_ok": (1, 0), "exp_correct": (2, 0)}
_COMPLETE = Q(span_verdict__in=SPAN_VERDICTS, explanation_verdict__in=EXPLANATION_VERDICTS)


def _vector_aggregates() -> dict[str, Count]:
    columns = {
        f"c_{e}__{v}": Count("id", filter=Q(explanation_verdict=e, span_verdict=v)) for e, v in _CELLS
    }
    columns |= {name: Count("id", filter=_COMPLETE & Q(**{name: True})) for name in FLAGS}
    columns["incomplete"] = Count("id", filter=~_COMPLETE)
    return columns


def accuracy_report(scope: Scope, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> AccuracyReport:
    """Return Table 4 per evaluator run, per run and annotator, per annotator and pooled, with 95% CIs.

    One GROUP BY (run, annotator, item) query counts every verdict pair, flag and incomplete judgment;
    the matrices are sums of its rows and the bootstrap resamples its items (spans of one output hang
    together), once for all groups: every interval reflects the items of the whole scope being redrawn.
    """
    aggregates = _vector_aggregates()
    rows = _raw_rows(
        judgments_in_scope(scope, complete=False)
        .values(RUN, "annotator_id", ITEM)
        .annotate(**aggregates)
        .order_by(RUN, "annotator_id", ITEM)
    )
    table = np.array(rows, dtype=float).reshape(-1, 3 + len(aggregates))
    n_cells = len(_CELLS)
    incomplete = int(table[:, -1].sum())
    table = table[table[:, 3 : 3 + n_cells].sum(axis=1) > 0]
    run_col = np.nan_to_num(table[:, 0], nan=-1).astype(np.int64)  # spans of no run group together
    annotator_col = table[:, 1].astype(np.int64)

    def run_key(value: int) -> int | None:
        return None if value == -1 else int(value)

    pooled = AccuracyGroup()
    keys: list[tuple[str, object]] = [("pooled", None)]
    members: list[np.ndarray] = [np.ones(len(table), dtype=bool)]
    for run_id in np.unique(run_col):
        keys.append(("run", run_key(run_id)))
        members.append(run_col == run_id)
    for annotator_id in np.unique(annotator_col):
        keys.append(("annotator", int(annotator_id)))
        members.append(annotator_col == annotator_id)
    for run_id, annotator_id in sorted(set(zip(run_col.tolist(), annotator_col.tolist(), strict=True))):
        keys.append(("pair", (run_key(run_id), annotator_id)))
        members.append((run_col == run_id) & (annotator_col == annotator_id))

    items, item_index = np.unique(table[:, 2], return_inverse=True)
    values = table[:, 3:-1]
    # every group's per-item sums in one sparse product: entry ((item, group), row) = 1 when the row
    # belongs to the group
    item_index = item_index.ravel()
    targets = np.concatenate([item_index[chosen] * len(keys) + g for g, chosen in enumerate(members)])
    sources = np.concatenate([np.flatnonzero(chosen) for chosen in members])
    gather = sparse.csr_matrix(
        (np.ones(targets.size), (targets, sources)), shape=(items.size * len(keys), len(table))
    )
    dense = np.asarray(gather @ values).reshape(items.size, len(keys), values.shape[1])
    cells = dense[:, :, :n_cells].reshape(items.size, len(keys), len(EXPLANATION_VERDICTS), len(SPAN_VERDICTS))
    judged = cells.sum(axis=(2, 3))
    ok = cells[:, :, :, SPAN_VERDICTS.index("error")].sum(axis=2)
    correct = cells[:, :, EXPLANATION_VERDICTS.index("correct"), :].sum(axis=2)
    cis = stats.bootstrap_ratio_cis_grouped(
        np.stack((judged, ok, correct), axis=2), _RATIOS, n_resamples=n_resamples, seed=seed
    )
    totals = cells.sum(axis=0)
    flag_totals = dense[:, :, n_cells:].sum(axis=0)

    by_run: dict[int | None, AccuracyGroup] = {}
    by_pair: dict[tuple[int | None, int], AccuracyGroup] = {}
    by_annotator: dict[int, AccuracyGroup] = {}
    for g, (kind, key) in enumerate(keys):
        group = pooled if kind == "pooled" else AccuracyGroup()
        for i, e in enumerate(EXPLANATION_VERDICTS):
            for j, v in enumerate(SPAN_VERDICTS):
                group.matrix.counts[e][v] = int(totals[g, i, j])
        group.flags = {name: int(flag_totals[g, k]) for k, name in enumerate(FLAGS)}
        group.n_items = int(np.count_nonzero(judged[:, g]))
        group.span_ok_ci, group.exp_correct_ci = cis[g]["span_ok"], cis[g]["exp_correct"]
        if kind == "run":
            by_run[key] = group  # type: ignore[index]
        elif kind == "annotator":
            by_annotator[key] = group  # type: ignore[index]
        elif kind == "pair":
            by_pair[key] = group  # type: ignore[index]
    return AccuracyReport(
        by_run=by_run, by_run_annotator=by_pair, by_annotator=by_annotator, pooled=pooled,
        incomplete=incomplete, annotators=annotator_names(by_annotator),
    )


# --------------------------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class AlphaSummary:
    n_units: int
    alpha_span: float | None
    alpha_explanation: float | None
    observed_span: float | None
    observed_explanation: float | None


@dataclass(frozen=True)
class PairAgreement:
    annotator_a: int
    annotator_b: int
    n: int
    span_agree: int
    explanation_agree: int

    @property
    def span_share(self) -> float | None:
        return stats.ratio(self.span_agree, self.n)

    @property
    def explanation_share(self) -> float | None:
        return stats.ratio(self.explanation_agree, self.n)


@dataclass
class AgreementReport:
    pooled: AlphaSummary
    by_run: dict[int | None, AlphaSummary]
    pairs: list[PairAgreement]
    annotators: dict[int, str]


def _alpha_summary(table: np.ndarray) -> AlphaSummary:
    span_counts, exp_counts = table[:, : len(SPAN_VERDICTS)], table[:, len(SPAN_VERDICTS) :]
    return AlphaSummary(
        n_units=int(table.shape[0]),
        alpha_span=stats.krippendorff_alpha_nominal(span_counts),
        alpha_explanation=stats.krippendorff_alpha_nominal(exp_counts),
        observed_span=stats.observed_agreement(span_counts),
        observed_explanation=stats.observed_agreement(exp_counts),
    )


def agreement_report(scope: Scope) -> AgreementReport:
    """Return Krippendorff's alpha (nominal) and pairwise agreement over spans judged by >= 2 annotators.

    A unit is one machine span; its value counts (how many annotators chose each verdict) come from one
    GROUP BY span query, the per-annotator-pair counts from one self-join of judgments on the span.
    """
    per_span = _raw_rows(
        judgments_in_scope(scope)
        .values(RUN, "span_id")
        .annotate(
            k=Count("id"),
            **{f"s_{v}": Count("id", filter=Q(span_verdict=v)) for v in SPAN_VERDICTS},
            **{f"e_{v}": Count("id", filter=Q(explanation_verdict=v)) for v in EXPLANATION_VERDICTS},
        )
        .filter(k__gte=2)
        .order_by("span_id")
    )
    width = 3 + len(SPAN_VERDICTS) + len(EXPLANATION_VERDICTS)
    # columns: run, span, k, span-verdict counts, explanation-verdict counts; keep run + counts
    table = np.array(per_span, dtype=float).reshape(-1, width)
    table = np.concatenate((table[:, :1], table[:, 3:]), axis=1)
    run_col = np.nan_to_num(table[:, 0], nan=-1)
    by_run = {
        (None if run_id == -1 else int(run_id)): _alpha_summary(table[run_col == run_id, 1:])
        for run_id in np.unique(run_col)
    }

    other = "span__judgments__"
    pair_filter = Q(
        **{
            f"{other}annotator_id__gt": F("annotator_id"),
            f"{other}span_verdict__in": SPAN_VERDICTS,
            f"{other}explanation_verdict__in": EXPLANATION_VERDICTS,
        }
    )
    if scope.campaign_id is not None:
        pair_filter &= Q(**{f"{other}assignment__campaign_id": scope.campaign_id})
    pair_rows = (
        judgments_in_scope(scope)
        .filter(pair_filter)
        .values("annotator_id", other_annotator=F(f"{other}annotator_id"))
        .annotate(
            n=Count("id"),
            span_agree=Count("id", filter=Q(span_verdict=F(f"{other}span_verdict"))),
            exp_agree=Count("id", filter=Q(explanation_verdict=F(f"{other}explanation_verdict"))),
        )
        .order_by("annotator_id", "other_annotator")
    )
    pairs = [
        PairAgreement(r["annotator_id"], r["other_annotator"], r["n"], r["span_agree"], r["exp_agree"])
        for r in pair_rows
    ]
    names = annotator_names([p.annotator_a for p in pairs] + [p.annotator_b for p in pairs])
    return AgreementReport(pooled=_alpha_summary(table[:, 1:]), by_run=by_run, pairs=pairs, annotators=names)


# --------------------------------------------------------------------------------------------- calibration


def calibration_report(scope: Scope) -> tuple[dict[int | None, SeverityCalibration], SeverityCalibration]:
    """Return machine vs human-corrected severity per run and pooled (judgments with a corrected severity)."""
    rows = list(
        judgments_in_scope(scope)
        .filter(corrected_severity__isnull=False, span__severity__isnull=False)
        .values_list(RUN, "span__severity", "corrected_severity")
        .annotate(n=Count("id"))
        .order_by()
    )
    cells: dict[int | None, list[tuple[int, int, int]]] = defaultdict(list)
    for run_id, machine, human, n in rows:
        cells[run_id].append((machine, human, n))
    per_run = {run_id: stats.severity_calibration(c) for run_id, c in cells.items()}
    return per_run, stats.severity_calibration((m, h, n) for _, m, h, n in rows)


# --------------------------------------------------------------------------------------------- runs' answers


def final_kinds(run_ids: Sequence[int]) -> dict[int, str]:
    """Return the kind of each run's final annotations: the merged ensemble one, else a single model's."""
    present: dict[int, set[str]] = defaultdict(set)
    pairs = Annotation.objects.filter(run_id__in=run_ids).values_list("run_id", "kind").order_by().distinct()
    for run_id, kind in pairs:
        present[run_id].add(kind)
    return {
        run_id: next(k for k in FINAL_KIND_PRIORITY if k in kinds)
        for run_id, kinds in present.items()
        if any(k in kinds for k in FINAL_KIND_PRIORITY)
    }


def _final_q(kinds: dict[int, str], prefix: str = "") -> Q:
    q = Q(pk__in=[])
    for run_id, kind in kinds.items():
        q |= Q(**{f"{prefix}run_id": run_id, f"{prefix}kind": kind})
    return q


# --------------------------------------------------------------------------------------------- overlap


@dataclass(frozen=True)
class Reference:
    """Reference spans: imported gold ones, or those the humans of a campaign marked.

    `human` takes the spans annotators added (kind "human" in the campaign); with `include_confirmed`
    also the machine spans a strict majority of their judges called an Error, so that a machine is not
    charged a false positive for an error the humans confirmed instead of re-marking it. Only items with
    a finished assignment count, since only there is the human reference complete.
    """

    kind: Literal["gold", "human"] = "gold"
    source: str = ""
    campaign_id: int | None = None
    include_confirmed: bool = True


@dataclass(frozen=True)
class OverlapRow:
    run_id: int
    n_items: int
    exact: PRF
    overlap: PRF
    chars: PRF
    unlocated: int


def _reference_spans(reference: Reference, scope: Scope) -> tuple[set[tuple[int, str]], dict, Q]:
    """Return the (item, aspect) pairs under the reference, their spans, and the condition on items in scope."""
    items = Q()
    if scope.dataset_id is not None:
        items &= Q(item__dataset_id=scope.dataset_id)
    if scope.system:
        items &= Q(item__system=scope.system)
    spans: dict[tuple[int, str], list[tuple[int, int] | None]] = defaultdict(list)
    if reference.kind == "gold":
        annotations = Annotation.objects.filter(items, kind=AnnotationKind.GOLD)
        if reference.source:
            annotations = annotations.filter(source=reference.source)
        if scope.campaign_id is not None:
            in_campaign = Assignment.objects.filter(campaign_id=scope.campaign_id).values("item_id")
            annotations = annotations.filter(item_id__in=in_campaign)
        keys = set(annotations.values_list("item_id", "aspect").order_by())
        rows = ErrorSpan.objects.filter(annotation__in=annotations).values_list(
            "annotation__item_id", "annotation__aspect", "start", "end"
        )
    else:
        campaign_id = reference.campaign_id or scope.campaign_id
        if campaign_id is None:
            raise ValueError("a human reference needs a campaign")
        aspects = Campaign.objects.filter(pk=campaign_id).values_list("aspects", flat=True).first() or []
        done = Assignment.objects.filter(items, campaign_id=campaign_id, status=Assignment.Status.DONE)
        done_items = set(done.values_list("item_id", flat=True))
        run_aspects = set(
            CampaignRun.objects.filter(campaign_id=campaign_id).values_list("run__aspect__name", flat=True)
        )
        keys = {(i, a) for i in done_items for a in ((set(aspects) | run_aspects) or {""})}
        added = ErrorSpan.objects.filter(
            annotation__kind=AnnotationKind.HUMAN, annotation__campaign_id=campaign_id,
            annotation__item_id__in=done.values("item_id"),
        ).values_list("annotation__item_id", "annotation__aspect", "start", "end")
        rows = list(added)
        if reference.include_confirmed:
            in_campaign = Q(judgments__assignment__campaign_id=campaign_id)
            confirmed = (
                ErrorSpan.objects.filter(start__isnull=False, annotation__item_id__in=done.values("item_id"))
                .annotate(
                    judges=Count("judgments", filter=in_campaign & Q(judgments__span_verdict__in=SPAN_VERDICTS)),
                    errors=Count("judgments", filter=in_campaign & Q(judgments__span_verdict="error")),
                )
                .filter(judges__lt=F("errors") * 2)
                .values_list("annotation__item_id", "annotation__run__aspect__name", "start", "end")
            )
            rows += list(confirmed)
    seen: set[tuple[int, str, int, int]] = set()
    for item_id, aspect, start, end in rows:
        if start is None:
            spans[(item_id, aspect)].append(None)
            continue
        # the same error marked twice (two gold sources, two annotators, a confirmed machine span) is one error
        if (item_id, aspect, start, end) not in seen:
            seen.add((item_id, aspect, start, end))
            spans[(item_id, aspect)].append((start, end))
    return keys, spans, items


def overlap_report(*, runs: Sequence[RunInfo], reference: Reference, scope: Scope) -> list[OverlapRow]:
    """Return each run's span-level (exact, any-overlap; one-to-one) and character-level P/R/F1.

    An item counts for a run when the reference covers it (for the run's aspect or for any aspect) and
    the run gave it a final annotation, with or without spans; spans without offsets are predictions
    that match nothing.
    """
    keys, ref_spans, items = _reference_spans(reference, scope)
    ref_items = {i for i, _ in keys}
    kinds = final_kinds([r.run_id for r in runs])
    answered: dict[int, set[int]] = defaultdict(set)
    predicted: dict[tuple[int, int], list[tuple[int, int] | None]] = defaultdict(list)
    if kinds and ref_items:
        final = Annotation.objects.filter(_final_q(kinds), items)
        for run_id, item_id in final.values_list("run_id", "item_id").order_by().distinct():
            if item_id in ref_items:
                answered[run_id].add(item_id)
        for run_id, item_id, start, end in ErrorSpan.objects.filter(annotation__in=final).values_list(
            "annotation__run_id", "annotation__item_id", "start", "end"
        ):
            if item_id in ref_items:
                predicted[(run_id, item_id)].append(None if start is None else (start, end))
    out = []
    for run in runs:
        pred_rows: list[tuple[int, int, int]] = []
        ref_rows: list[tuple[int, int, int]] = []
        n_items = 0
        for item_id in sorted(answered.get(run.run_id, ())):
            if (item_id, run.aspect) not in keys and (item_id, "") not in keys:
                continue
            n_items += 1
            for span in predicted.get((run.run_id, item_id), ()):
                pred_rows.append((item_id, *span) if span is not None else (item_id, -1, -1))
            for span in ref_spans.get((item_id, run.aspect), []) + ref_spans.get((item_id, ""), []):
                ref_rows.append((item_id, *span) if span is not None else (item_id, -1, -1))
        counts = stats.overlap_prf_arrays(np.array(pred_rows, dtype=np.int64), np.array(ref_rows, dtype=np.int64))
        out.append(
            OverlapRow(
                run_id=run.run_id, n_items=n_items, exact=counts.exact, overlap=counts.overlap,
                chars=counts.chars, unlocated=sum(1 for row in pred_rows if row[1] < 0),
            )
        )
    return out


def reference_choices(scope: Scope) -> list[tuple[str, str]]:
    """Return the references available in scope as (value, label): gold sources, and the campaign's humans."""
    choices = []
    gold = Annotation.objects.filter(kind=AnnotationKind.GOLD)
    if scope.dataset_id is not None:
        gold = gold.filter(item__dataset_id=scope.dataset_id)
    for source in gold.values_list("source", flat=True).distinct().order_by("source"):
        choices.append((f"gold:{source}", f"gold ({source})"))
    if scope.campaign_id is not None:
        choices.append(("human", "humans of this campaign (added + confirmed)"))
        choices.append(("human-added", "spans humans added only"))
    return choices


def parse_reference(value: str, scope: Scope) -> Reference | None:
    """Turn a reference choice ("gold:SOURCE", "gold", "human", "human-added") into a Reference."""
    if value.startswith("gold"):
        return Reference(kind="gold", source=value.partition(":")[2])
    if value in ("human", "human-added") and scope.campaign_id is not None:
        return Reference(kind="human", campaign_id=scope.campaign_id, include_confirmed=value == "human")
    return None


# --------------------------------------------------------------------------------------------- scores


@dataclass(frozen=True)
class ScoreRow:
    run_id: int
    human_key: str
    kind: str
    correlation: Correlation
    pairs: tuple[tuple[float, float], ...] = ()


def _human_key(dataset: Dataset, aspect: str) -> str:
    for key in dataset.score_aspects or []:
        if key == aspect:
            return key
    for key in dataset.score_aspects or []:
        if key.lower() == aspect.lower():
            return key
    return aspect


def score_report(*, runs: Sequence[RunInfo], scope: Scope) -> list[ScoreRow]:
    """Return each run's correlation with the dataset's human scores for the run's aspect.

    The machine score of an item is the mean score of the run's final annotations of it (one, unless a
    run holds several models of the same kind); items without a numeric human score are left out.
    """
    kinds = final_kinds([r.run_id for r in runs])
    datasets = Dataset.objects.in_bulk({r.dataset_id for r in runs})
    out = []
    for run in runs:
        if run.run_id not in kinds:
            out.append(ScoreRow(run.run_id, run.aspect, "", stats.Correlation(n=0)))
            continue
        key = _human_key(datasets[run.dataset_id], run.aspect)
        qs = Annotation.objects.filter(run_id=run.run_id, kind=kinds[run.run_id], score__isnull=False)
        if scope.system:
            qs = qs.filter(item__system=scope.system)
        if scope.campaign_id is not None:
            qs = qs.filter(item__in=Assignment.objects.filter(campaign_id=scope.campaign_id).values("item_id"))
        rows = (
            qs.values("item_id")
            .annotate(machine=Avg("score"), human=KeyTransform(key, "item__human_scores"))
            .order_by("item_id")
            .values_list("machine", "human")
        )
        pairs = tuple(
            (float(m), float(h)) for m, h in rows if isinstance(h, int | float) and not isinstance(h, bool)
        )
        corr = stats.correlations([p[0] for p in pairs], [p[1] for p in pairs])
        out.append(ScoreRow(run.run_id, key, kinds[run.run_id], corr, pairs))
    return out


# --------------------------------------------------------------------------------------------- dashboards


@dataclass
class DashboardData:
    """Every number of a campaign or dataset dashboard, computed once."""

    scope: Scope
    runs: list[RunInfo]
    accuracy: AccuracyReport
    agreement: AgreementReport
    calibration: dict[int | None, SeverityCalibration]
    calibration_pooled: SeverityCalibration
    overlap: list[OverlapRow]
    reference: Reference | None
    scores: list[ScoreRow]
    references: list[tuple[str, str]] = field(default_factory=list)
    reference_value: str = ""


def dashboard_data(
    scope: Scope, *, reference: str = "", n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> DashboardData:
    """Compute a dashboard's numbers: a campaign's when scope names one, else a dataset's."""
    runs = runs_in_scope(scope)
    references = reference_choices(scope)
    if not reference and references:
        reference = references[0][0]
    ref = parse_reference(reference, scope) if reference else None
    per_run, pooled = calibration_report(scope)
    return DashboardData(
        scope=scope, runs=runs,
        accuracy=accuracy_report(scope, n_resamples=n_resamples, seed=seed),
        agreement=agreement_report(scope),
        calibration=per_run, calibration_pooled=pooled,
        overlap=overlap_report(runs=runs, reference=ref, scope=scope) if ref else [],
        reference=ref, scores=score_report(runs=runs, scope=scope),
        references=references, reference_value=reference if ref else "",
    )
