"""Which of a run's annotations is its answer, defined once for the judging screen and the analytics."""

from __future__ import annotations

from corpus.models import AnnotationKind

RUN_ANSWER_KINDS: tuple[str, ...] = (AnnotationKind.ENSEMBLE, AnnotationKind.SUPERVISOR, AnnotationKind.ANNOTATOR)
"""Per run and item, the annotations of the first kind present are the run's answer: the merged ensemble one
when the run has one, else the supervisor's, else the lone model's. The per-model answers inside an ensemble
are inputs to the merge; they are neither judged again nor scored as the run's answer."""
