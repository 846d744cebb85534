"""Read side of adjudication: every judge's votes in a campaign, the review queue, and each span's consensus.

A machine span is in the queue when two or more judges set a field to different values; an added error
(overlapping errors the experts added, grouped as on the item screen) when some but not all of the output's
judges marked it; either also when a reviewer overrode judges who agreed (an audited override), so no
decision made on an agreement is off the screen. Reviewers see the judges' names and comments here; experts
never reach this module's pages (annotator.access.campaign_for_reviewer).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from annotator import checks
from annotator.models import Adjudication, Assignment, Campaign, SpanJudgment
from annotator.rendering import SpanRef, group_spans
from annotator.selectors.campaigns import campaign_run_labels
from annotator.selectors.spans import judged_spans
from corpus.consensus import Consensus, Offsets, Vote, added_error_votes, consensus_label, is_disagreement
from corpus.models import AnnotationKind, ErrorSpan, Item, SourceKind
from corpus.protocols import opennlgauge as protocol

MACHINE = "machine"
ADDED = "added"


@dataclass
class JudgeVerdict:
    """One judge's say on a span: verdicts, flags and comment (machine) or the error they added (added)."""

    judge: str
    span_verdict: str
    explanation_verdict: str = ""
    flags: list[str] = field(default_factory=list)
    comment: str = ""
    added: ErrorSpan | None = None  # the judge's own added error (added errors only)
    occurrence: Offsets | None = None  # the judge's pick of an ambiguous span's place (machine spans only)

    def vote(self) -> Vote:
        return Vote(self.span_verdict, self.explanation_verdict, self.occurrence)


@dataclass
class AddedGroup:
    """Overlapping errors that judges added to one output: who found it, and who judged the output."""

    item_id: int
    spans: list[ErrorSpan]
    finders: list[str]
    judges: list[str]

    @property
    def key(self) -> int:
        """The span the group's decision is stored on: its earliest added span."""
        return min(s.pk for s in self.spans)


@dataclass
class CampaignVotes:
    machine: dict[int, list[JudgeVerdict]]
    added: list[AddedGroup]
    decisions: dict[int, Adjudication]

    def machine_consensus(self, span_id: int) -> Consensus:
        votes = [v.vote() for v in self.machine.get(span_id, [])]
        return consensus_label(votes, _decision_vote(self.decisions.get(span_id)))

    def added_consensus(self, group: AddedGroup) -> Consensus:
        votes = added_error_votes(len(group.finders), len(group.judges))
        return consensus_label(votes, _decision_vote(self.decisions.get(group.key)))

    def consensus_by_span(self) -> dict[int, Consensus]:
        """Every judged span's consensus: machine spans by id, and each added span by its group's."""
        result = {span_id: self.machine_consensus(span_id) for span_id in self.machine}
        for group in self.added:
            label = self.added_consensus(group)
            result.update((s.pk, label) for s in group.spans)
        return result


def _decision_vote(decision: Adjudication | None) -> Vote | None:
    if decision is None or not decision.is_decided():
        return None
    return Vote(decision.span_verdict or None, decision.explanation_verdict or None, decision.decided_place())


def campaign_votes(campaign: Campaign, *, machine_spans: bool = True,
                   item_ids: Collection[int] | None = None, excluded: Collection[int] | None = None) -> CampaignVotes:
    """Collect every judgment, added error and decision of the campaign (a handful of queries); without
    `machine_spans`, only the added errors and their decisions (what an export that streams judgments needs);
    with `item_ids`, only those outputs' (what re-rendering one card needs).

    Known answers never vote (decoys, planted outputs, training items); the annotators in `excluded` (by
    default the flagged ones when the campaign excludes them) neither vote nor count as judges."""
    machine: dict[int, list[JudgeVerdict]] = defaultdict(list)
    excluded = checks.installed().excluded_annotator_ids(campaign.pk) if excluded is None else list(excluded)
    judgments = SpanJudgment.objects.filter(assignment__campaign=campaign, assignment__is_training=False).exclude(
        span__annotation__source__kind=SourceKind.CHECK).exclude(annotator_id__in=excluded)
    assignments = Assignment.objects.filter(campaign=campaign, is_training=False,
                                            item__derived_from__isnull=True).exclude(annotator_id__in=excluded)
    spans = ErrorSpan.objects.filter(annotation__kind=AnnotationKind.HUMAN,
                                     annotation__source__added__campaign=campaign,
                                     annotation__item__derived_from__isnull=True).exclude(
        annotation__source__added__annotator_id__in=excluded)
    decided = Adjudication.objects.filter(campaign=campaign)
    if item_ids is not None:
        judgments = judgments.filter(assignment__item_id__in=item_ids)
        assignments = assignments.filter(item_id__in=item_ids)
        spans = spans.filter(annotation__item_id__in=item_ids)
        decided = decided.filter(span__annotation__item_id__in=item_ids)
    if not machine_spans:
        judgments = judgments.none()
    judgments = judgments.select_related("annotator").order_by("span_id", "annotator__username")
    for j in judgments:
        if j.span_verdict or j.explanation_verdict or j.is_picked():
            picked = (j.picked_start, j.picked_end) if j.is_picked() else None
            machine[j.span_id].append(JudgeVerdict(j.annotator.export_name, j.span_verdict, j.explanation_verdict,
                                                   j.flags(), j.comment, occurrence=picked))
    judges_of: dict[int, list[str]] = defaultdict(list)
    for item_id, name, imported in (assignments.order_by("annotator__username")
                                    .values_list("item_id", "annotator__username", "annotator__imported_name")):
        judges_of[item_id].append(imported or name)  # the name exports use (User.export_name)
    added_by_item: dict[int, list[ErrorSpan]] = defaultdict(list)
    for span in spans.select_related("annotation__source__added__annotator").order_by("start", "pk"):
        added_by_item[span.annotation.item_id].append(span)
    groups: list[AddedGroup] = []
    for item_id, item_spans in sorted(added_by_item.items()):
        by_id = {s.pk: s for s in item_spans}
        for ids in added_groups(item_spans):
            members = [by_id[i] for i in ids]
            finders = sorted({s.annotation.source.added.annotator.export_name for s in members})
            groups.append(AddedGroup(item_id, members, finders, judges_of.get(item_id, [])))
    decisions = {a.span_id: a for a in decided.select_related("reviewer")}
    return CampaignVotes(dict(machine), groups, decisions)


def added_groups(spans: list[ErrorSpan]) -> list[list[int]]:
    """The ids of one output's added errors, grouped by the place they mark (text order); errors with no place
    (ESA's missing content) group by their category after them, so that two judges who both say content is
    missing agree on one error."""
    placed = [s for s in spans if s.start is not None and s.end is not None]
    groups = group_spans([SpanRef(s.pk, s.start, s.end) for s in placed])
    unplaced: dict[str, list[int]] = {}
    for span in spans:
        if span.start is None or span.end is None:
            unplaced.setdefault(span.category, []).append(span.pk)
    return groups + list(unplaced.values())


@dataclass
class ReviewEntry:
    """One disagreement in the review queue."""

    kind: str  # MACHINE or ADDED
    span: ErrorSpan  # the machine span, or the added group's key span
    item: Item
    evaluator: str  # the run's label (reviewers may see it), or "added by experts"
    verdicts: list[JudgeVerdict]
    consensus: Consensus
    decision: Adjudication | None

    @property
    def is_decided(self) -> bool:
        return self.decision is not None and self.decision.is_decided()

    @property
    def is_override(self) -> bool:
        """A reviewer overrode judges who agree (the entry is listed for that reason, not a disagreement)."""
        return self.decision is not None and self.decision.override


def review_queue(campaign: Campaign, votes: CampaignVotes | None = None) -> list[ReviewEntry]:
    """The spans the judges disagree on, and those a reviewer overrode, in item order then text order (module
    docstring)."""
    votes = votes or campaign_votes(campaign)
    overridden = {span_id for span_id, d in votes.decisions.items() if d.override}
    disputed = [span_id for span_id, vs in votes.machine.items()
                if span_id in overridden or is_disagreement([v.vote() for v in vs])]
    added = [g for g in votes.added if g.key in overridden or 0 < len(g.finders) < len(g.judges)]
    spans = {s.pk: s for s in ErrorSpan.objects.filter(pk__in=disputed).select_related("annotation")}
    items = {i.pk: i for i in Item.objects.filter(
        pk__in={s.annotation.item_id for s in spans.values()} | {g.item_id for g in added})}
    run_labels = dict(campaign.runs.values_list("pk", "label"))
    entries = [
        ReviewEntry(MACHINE, span, items[span.annotation.item_id], run_labels.get(span.annotation.source_id, "?"),
                    votes.machine[span.pk], votes.machine_consensus(span.pk), votes.decisions.get(span.pk))
        for span in spans.values()
    ]
    for group in added:
        by_judge = {s.annotation.source.added.annotator.export_name: s for s in group.spans}
        verdicts = [JudgeVerdict(name, protocol.SPAN_OK if name in by_judge else protocol.SPAN_NOT_ERROR,
                                 added=by_judge.get(name),
                                 comment=by_judge[name].explanation if name in by_judge else "")
                    for name in group.judges]
        key_span = next(s for s in group.spans if s.pk == group.key)
        entries.append(ReviewEntry(ADDED, key_span, items[group.item_id], "added by experts", verdicts,
                                   votes.added_consensus(group), votes.decisions.get(group.key)))
    entries.sort(key=lambda e: (e.item.position, e.span.start if e.span.start is not None else 1 << 30, e.span.pk))
    return entries


def campaign_machine_spans(campaign: Campaign, item: Item) -> list[tuple[ErrorSpan, str]]:
    """The machine spans the campaign shows on an item, with their real run labels (reviewers' view)."""
    neutral = campaign_run_labels(campaign.pk)
    probe = Assignment(campaign=campaign, item_id=item.pk)
    run_labels = dict(campaign.runs.values_list("pk", "label"))
    return [(span, run_labels.get(span.annotation.source_id, neutral.get(span.annotation.source_id, "?")))
            for span, _ in judged_spans(probe, neutral, with_checks=False)]


def review_entry(campaign: Campaign, span_id: int) -> ReviewEntry | None:
    """One span's entry in the queue, computed from its output's votes alone; None when it is no disagreement."""
    item_id = ErrorSpan.objects.filter(pk=span_id).values_list("annotation__item_id", flat=True).first()
    if item_id is None:
        return None
    entries = review_queue(campaign, campaign_votes(campaign, item_ids=[item_id]))
    return next((e for e in entries if e.span.pk == span_id), None)
