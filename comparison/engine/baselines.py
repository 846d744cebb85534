"""Baseline metrics that run locally: output length, BLEU and chrF (sacrebleu), ROUGE (rouge-score), and
wordllama's embedding similarity, whose weights ship inside the package (loaded without any download)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import sacrebleu
from rouge_score import rouge_scorer

from comparison.engine.errors import ComparisonError
from comparison.engine.metrics import Family, MetricSpec

_ROUGE_TYPES = {"rouge1": "rouge1", "rouge2": "rouge2", "rougeL": "rougeL"}
_wordllama_lock = threading.Lock()


def output_length(text: str) -> float:
    """Number of whitespace-separated words: the crude baseline every correlation table should beat."""
    return float(len(text.split()))


@cache
def _rouge() -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(list(_ROUGE_TYPES.values()), use_stemmer=True)


def overlap_score(metric: str, output: str, reference: str) -> float:
    """Sentence-level BLEU / chrF (0-100, sacrebleu's defaults) or ROUGE F1 (0-1) of one output."""
    if metric == "bleu":
        return float(sacrebleu.sentence_bleu(output, [reference]).score)
    if metric == "chrf":
        return float(sacrebleu.sentence_chrf(output, [reference]).score)
    if metric in _ROUGE_TYPES:
        return float(_rouge().score(reference, output)[_ROUGE_TYPES[metric]].fmeasure)
    raise ComparisonError(f"{metric!r} is not a string-overlap metric", field="metrics")


@cache
def _wordllama():
    """Load wordllama's packaged 256-d model from the package folder itself, never from the network.

    `WordLlama.load()` looks for the tokenizer in a folder the package does not ship and would then
    download it; the package does ship both files under `weights/` and `tokenizers/`, which is exactly
    the layout it expects of a cache folder, so the package folder is passed as the cache."""
    with _wordllama_lock:
        import wordllama  # heavy: loaded only when the metric is asked for

        folder = Path(wordllama.__file__).parent
        return wordllama.WordLlama.load(config="l2_supercat", dim=256, cache_dir=folder, disable_download=True)


def semantic_similarities(outputs: Sequence[str], others: Sequence[str]) -> list[float]:
    """Cosine similarity of each output's wordllama embedding with the other text's (reference or input)."""
    if len(outputs) != len(others):
        raise ComparisonError("outputs and references differ in number")
    if not outputs:
        return []
    model = _wordllama()
    a = np.asarray(model.embed(list(outputs), norm=True), dtype=np.float64)
    b = np.asarray(model.embed(list(others), norm=True), dtype=np.float64)
    return [float(v) for v in np.einsum("ij,ij->i", a, b)]


def baseline_scores(spec: MetricSpec, outputs: Sequence[str], others: Sequence[str]) -> list[float]:
    """Scores of one baseline for a batch of outputs; `others` are the references (or inputs for '@input')."""
    if spec.family is Family.LENGTH:
        return [output_length(o) for o in outputs]
    if spec.family is Family.OVERLAP:
        return [overlap_score(spec.base, o, r) for o, r in zip(outputs, others, strict=True)]
    if spec.family is Family.SEMANTIC:
        return semantic_similarities(outputs, others)
    raise ComparisonError(f"{spec.name} is not a local baseline")
