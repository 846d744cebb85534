"""Contrastive ESA's campaign formats, Pearmut's (its cESA protocol).

- `pearmut-contrastive`, the annotation log: one line per finished screen of a judge, the screen's outputs as the
  systems of one segment, each with its score and spans and ESA^AI's pre-filled spans where the screen was
  pre-filled. Read back by corpus.interop.pearmut like any Pearmut log. The line's systems are in key order (the
  log module writes sorted keys); the positions shown are in `export_units`.
- `pearmut-task`, the task file: the campaign's screens as Pearmut would hand them out, one task per registered
  judge and per place of the link's pool, each screen one document, its outputs in position order, pre-filled
  where the screen is. Pearmut can run the same design, or a researcher can read what each judge is given.
"""

from __future__ import annotations

from dataclasses import replace
from typing import IO

from analytics.protocols import CampaignFormat, register_format
from analytics.selectors.esa import campaign_pearmut_ratings
from analytics.selectors.units import real_screens
from annotator.models import Assignment, Campaign, UnitOutput
from annotator.selectors.spans import campaign_run_labels, judged_spans_by_item
from corpus.interop.pearmut import PearmutRating, PearmutSpan, pearmut_lines, pearmut_task
from corpus.models import Item
from corpus.protocols import prefill
from corpus.selectors.pearmut import item_fields
from studies.models import PoolSlot, StudyLink

FORMAT = "pearmut-contrastive"
TASK_FORMAT = "pearmut-task"


def contrastive_ratings(campaign: Campaign):
    """The finished outputs' Pearmut ratings regrouped by screen: `item_i` the judge's screen (0-based), the
    system's place its position there; outputs of screens not yet finished are left out."""
    rows = list(real_screens(UnitOutput.objects.filter(unit__campaign=campaign))
                .select_related("unit__annotator", "assignment__item").order_by("unit__number", "position"))
    members: dict[int, list[UnitOutput]] = {}
    for row in rows:
        members.setdefault(row.unit_id, []).append(row)
    place: dict[tuple[str, str, str], tuple[int, int]] = {}
    for mates in members.values():
        if any(m.assignment.status != Assignment.Status.DONE for m in mates):
            continue
        for m in mates:
            key = (m.unit.annotator.username, m.assignment.item.external_id, m.assignment.item.system)
            place.setdefault(key, (m.unit.number - 1, m.position - 1))
    out = []
    for rating in campaign_pearmut_ratings(campaign):
        found = place.get((rating.user_id, rating.item_id or "", rating.system))
        if found is not None:
            out.append(replace(rating, item_i=found[0], k=0, m=found[1]))
    return out


def write_contrastive(campaign: Campaign, handle: IO[str]) -> int:
    ratings = contrastive_ratings(campaign)
    handle.writelines(pearmut_lines(ratings))
    return len(ratings)


def _prefills(campaign: Campaign, item_ids: set[int]) -> dict[int, list[PearmutSpan]]:
    """The spans ESA^AI pre-fills on each output: the runs' spans the shared rule chooses (as on the screen)."""
    by_item = judged_spans_by_item(campaign, sorted(item_ids), campaign_run_labels(campaign.pk))
    major_from = prefill.major_from(campaign.protocol_options)
    out: dict[int, list[PearmutSpan]] = {}
    for item_id, pairs in by_item.items():
        spans = {s.pk: s for s, _ in pairs}
        chosen = prefill.prefill_choice((prefill.MachineSpan(s.pk, s.start, s.end, s.severity) for s in spans.values()),
                                        major_from=major_from, overlapping=False)
        out[item_id] = sorted((PearmutSpan(spans[p.key].start, spans[p.key].end, severity) for p, severity in chosen),
                              key=lambda span: (span.start is None, span.start or 0))
    return out


def task_screens(campaign: Campaign) -> list[list[list[tuple[int, bool]]]]:
    """Each task's screens as (item, pre-filled) in position order: the registered judges' real screens (by
    username, in screen order), then each place of the link's pool as planned (participants take those)."""
    has_runs = campaign.runs.exists()
    joined = set(StudyLink.objects.filter(campaign=campaign).values_list("participants__user_id", flat=True))
    tasks: dict[str, list[list[tuple[int, bool]]]] = {}
    rows = (real_screens(UnitOutput.objects.filter(unit__campaign=campaign))
            .exclude(unit__annotator_id__in=joined - {None})
            .order_by("unit__annotator__username", "unit__number", "position")
            .values_list("unit_id", "unit__annotator__username", "assignment__item_id", "assignment__in_control_arm"))
    screens: dict[int, list[tuple[int, bool]]] = {}
    for unit_id, username, item_id, unprimed in rows:
        if unit_id not in screens:
            screens[unit_id] = []
            tasks.setdefault(username, []).append(screens[unit_id])
        screens[unit_id].append((item_id, has_runs and not unprimed))
    answer = list(tasks.values())
    link = StudyLink.objects.filter(campaign=campaign).first()
    if link is not None and link.screens:
        arms = {(item_id, k): unprimed for item_id, k, unprimed in
                PoolSlot.objects.filter(link=link).values_list("item_id", "judge", "unprimed")}
        lanes: dict[int, list[list[tuple[int, bool]]]] = {}
        for screen in link.screens:
            k = screen["judge"]
            lanes.setdefault(k, []).append([(i, has_runs and not arms[(i, k)]) for i in screen["items"]])
        answer += [lanes[k] for k in sorted(lanes)]
    return answer


def write_task(campaign: Campaign, handle: IO[str]) -> int:
    """The campaign's screens as a Pearmut task file; return how many outputs it shows."""
    tasks = task_screens(campaign)
    shown = {item_id for task in tasks for screen in task for item_id, _ in screen}
    items = {row["pk"]: row for row in Item.objects.filter(pk__in=shown)
             .values("pk", "system", "external_id", "position", "output", "inputs", "reference", "extra")}
    prefilled = _prefills(campaign, {i for task in tasks for screen in task for i, filled in screen if filled})
    out = []
    for task in tasks:
        documents = []
        for screen in task:
            members = []
            for item_id, filled in screen:
                fields = item_fields(items[item_id])
                members.append(PearmutRating(
                    user_id="", item_i=0, k=0, m=0, item_id=fields["item_id"], system=items[item_id]["system"],
                    source=fields["source"], reference=fields["reference"], output=items[item_id]["output"],
                    score=None, prefill=prefilled.get(item_id, []) if filled else None))
            documents.append(members)
        out.append(documents)
    handle.write(pearmut_task(campaign.name, out))
    return len(shown)


register_format(CampaignFormat(FORMAT, ".jsonl", write_contrastive))
register_format(CampaignFormat(TASK_FORMAT, ".json", write_task))
