"""The researcher's item browser: a dataset's items (filters, span counts per source) and one item with every
annotation source side by side."""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotator.rendering import render_inputs
from annotator.selectors.browse import dataset_items, dataset_sources, dataset_systems, item_annotations, span_counts
from annotator.views.common import AppRequest, require_researcher
from corpus import cleaning
from corpus.models import Dataset, Item

YES_NO = (("", "any"), ("yes", "yes"), ("no", "no"))


@require_GET
def dataset_detail(request: AppRequest, pk: int) -> HttpResponse:
    require_researcher(request)
    dataset = get_object_or_404(Dataset.objects.select_related("task"), pk=pk)
    filters = {name: request.GET.get(name, "") for name in ("system", "has_gold", "has_runs")}
    page = Paginator(dataset_items(dataset, **filters), 50).get_page(request.GET.get("page"))
    columns = dataset_sources(dataset)
    counts = span_counts(item.pk for item in page)
    rows = [(item, [counts.get(item.pk, {}).get(c.id) for c in columns]) for item in page]
    query = urlencode({k: v for k, v in filters.items() if v})
    return render(request, "annotator/dataset_detail.html", {
        "dataset": dataset, "page": page, "rows": rows, "columns": columns, "filters": filters,
        "systems": dataset_systems(dataset), "yes_no": YES_NO, "query": query,
    })


@require_GET
def item_detail(request: AppRequest, pk: int, item_pk: int) -> HttpResponse:
    """One item: its inputs, its output, and the chosen annotations (each run's answer, gold, imports and
    experts by default) side by side, each with its spans and their explanations."""
    require_researcher(request)
    item = get_object_or_404(Item.objects.select_related("dataset"), pk=item_pk, dataset_id=pk)
    views = item_annotations(item)
    chosen = {pk for pk in map(cleaning.as_id, request.GET.getlist("show")) if pk is not None}
    shown = [v for v in views if v.annotation.pk in chosen] if chosen else [v for v in views if v.is_answer]
    return render(request, "annotator/item_detail.html", {
        "item": item, "dataset": item.dataset, "inputs": render_inputs(item.inputs), "views": views,
        "shown": shown, "shown_ids": {v.annotation.pk for v in shown},
        "output_header": item.dataset.output_header or "Output",
    })
