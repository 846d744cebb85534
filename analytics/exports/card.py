"""The data card that goes with every export: where the annotations came from, how many, how much agreement."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db.models import Count
from django.utils import timezone

from analytics.exports.arms import control_arm_card
from analytics.exports.quality import quality_control
from analytics.selectors import Scope, agreement_report
from annotator.models import Campaign
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset, ErrorSpan, Source, SourceKind
from corpus.services.annotation_export import ExportReport
from evaluation.models import EvaluatorRun, PromptTemplate, RunCall

# formats with no place for a span that has no position in the text
_PLACED_ONLY = {"factgenie", "labelstudio"}


def _template_versions(run: EvaluatorRun) -> dict[str, dict[str, Any]]:
    """Each prompt template a run used: its version when it is a stored template's text, and a digest of the text."""
    versions: dict[str, dict[str, Any]] = {}
    for kind, text in (run.templates or {}).items():
        stored = PromptTemplate.objects.filter(kind=kind, text=text).order_by("-version").first()
        versions[kind] = {
            "version": stored.version if stored else None,
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
        }
    return versions


def _runs(dataset: Dataset, keep: ExportFilter) -> list[dict[str, Any]]:
    runs = EvaluatorRun.objects.filter(dataset=dataset).select_related("evaluator", "aspect").order_by("label")
    if keep.source:
        runs = runs.filter(label=keep.source)
    if keep.campaign_id is not None:
        runs = runs.filter(campaigns=keep.campaign_id)
    out = []
    for run in runs:
        models = (
            RunCall.objects.filter(run=run).values_list("model", "call__model_digest").distinct().order_by("model")
        )
        out.append({
            "label": run.label, "evaluator": run.evaluator.name, "aspect": run.aspect.name, "status": run.status,
            "simulated": run.simulated,
            "models": [{"model": m, "digest": d} for m, d in models], "config": run.config,
            "prompt_templates": _template_versions(run),
            "created_at": run.created_at.isoformat(),
        })
    return out


def _campaigns(dataset: Dataset, keep: ExportFilter) -> list[dict[str, Any]]:
    campaigns = Campaign.objects.filter(dataset=dataset).order_by("pk")
    if keep.campaign_id is not None:
        campaigns = campaigns.filter(pk=keep.campaign_id)
    out = []
    for campaign in campaigns:
        agreement = agreement_report(Scope(campaign_id=campaign.pk)).pooled
        out.append({
            "id": campaign.pk, "name": campaign.name, "status": campaign.status, "aspects": campaign.aspects,
            "annotators_per_item": campaign.annotators_per_item,
            "annotators": sorted(campaign.annotators.values_list("username", flat=True)),
            "runs": sorted(campaign.runs.values_list("label", flat=True)),
            "control_arm": control_arm_card(campaign),  # design and priming estimates; None without an arm
            "agreement": {
                "units": agreement.n_units, "alpha_span": agreement.alpha_span,
                "alpha_explanation": agreement.alpha_explanation, "observed_span": agreement.observed_span,
                "observed_explanation": agreement.observed_explanation,
            },
        })
    return out


def _sources(dataset: Dataset, keep: ExportFilter) -> list[dict[str, Any]]:
    sources = Source.objects.filter(
        kind__in=[SourceKind.EXTERNAL, SourceKind.IMPORT], annotations__item__dataset=dataset
    ).distinct().order_by("kind", "label")
    if keep.source:
        sources = sources.filter(label=keep.source)
    return [
        {"label": s.label, "kind": s.kind, "tool": s.tool, "producer": s.producer, "file": s.file_name}
        for s in sources
    ]


def _unwritten(spans: Any, fmt: str) -> dict[str, int]:
    """Per source, the spans the format could not write (no position in the text)."""
    if fmt not in _PLACED_ONLY:
        return {}
    rows = spans.filter(start__isnull=True).values_list("annotation__source__label").annotate(n=Count("id"))
    return dict(rows.order_by("annotation__source__label"))


def _quality(keep: ExportFilter) -> dict[str, Any] | None:
    campaign = Campaign.objects.filter(pk=keep.campaign_id).first() if keep.campaign_id is not None else None
    return quality_control(campaign) if campaign is not None else None


def data_card(dataset: Dataset, keep: ExportFilter, *, fmt: str, report: ExportReport | None = None) -> dict[str, Any]:
    """Provenance (runs with models, digests and template versions; campaigns and their settings; imported
    sources and their files), counts, agreement of the exported selection, and what the format could not
    hold (spans without a position, per source)."""
    items = keep.items(dataset)
    annotations = keep.annotations().filter(item__in=items)
    spans = ErrorSpan.objects.filter(annotation__in=annotations)
    unwritten = _unwritten(spans, fmt)
    judgments = keep.judgments().filter(span__in=spans)
    filters = {k: v for k, v in vars(keep).items() if v not in ("", None)}
    runs = _runs(dataset, keep)
    return {
        "dataset": dataset.name, "task": dataset.task.slug, "source_file": dataset.source_file,
        "format": fmt, "filters": filters, "exported_at": timezone.now().isoformat(),
        "counts": {
            "items": items.count(),
            "annotations": annotations.count(),
            "spans": spans.count(),
            "judgments": judgments.count(),
            "annotations_by_kind": dict(annotations.values_list("kind").annotate(n=Count("id")).order_by("kind")),
            "judgments_by_annotator": dict(
                judgments.values_list("annotator__username").annotate(n=Count("id")).order_by("annotator__username")
            ),
        },
        "runs": runs,
        # Runs the simulated server answered: their models and digests are the simulator's, no model was called.
        "simulated_runs": [r["label"] for r in runs if r["simulated"]],
        "campaigns": _campaigns(dataset, keep),
        "quality_control": _quality(keep),
        "imported_sources": _sources(dataset, keep),
        "not_written": {
            "spans_without_position": unwritten,
            "note": "factgenie and Label Studio place every span in the text; a span without a position has no "
                    "place there and is left out (JSONL, CSV and Parquet keep it)." if unwritten else "",
        },
        "labelstudio_users": dict(report.labelstudio_users) if report is not None else {},
        "human_scores": dataset.score_aspects,
        "notes": "Offsets are character offsets into the output (end exclusive). Agreement: Krippendorff's alpha "
                 "(nominal) over spans judged by two or more annotators in the campaign.",
    }

