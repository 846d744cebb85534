"""Every database write of an executing run: the call cache and its audit rows, annotations with their
spans, progress counters and heartbeat, and the final status (through jobs.lifecycle).

Calls are stored the moment their answer arrives, so a killed worker repeats no finished call; the rest
is written per batch in one transaction, so a batch's progress never counts annotations that are missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from corpus.models import Annotation, AnnotationKind, ErrorSpan, ParseStatus
from evaluation.engine.alignment import align_location
from evaluation.engine.ensemble import MAX_ERRORS, MergedError, cap_errors
from evaluation.engine.parsing import ParsedAnswer, ParsedError, score_to_label
from evaluation.llm.budget import TRUNCATION_UNCHECKED
from evaluation.models import EvaluatorRun, RunCall
from evaluation.runs.attempts import AttemptKind
from evaluation.runs.ledger import call_ids, store_answers
from evaluation.runs.modes import ModelPass, ScoreScale
from evaluation.runs.scheduler import Outcome
from evaluation.runs.steps import ItemAnswers
from jobs.lifecycle import job_cancel_requested

SUPERVISOR_UNUSABLE = "The supervisor's answer was unusable; errors were merged by span overlap instead."
NOTHING_TO_MERGE = "No annotator gave a usable answer, so there was nothing to merge."

# An annotation row and the spans to save with it.
Written = tuple[Annotation, list[ErrorSpan]]

log = logging.getLogger(__name__)




def spans_for_errors(errors: Iterable[ParsedError], output: str) -> list[ErrorSpan]:
    """Align each error's location to the output; '...'-joined locations become one span per part."""
    rows: list[ErrorSpan] = []
    for error in errors:
        for span in align_location(error.location, output, explanation=error.explanation):
            no_location = span.start is None and not span.text
            rows.append(ErrorSpan(
                text=span.text or error.location_raw, start=span.start, end=span.end, match=span.match,
                multi_part=span.multi_part, ambiguous=span.ambiguous, explanation=error.explanation,
                severity=error.severity, note=span.note or ("The answer gives no location." if no_location else ""),
            ))
    return rows


def _merged_spans(merged: Iterable[MergedError]) -> list[ErrorSpan]:
    return [
        ErrorSpan(
            text=m.location or "", start=m.start, end=m.end, match=m.match, ambiguous=m.ambiguous,
            explanation=m.explanation, severity=m.severity,
            note="merged without the supervisor" if m.start is not None else
            "merged without the supervisor; no location in the text",
        )
        for m in merged
    ]


def _parse_status(parsed: ParsedAnswer) -> str:
    return {"ok": ParseStatus.OK, "partial": ParseStatus.PARTIAL}.get(parsed.status, ParseStatus.FAILED)


class RunWriter:
    """Writes one claimed run's results; `outputs` maps item ids to the texts spans are aligned to."""

    def __init__(self, run: EvaluatorRun, outputs: Mapping[int, str], digests: Mapping[str, str]) -> None:
        self.run = run
        self.outputs = outputs
        self.digests = digests
        self.progress: dict[str, dict[str, int]] = run.progress

    # --- calls --------------------------------------------------------------------------------
    def store_calls(self, answers: Iterable[tuple[str, Outcome]]) -> None:
        """Store new answers (model, step) at once, in one query: the cache is what makes a resumed run
        repeat no call."""
        store_answers((model, self.digests.get(model, ""), outcome) for model, outcome in answers)

    # --- batches ------------------------------------------------------------------------------
    @transaction.atomic
    def record_batch(
        self, model_pass: ModelPass, outcomes: Sequence[Outcome], annotate: Callable[[Outcome], list[Written]]
    ) -> None:
        """Link the batch's calls to the run, write its annotations, count it and beat the heartbeat."""
        if outcomes:
            keys = [a.key for o in outcomes for a in o.attempts]
            calls = call_ids(keys)
            RunCall.objects.bulk_create(
                [
                    RunCall(
                        run=self.run, item_id=o.step.item_id, role=model_pass.role, model=model_pass.model,
                        attempt=a.number, call_id=calls[a.key], from_cache=a.result is None,
                    )
                    for o in outcomes
                    for a in o.attempts
                ],
                ignore_conflicts=True,
            )
            self._save([row for outcome in outcomes for row in annotate(outcome)])
        failed = sum(1 for o in outcomes if o.parsed.status == "failed")
        cached = sum(1 for o in outcomes for a in o.attempts if a.result is None)
        entry = self._entry(model_pass)
        entry["done"] = entry.get("done", 0) + len(outcomes)
        entry["failed"] = entry.get("failed", 0) + failed
        entry["calls"] = entry.get("calls", 0) + sum(len(o.attempts) for o in outcomes)
        EvaluatorRun.objects.filter(pk=self.run.pk).update(
            progress=self.progress, done=F("done") + len(outcomes), cache_hits=F("cache_hits") + cached,
            failed_calls=F("failed_calls") + failed, heartbeat_at=timezone.now(),
            **self._unchecked(outcomes),
        )

    def _unchecked(self, outcomes: Sequence[Outcome]) -> dict[str, Any]:
        """The run's config with the answers of servers that could not tell a cut counted per server (the run's
        `truncation_unchecked:` problem), when this batch has any."""
        servers = [o.unchecked for o in outcomes if o.unchecked]
        if not servers:
            return {}
        config = dict(self.run.config or {})
        counts = dict(config.get(TRUNCATION_UNCHECKED) or {})
        for server in servers:
            counts[server] = counts.get(server, 0) + 1
        config[TRUNCATION_UNCHECKED] = counts
        self.run.config = config
        return {"config": config}

    def placed(self, placement: dict[str, Any]) -> None:
        """Record where the models run (what the run page and the API show)."""
        EvaluatorRun.objects.filter(pk=self.run.pk).update(placement=placement)

    def cancel_requested(self) -> bool:
        return job_cancel_requested(EvaluatorRun, self.run.pk)

    # --- annotations (called by record_batch, inside its transaction) -------------------------
    def annotator_answer(self, model: str, scale: ScoreScale, outcome: Outcome) -> list[Written]:
        """The annotator's annotation; retries of an unparseable answer are noted among its problems."""
        parsed = outcome.parsed
        problems = list(parsed.problems)
        if outcome.retries:
            note = f"answer unparseable on {outcome.retries} earlier attempt(s); retried warmer"
            problems.insert(len(outcome.problems), note)
        if outcome.repaired:  # both answers are in the call ledger
            restated = outcome.attempts[outcome.used].kind is AttemptKind.REPAIR
            used = "the restated answer is used" if restated else "the first answer reads better and is used"
            problems.insert(len(outcome.problems), f"answer sent back once to be restated in our format; {used}")
        annotation = self._annotation(
            outcome.step.item_id, AnnotationKind.ANNOTATOR, model, score=scale.score(parsed),
            score_label=parsed.score_label or "", score_explanation=parsed.score_explanation, raw_answer=outcome.raw,
            parse_status=_parse_status(parsed), parse_problems=problems,
        )
        return [(annotation, spans_for_errors(parsed.errors, self.outputs[outcome.step.item_id]))]

    def supervised_answer(self, model: str, items: Mapping[int, ItemAnswers], outcome: Outcome) -> list[Written]:
        """The supervisor's annotation and the ensemble one: its errors, or the fallback merge if unusable.

        `items` holds what each item's supervisor step merged (the supervisor plan's)."""
        answers = items[outcome.step.item_id]
        parsed = outcome.parsed
        output = self.outputs[outcome.step.item_id]
        spans = spans_for_errors(cap_errors(parsed.errors, MAX_ERRORS), output) if parsed.status != "failed" else []
        supervisor = self._annotation(
            outcome.step.item_id, AnnotationKind.SUPERVISOR, model, raw_answer=outcome.raw,
            parse_status=_parse_status(parsed), parse_problems=list(parsed.problems),
        )
        if parsed.status != "failed":
            merged, note = [_copy(span) for span in spans], ""
        else:
            merged, note = _merged_spans(answers.ensemble.fallback(output)), SUPERVISOR_UNUSABLE
        return [(supervisor, spans), self._ensemble(answers, model, merged, note)]

    @transaction.atomic
    def unmerged_item(self, model_pass: ModelPass, answers: ItemAnswers) -> None:
        """An item whose annotators all failed: its ensemble annotation says so, and it counts as done."""
        self._save([self._ensemble(answers, "", [], NOTHING_TO_MERGE)])
        entry = self._entry(model_pass)
        entry["done"] = entry.get("done", 0) + 1
        EvaluatorRun.objects.filter(pk=self.run.pk).update(progress=self.progress, done=F("done") + 1)

    def _ensemble(self, answers: ItemAnswers, supervisor: str, spans: list[ErrorSpan], note: str) -> Written:
        ensemble = answers.ensemble
        if ensemble.outliers:
            outliers = [answers.annotation_ids[i] for i in ensemble.outliers]
            Annotation.objects.filter(pk__in=outliers).update(is_outlier=True)
        used = [
            f"{model}: {answer.score_label or '-'}"
            for model, answer in zip(answers.models, ensemble.answers, strict=True)
        ]
        mean = ensemble.score
        annotation = self._annotation(
            answers.item_id, AnnotationKind.ENSEMBLE, supervisor, score=mean,
            score_label=score_to_label(mean) if mean is not None else "",
            score_explanation=f"Mean of the annotators' scores ({'; '.join(used)})." if used else "",
            parse_status=ParseStatus.OK if mean is not None else ParseStatus.FAILED,
            parse_problems=[note] if note else [],
        )
        return annotation, spans

    def _annotation(self, item_id: int, kind: str, model: str, **fields: Any) -> Annotation:
        return Annotation(item_id=item_id, aspect=self.run.aspect.name, source=self.run, kind=kind, model=model,
                          **fields)

    @staticmethod
    def _save(rows: list[Written]) -> None:
        """Insert the annotations, then their spans in their order (one query each on PostgreSQL)."""
        Annotation.objects.bulk_create([annotation for annotation, _ in rows])
        spans = []
        for annotation, own in rows:
            for position, span in enumerate(own):
                span.annotation = annotation
                span.position = position
                spans.append(span)
        ErrorSpan.objects.bulk_create(spans)

    def _entry(self, model_pass: ModelPass) -> dict[str, int]:
        return self.progress.setdefault(model_pass.progress_key, {"done": 0, "total": len(self.outputs)})


def _copy(span: ErrorSpan) -> ErrorSpan:
    return ErrorSpan(
        text=span.text, start=span.start, end=span.end, match=span.match, multi_part=span.multi_part,
        ambiguous=span.ambiguous, explanation=span.explanation, severity=span.severity, note=span.note,
    )
