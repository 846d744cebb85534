"""The labeled set of a campaign: one record per judged output with its final error spans, and its data card.

Each machine span and each added error carries its consensus label (corpus.consensus.consensus_label):
`errors` holds the spans whose final span verdict is `error` (confirmed machine spans and kept added
errors), `rejected` the machine spans (and added errors) the experts turned down, `unresolved` those left
without a final span verdict (a tie nobody adjudicated, or a span nobody judged). A routed campaign's spans
resolved without an expert are in `errors` with the ensemble's verdict and method `auto` (the card gives the
audited accuracy of that label). Every machine span says who decided its label (`decided_by`: expert or
model), the probability the design gave it of reaching an expert and its design weight (1 / probability for the
spans shown to experts, 0 for those the model decided; 1 and 1 in a campaign that judges every span).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from django.http import HttpResponse
from django.utils import timezone

from analytics.exports.arms import campaign_arms, control_arm_card
from analytics.exports.quality import quality_control
from analytics.formatting import SIMULATED_MARK
from analytics.report.sections import protocol_sections
from analytics.selectors import Scope, agreement_report
from analytics.selectors.exclusion import exclusion_for
from analytics.selectors.routing import routing_card
from annotator.models import AdjudicationEvent, Assignment, Campaign
from annotator.selectors.review import (
    ADDED,
    MACHINE,
    CampaignVotes,
    campaign_machine_spans,
    campaign_votes,
    review_queue,
)
from annotator.selectors.routing import auto_resolved_by_item, inclusion_probabilities
from corpus import consensus, protocols
from corpus.downloads import whole_download
from corpus.models import ErrorSpan, Item
from quality.selectors.vigilance import excluded_annotator_ids
from stats.ppi import EXPERT, MODEL

LABELED_FORMATS = ("jsonl", "parquet")
REJECTED = "rejected"
KEPT = "errors"
OPEN = "unresolved"


class LabeledSpan(TypedDict):
    origin: str  # "machine" or "added"
    evaluator: str | None  # the run's label (machine spans)
    aspect: str
    start: int | None
    end: int | None
    text: str
    category: str
    severity: int | None
    explanation: str
    span_verdict: str | None
    explanation_verdict: str | None
    method: str
    agreement: float | None
    judges: int
    found_by: list[str]  # added errors: the judges who marked it
    arm: str  # "primed", "unprimed" or "revealed" (analytics.exports.arms)
    found_unprimed: bool | None  # machine spans on a control-arm output: an unprimed mark overlaps it
    decided_by: str  # "expert" (shown to experts, or added by one) or "model" (resolved without an expert)
    inclusion_probability: float | None  # machine spans: the design's probability of reaching an expert
    weight: float | None  # machine spans: the design weight in the estimates, 1 / probability (0 when unjudged)


class LabeledRecord(TypedDict):
    campaign: str
    dataset: str
    item_id: str
    system: str
    inputs: dict[str, str]
    outputs: dict[str, str]
    errors: list[LabeledSpan]
    rejected: list[LabeledSpan]
    unresolved: list[LabeledSpan]
    simulated: NotRequired[bool]  # only when true: the campaign judged spans the simulated server proposed


def _bucket(label: consensus.Consensus) -> str:
    if label.span_verdict is None:
        return OPEN
    return KEPT if label.span_verdict == "error" else REJECTED


def _judged_items(campaign: Campaign, votes: CampaignVotes, auto: Collection[int] = ()) -> list[Item]:
    """The campaign's outputs that at least one judge judged or added an error to, or that hold a span resolved
    without an expert (`auto`), in dataset order."""
    judged = set(ErrorSpan.objects.filter(pk__in=list(votes.machine)).values_list("annotation__item_id", flat=True))
    judged |= {g.item_id for g in votes.added} | set(auto)
    assigned = Assignment.objects.filter(campaign=campaign).values("item_id")
    return list(Item.objects.filter(pk__in=judged).filter(pk__in=assigned).order_by("position"))


def _excluded(campaign: Campaign, exclude_flagged: bool | None) -> list[int]:
    return excluded_annotator_ids(campaign.pk, exclude_flagged=exclude_flagged)


def labeled_records(
    campaign: Campaign, votes: CampaignVotes | None = None, *, exclude_flagged: bool | None = None
) -> Iterator[LabeledRecord]:
    """Yield one record per judged output of the campaign (module docstring); flagged annotators are left out
    as `exclude_flagged` says (None: the campaign's setting)."""
    votes = votes or campaign_votes(campaign, excluded=_excluded(campaign, exclude_flagged))
    arms = campaign_arms(campaign)
    dataset = campaign.dataset
    added_by_item: dict[int, list] = {}
    for group in votes.added:
        added_by_item.setdefault(group.item_id, []).append(group)
    simulated = campaign.runs.filter(simulated=True).exists()
    auto = auto_resolved_by_item(campaign)
    chances = inclusion_probabilities(campaign) or {}
    for item in _judged_items(campaign, votes, auto):
        buckets: dict[str, list[LabeledSpan]] = {KEPT: [], REJECTED: [], OPEN: []}
        for span, run_label in campaign_machine_spans(campaign, item):
            label = votes.machine_consensus(span.pk)
            buckets[_bucket(label)].append(LabeledSpan(
                origin=MACHINE, evaluator=run_label, aspect=span.annotation.aspect, start=span.start, end=span.end,
                text=span.text, category=span.category, severity=span.severity, explanation=span.explanation,
                span_verdict=label.span_verdict, explanation_verdict=label.explanation_verdict, method=label.method,
                agreement=label.agreement, judges=label.judges, found_by=[], arm=arms.machine_arm(item.pk),
                found_unprimed=arms.found_unprimed(span, item.pk), decided_by=EXPERT,
                inclusion_probability=chances.get(span.pk, 1.0), weight=1 / chances.get(span.pk, 1.0),
            ))
        for span, run_label, verdict in auto.get(item.pk, []):
            buckets[KEPT if verdict == "error" else REJECTED].append(LabeledSpan(
                origin=MACHINE, evaluator=run_label, aspect=span.annotation.aspect, start=span.start, end=span.end,
                text=span.text, category=span.category, severity=span.severity, explanation=span.explanation,
                span_verdict=verdict, explanation_verdict=None, method=consensus.AUTO, agreement=None, judges=0,
                found_by=[], arm=arms.machine_arm(item.pk), found_unprimed=arms.found_unprimed(span, item.pk),
                decided_by=MODEL, inclusion_probability=chances.get(span.pk), weight=0.0,
            ))
        for group in added_by_item.get(item.pk, []):
            label = votes.added_consensus(group)
            key = next(s for s in group.spans if s.pk == group.key)
            buckets[_bucket(label)].append(LabeledSpan(
                origin=ADDED, evaluator=None, aspect=key.annotation.aspect, start=key.start, end=key.end,
                text=key.text, category=key.category, severity=key.severity, explanation=key.explanation,
                span_verdict=label.span_verdict, explanation_verdict=None, method=label.method,
                agreement=label.agreement, judges=len(group.judges), found_by=group.finders,
                arm=arms.added_arm(key), found_unprimed=None, decided_by=EXPERT, inclusion_probability=None,
                weight=None,
            ))
        for spans in buckets.values():
            spans.sort(key=lambda s: (s["start"] if s["start"] is not None else 1 << 30, s["origin"], s["text"]))
        record = LabeledRecord(
            campaign=campaign.name, dataset=dataset.name, item_id=item.external_id, system=item.system,
            inputs={h: item.inputs[h] for h in [*dataset.input_headers, *item.inputs] if h in item.inputs},
            outputs={dataset.output_header: item.output}, errors=buckets[KEPT], rejected=buckets[REJECTED],
            unresolved=buckets[OPEN],
        )
        if simulated:
            record["simulated"] = True
        yield record


def labeled_jsonl(campaign: Campaign, *, exclude_flagged: bool | None = None) -> Iterator[str]:
    for record in labeled_records(campaign, exclude_flagged=exclude_flagged):
        yield json.dumps(record, ensure_ascii=False) + "\n"


def _parquet_schema():
    import pyarrow as pa

    span = pa.struct([
        ("origin", pa.string()), ("evaluator", pa.string()), ("aspect", pa.string()), ("start", pa.int64()),
        ("end", pa.int64()), ("text", pa.string()), ("category", pa.string()), ("severity", pa.int64()),
        ("explanation", pa.string()), ("span_verdict", pa.string()), ("explanation_verdict", pa.string()),
        ("method", pa.string()), ("agreement", pa.float64()), ("judges", pa.int64()),
        ("found_by", pa.list_(pa.string())), ("arm", pa.string()), ("found_unprimed", pa.bool_()),
        ("decided_by", pa.string()), ("inclusion_probability", pa.float64()), ("weight", pa.float64()),
    ])
    return pa.schema([
        ("campaign", pa.string()), ("dataset", pa.string()), ("item_id", pa.string()), ("system", pa.string()),
        ("inputs", pa.map_(pa.string(), pa.string())), ("outputs", pa.map_(pa.string(), pa.string())),
        ("errors", pa.list_(span)), ("rejected", pa.list_(span)), ("unresolved", pa.list_(span)),
    ])


def write_labeled(campaign: Campaign, fmt: str, path: Path, *, exclude_flagged: bool | None = None) -> Path:
    """Write the labeled set to `path` as JSONL or Parquet (the same records; maps for inputs and outputs)."""
    if fmt not in LABELED_FORMATS:
        raise ValueError(f"unknown labeled-set format {fmt!r} (formats: {', '.join(LABELED_FORMATS)})")
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as handle:
            handle.writelines(labeled_jsonl(campaign, exclude_flagged=exclude_flagged))
        return path
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for record in labeled_records(campaign, exclude_flagged=exclude_flagged):
        row: dict[str, Any] = dict(record)
        row["inputs"] = list(record["inputs"].items())
        row["outputs"] = list(record["outputs"].items())
        rows.append(row)
    pq.write_table(pa.Table.from_pylist(rows, schema=_parquet_schema()), path)
    return path


CONSENSUS_RULE = (
    "Final label per span and field: the reviewer's decision, else the value more than half of the judges "
    "who set the field gave (strict majority), else none (method 'unresolved'; ties are never broken). "
    "Added errors: each judge of the output votes 'error' if they marked an overlapping error, 'not_error' if "
    "not. 'agreement' is the share of votes for the most common value, the smaller of the two fields, "
    "measured on the judges' votes before adjudication."
)


def labeled_card(campaign: Campaign, *, fmt: str, exclude_flagged: bool | None = None) -> dict[str, Any]:
    """The data card of a labeled set: campaign, guidelines version, judges, counts, agreement before
    adjudication, adjudication counts, what was left unresolved, and the quality checks. A campaign that judged
    a simulated run's spans says so at the top (`simulated`, `warning`)."""
    excluded = _excluded(campaign, exclude_flagged)
    votes = campaign_votes(campaign, excluded=excluded)
    records = list(labeled_records(campaign, votes))
    queue = review_queue(campaign, votes)
    spans = [(r["item_id"], bucket, s) for r in records for bucket in (KEPT, REJECTED, OPEN) for s in r[bucket]]
    methods = Counter(s["method"] for _, _, s in spans)
    agreements = [s["agreement"] for _, _, s in spans if s["agreement"] is not None]
    alpha = agreement_report(Scope(campaign_id=campaign.pk, exclude_flagged=exclude_flagged)).pooled
    simulated = sorted(campaign.runs.filter(simulated=True).values_list("label", flat=True))
    declared = protocols.get(campaign.protocol)
    card = {
        "kind": "labeled set", "format": fmt, "exported_at": timezone.now().isoformat(),
        "simulated": bool(simulated),
        "warning": (f"SIMULATED: {', '.join(f'{label} {SIMULATED_MARK}' for label in simulated)} answered by the "
                    "simulated server, not by a model: its spans and figures are no result.") if simulated else "",
        "campaign": {"id": campaign.pk, "name": campaign.name, "status": campaign.status,
                     "aspects": campaign.aspects, "runs": sorted(campaign.runs.values_list("label", flat=True)),
                     "sampled": campaign.is_sampled,
                     "simulated_runs": simulated},
        "dataset": campaign.dataset.name,
        "guidelines": {"sha256": hashlib.sha256(campaign.guidelines.encode()).hexdigest(),
                       "characters": len(campaign.guidelines)},
        "judges": sorted(campaign.annotators.values_list("username", flat=True)),
        # Empty: the campaign named nobody, so every researcher and admin could adjudicate.
        "reviewers": sorted(campaign.reviewers.values_list("username", flat=True)),
        "counts": {
            "records": len(records),
            "machine_spans": sum(1 for _, _, s in spans if s["origin"] == MACHINE),
            "added_errors": sum(1 for _, _, s in spans if s["origin"] == ADDED),
            "errors": sum(1 for _, b, _ in spans if b == KEPT),
            "rejected": sum(1 for _, b, _ in spans if b == REJECTED),
            "unresolved": sum(1 for _, b, _ in spans if b == OPEN),
            "by_method": {m: methods.get(m, 0) for m in consensus.METHODS},
        },
        "agreement_before_adjudication": {
            "mean_span_agreement": round(sum(agreements) / len(agreements), 4) if agreements else None,
            "alpha_span": alpha.alpha_span, "alpha_explanation": alpha.alpha_explanation,
            "observed_span": alpha.observed_span, "observed_explanation": alpha.observed_explanation,
        },
        "adjudication": {
            "disagreements": len(queue), "decided": sum(e.is_decided for e in queue),
            "open": sum(not e.is_decided for e in queue),
            "changes": AdjudicationEvent.objects.filter(adjudication__campaign=campaign, undone=False).count(),
        },
        "left_unresolved": [{"item_id": item_id, "origin": s["origin"], "text": s["text"], "method": s["method"]}
                            for item_id, b, s in spans if b == OPEN],
        "consensus_rule": CONSENSUS_RULE,
        "control_arm": control_arm_card(campaign, exclude_flagged=exclude_flagged),
        "routing": routing_card(campaign, exclude_flagged=exclude_flagged),
        "quality_control": quality_control(campaign, excluded=excluded),
        "notes": "Offsets are character offsets into the output (end exclusive). An added error is given by "
                 "the earliest of the overlapping errors the judges added; its explanation is that judge's note.",
    }
    card["campaign"]["protocol"] = declared.name
    if not declared.judges_machine_spans:
        # Nobody gave a verdict on a machine span: no count, agreement or consensus of verdicts stands for one,
        # and the protocol's own figures (the analytics page's and the report's) say what was measured.
        for key in ("machine_spans", "rejected"):
            del card["counts"][key]
        card["agreement_before_adjudication"] = {"mean_span_agreement": card["agreement_before_adjudication"][
            "mean_span_agreement"]}
        exclusion = exclusion_for(campaign, exclude_flagged)
        card["figures"] = {table.key: table.rows for _, section in protocol_sections(campaign, exclusion)
                           for table in section.tables}
    return card


def labeled_response(campaign: Campaign, fmt: str, *, exclude_flagged: bool | None = None) -> HttpResponse:
    """The labeled set as a download, made whole before its first byte (corpus.downloads)."""
    name = f"labeled-{campaign.pk}.{fmt}"
    if fmt == "jsonl":
        return whole_download(labeled_jsonl(campaign, exclude_flagged=exclude_flagged), filename=name,
                              content_type="application/x-ndjson; charset=utf-8")
    if fmt == "parquet":
        with tempfile.TemporaryDirectory() as folder:
            data = write_labeled(campaign, fmt, Path(folder) / name, exclude_flagged=exclude_flagged).read_bytes()
        response = HttpResponse(data, content_type="application/vnd.apache.parquet")
    else:
        return HttpResponse(f"format: {fmt!r} is not one of {', '.join(LABELED_FORMATS)}", status=400,
                            content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
