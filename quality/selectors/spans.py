"""Reads of a campaign's quality checks that cross relations: the stretches every source marks on outputs."""

from __future__ import annotations

from collections.abc import Sequence

from corpus.models import ErrorSpan


def spans_taken(item_ids: Sequence[int]) -> dict[int, list[tuple[int, int]]]:
    """Every source's spans with offsets on these outputs (runs, gold, imports, experts, checks): the stretches a
    decoy or a planted error must stay clear of."""
    taken: dict[int, list[tuple[int, int]]] = {i: [] for i in item_ids}
    rows = ErrorSpan.objects.filter(annotation__item_id__in=list(item_ids), start__isnull=False)
    for item_id, start, end in rows.values_list("annotation__item_id", "start", "end"):
        taken[item_id].append((start, end))
    return taken
