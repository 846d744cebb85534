"""MQM ratings as stored: the sources `PREFIX:RATER` of a dataset and their annotations read back as TSV ratings."""

from __future__ import annotations

from collections import defaultdict

from corpus.formats import FormatError
from corpus.interop.mqm import MqmError, MqmRating, rating_sort_key
from corpus.interop.mqm_sxs import SxsFile, SxsRating, SxsRow
from corpus.models import Annotation, Dataset, ErrorSpan, Item, Source, Unit
from corpus.protocols.mqm import note_open_end, severity_of_code, source_text

SXS_ROWS = "mqm_sxs_rows"  # Annotation.extra's key for a side-by-side rating's rows as the file had them


class NoMqmSources(FormatError):
    """No source of the dataset is labelled PREFIX:*; the message lists the dataset's sources."""


def mqm_sources(dataset: Dataset, prefix: str) -> dict[int, str]:
    """source pk -> rater, for the sources labelled `PREFIX:RATER` with annotations in `dataset`."""
    head = f"{prefix}:"
    found = dict(Source.objects.filter(label__startswith=head, annotations__item__dataset=dataset)
                 .distinct().values_list("pk", "label"))
    if not found:
        names = sorted(set(Source.objects.filter(annotations__item__dataset=dataset).values_list("label", flat=True)))
        listed = ", ".join(repr(n) for n in names[:30]) or "none yet"
        raise NoMqmSources("source", f"dataset {dataset.name!r} has no source labelled {head}* (its sources: "
                                     f"{listed})")
    return {pk: label[len(head):] for pk, label in found.items()}


ITEM_FIELDS = ("pk", "system", "external_id", "position", "output", "inputs", "extra")
NO_SYSTEM = "(no system)"  # the TSV needs a system in every row; an item without one is written under this name


def _place(item: dict) -> tuple[str, str, str]:
    """(doc, doc_id, seg_id) of an item: what the TSV gave, else the dataset and the item's place in it."""
    mqm = (item["extra"] or {}).get("mqm") or {}
    return (str(mqm.get("doc", "")) or "doc", str(mqm.get("doc_id", item["position"])),
            str(mqm.get("seg_id", item["external_id"])))


def item_rating(item: dict, *, rater: str, errors: list[MqmError], comment: str = "") -> MqmRating:
    """One rater's rating of an item (a row of `Item.objects.values(*ITEM_FIELDS)`): the item's place in its
    document, its source and its translation as the TSV writes them."""
    doc, doc_id, seg_id = _place(item)
    source = source_text(item["inputs"])
    return MqmRating(system=item["system"] or NO_SYSTEM, doc=doc, doc_id=doc_id, seg_id=seg_id, rater=rater,
                     source=source, target=item["output"], errors=errors, comment=comment)


def mqm_ratings(dataset: Dataset, raters: dict[int, str]) -> list[MqmRating]:
    """The ratings of the sources `raters` (source pk -> rater) in `dataset`, sorted by system, doc_id, seg_id
    and rater (the TSV export's order)."""
    return [rating for _, rating in _ratings(dataset, raters)]


def _ratings(dataset: Dataset, raters: dict[int, str]) -> list[tuple[int, MqmRating]]:
    """(annotation pk, rating) of the sources `raters`, in the TSV export's order."""
    annotations = list(Annotation.objects.filter(item__dataset=dataset, source_id__in=list(raters))
                       .values_list("pk", "item_id", "source_id", "score_explanation"))
    items = {row["pk"]: row for row in Item.objects.filter(pk__in={a[1] for a in annotations})
             .values(*ITEM_FIELDS)}
    spans: dict[int, list[MqmError]] = defaultdict(list)
    rows = (ErrorSpan.objects.filter(annotation_id__in=[a[0] for a in annotations])
            .order_by("annotation_id", "position", "pk")
            .values_list("annotation_id", "start", "end", "source_start", "source_end", "category", "severity",
                         "explanation", "note"))
    for annotation_id, start, end, source_start, source_end, category, severity, explanation, note in rows:
        side = "source" if source_start is not None else "target"
        if side == "source":
            start, end = source_start, source_end
        spans[annotation_id].append(MqmError(category=category, severity=severity_of_code(severity), start=start,
                                             end=end, side=side, comment=explanation, open_end=note_open_end(note)))
    ratings = [(pk, item_rating(items[item_id], rater=raters[source_id], errors=spans.get(pk, []), comment=comment))
               for pk, item_id, source_id, comment in annotations]
    return sorted(ratings, key=lambda pair: rating_sort_key(pair[1]))


def has_units(dataset: Dataset, raters: dict[int, str]) -> bool:
    """Whether the sources `raters` rated outputs side by side in `dataset` (their ratings have units)."""
    return Unit.objects.filter(dataset=dataset, source_id__in=list(raters)).exists()


def sxs_file(dataset: Dataset, raters: dict[int, str]) -> SxsFile:
    """The side-by-side ratings of the sources `raters` (source pk -> rater) with their screens and rows as the
    file had them; NoMqmSources when some of their ratings were not imported side by side (a mix cannot be
    written in one layout, nor compared as pairs)."""
    extra = dict(Annotation.objects.filter(item__dataset=dataset, source_id__in=list(raters))
                 .values_list("pk", "extra"))
    placed = {pk: (number, position) for pk, number, position in
              Annotation.objects.filter(item__dataset=dataset, source_id__in=list(raters), unit__isnull=False)
              .values_list("pk", "unit__number", "unit_position")}
    header = (Item.objects.filter(dataset=dataset, extra__mqm__has_key="header")
              .values_list("extra__mqm__header", flat=True).first()) or []
    ratings = []
    for pk, rating in _ratings(dataset, raters):
        if not (extra[pk] or {}).get(SXS_ROWS):
            raise NoMqmSources("source", f"dataset {dataset.name!r}: the raters {', '.join(sorted(raters.values()))} "
                                         "mix ratings made side by side with ratings made one output at a time (e.g. "
                                         f"{rating.rater!r} on {rating.system!r}); import each layout under its own "
                                         "prefix (--source)")
        rows = [SxsRow(line=r["line"], kind=r["kind"], metadata=r["metadata"], error=r.get("error"),
                       found=r.get("found"), pad=r.get("pad", "")) for r in (extra[pk] or {}).get(SXS_ROWS, [])]
        number, position = placed.get(pk, (0, None))
        ratings.append(SxsRating(rating, rows, screen=number, position=position))
    return SxsFile(header=list(header), ratings=ratings)
