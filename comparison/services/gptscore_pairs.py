"""The (aspect, item) pairs a GPTScore metric of a comparison job still lacks, each with the context (an
instruction naming the aspect, then the item's inputs) its output is scored after."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from comparison.engine.gptscore import gptscore_context
from comparison.models import ComparisonJob
from comparison.services.stored import ItemRow, existing_scores
from evaluation.models import Aspect


@dataclass(frozen=True)
class Pending:
    """One (aspect, item) a GPTScore metric still lacks: the context its output is scored after."""

    aspect: str
    item: int
    context: str
    output: str


def _aspect_definitions(job: ComparisonJob) -> dict[str, str]:
    defs = {a.name.lower(): a.definition for a in Aspect.objects.filter(task=job.dataset.task)}
    return {key: defs.get(key.lower(), "") for key in job.aspects}


def pending_pairs(job: ComparisonJob, items: Sequence[ItemRow], key: str) -> tuple[int, list[Pending]]:
    """Return how many scores are stored under `key` already, and the (aspect, item) pairs still missing."""
    definitions = _aspect_definitions(job)
    task = job.dataset.task
    done = 0
    pending: list[Pending] = []
    for aspect in job.aspects:
        have = existing_scores(items, key, aspect)
        done += len(have)
        for item in items:
            if item.pk in have:
                continue
            context = gptscore_context(task=task.description, output_noun=task.output_noun, aspect=aspect,
                                       definition=definitions.get(aspect, ""), inputs=item.inputs,
                                       output_header=job.dataset.output_header)
            pending.append(Pending(aspect, item.pk, context, item.output))
    return done, pending
