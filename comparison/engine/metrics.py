"""The vocabulary of metric names a comparison job accepts, parsed once for the CLI, the API and the job."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from comparison.engine.errors import ComparisonError


class Family(StrEnum):
    LENGTH = "length"
    OVERLAP = "overlap"  # bleu, chrf, rouge*: string overlap with a reference (or the input, when asked)
    SEMANTIC = "semantic"  # wordllama embedding cosine with a reference (or the input, when asked)
    GPTSCORE = "gptscore"
    RUN = "run"  # an evaluator run of evaluation/runs: ensemble, annotator:MODEL, distilled:MODEL


OVERLAP_METRICS = ("bleu", "chrf", "rouge1", "rouge2", "rougeL")
SEMANTIC_METRIC = "wordllama"
INPUT_SUFFIX = "@input"
LOCAL_GPTSCORE = "gptscore-hf"
RUN_MODES = {"ensemble": "ensemble", "annotator": "single", "distilled": "distilled"}
MODEL_METRIC_FORMS = ("gptscore:MODEL", f"{LOCAL_GPTSCORE}:MODEL_PATH_OR_NAME", "annotator:MODEL", "distilled:MODEL")


@dataclass(frozen=True)
class MetricSpec:
    name: str  # exactly as the user wrote it; the key of stored scores
    family: Family
    base: str  # bleu, chrf, ..., length, wordllama, gptscore, ensemble, annotator, distilled
    model: str = ""  # the LLM of gptscore / annotator / distilled
    against_input: bool = False  # reference-based metric computed against the input (labelled '@input')

    @property
    def local(self) -> bool:
        """gptscore-hf:MODEL scores in this process with transformers; no server is asked."""
        return self.base == LOCAL_GPTSCORE

    @property
    def per_aspect(self) -> bool:
        """LLM metrics score each aspect; the baselines give one score per item for every aspect."""
        return self.family in (Family.GPTSCORE, Family.RUN)

    @property
    def needs_reference(self) -> bool:
        return self.family in (Family.OVERLAP, Family.SEMANTIC) and not self.against_input

    @property
    def run_mode(self) -> str:
        return RUN_MODES.get(self.base, "")


def plain_metric_names() -> list[str]:
    """Every metric name that needs no model (what the launch form offers as checkboxes): the baselines, the
    reference-based ones against the input instead, and the ensemble."""
    against_input = [f"{name}{INPUT_SUFFIX}" for name in (*OVERLAP_METRICS, SEMANTIC_METRIC)]
    return ["length", *OVERLAP_METRICS, SEMANTIC_METRIC, *against_input, "ensemble"]


def metric_names_help() -> str:
    return (
        "length, bleu, chrf, rouge1, rouge2, rougeL, wordllama (append @input to compare with the input "
        "instead of a reference), gptscore:MODEL, gptscore-hf:MODEL_PATH_OR_NAME, ensemble, annotator:MODEL, "
        "distilled:MODEL"
    )


def parse_metric(name: str) -> MetricSpec:
    """Return the spec of one metric name, or raise ComparisonError naming the accepted forms."""
    raw = name.strip()
    base, _, model = raw.partition(":")
    against_input = False
    if not model and base.endswith(INPUT_SUFFIX):
        base, against_input = base[: -len(INPUT_SUFFIX)], True
    if base == "length" and not model and not against_input:
        return MetricSpec(raw, Family.LENGTH, base)
    if base in OVERLAP_METRICS and not model:
        return MetricSpec(raw, Family.OVERLAP, base, against_input=against_input)
    if base == SEMANTIC_METRIC and not model:
        return MetricSpec(raw, Family.SEMANTIC, base, against_input=against_input)
    if base == "gptscore":
        if not model.strip():
            raise ComparisonError("gptscore needs a model: gptscore:MODEL (the model's name on the GPTScore server)",
                                  field="metrics")
        return MetricSpec(raw, Family.GPTSCORE, base, model=model.strip())
    if base == LOCAL_GPTSCORE:
        if not model.strip():
            raise ComparisonError("gptscore-hf needs a model: gptscore-hf:MODEL_PATH_OR_NAME (a transformers model "
                                  "folder, or a name already in the local Hugging Face cache)", field="metrics")
        return MetricSpec(raw, Family.GPTSCORE, base, model=model.strip())
    if base == "ensemble" and not model:
        return MetricSpec(raw, Family.RUN, base)
    if base in ("annotator", "distilled"):
        if not model.strip():
            raise ComparisonError(f"{base} needs a model: {base}:MODEL (an Ollama model tag)", field="metrics")
        return MetricSpec(raw, Family.RUN, base, model=model.strip())
    raise ComparisonError(f"unknown metric {raw!r}; metrics: {metric_names_help()}", field="metrics")


def parse_metrics(names: list[str] | str) -> list[MetricSpec]:
    """Parse a comma-separated list (or a list) of metric names; refuse an empty list and duplicates."""
    items = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    if not items:
        raise ComparisonError(f"no metric given; metrics: {metric_names_help()}", field="metrics")
    specs = [parse_metric(n) for n in items]
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise ComparisonError(f"metric {spec.name!r} is listed twice", field="metrics")
        seen.add(spec.name)
    return specs
