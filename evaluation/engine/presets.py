"""Ensemble presets: which Ollama models annotate and which one supervises."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.engine.errors import EngineError


@dataclass(frozen=True)
class EnsemblePreset:
    """`answer_tokens` overrides LLM_ANSWER_TOKENS for the preset's runs; `think` switches a thinking model's
    trace on or off per model (absent: the server's default); `answer_format` is what its runs ask for unless
    a run says otherwise (evaluation.engine.answer_schema: "text", the paper's, or "json"); `answer_errors` and
    `answer_chars` bound a json answer's errors and each explanation's characters (absent: the schema's
    defaults), so that it ends within `answer_tokens`."""

    name: str
    annotators: tuple[str, ...]
    supervisor: str
    note: str
    answer_tokens: int | None = None
    think: tuple[tuple[str, bool], ...] = ()
    answer_format: str = "text"
    answer_errors: int | None = None
    answer_chars: int | None = None


# The small real model `scripts/small_model.sh` serves (SmolLM2-135M-Instruct on llama-cpp-python): one GGUF under
# two names, so that an ensemble of two annotators can run on it. Its answers are real but come from a 135M model:
# they show how the tool works, not how good a text is, and the pages say so.
SMALL_MODELS: tuple[str, ...] = ("smollm2-135m", "smollm2-135m-b")
SMALL_MODEL_LABEL = "SmolLM2-135M (real, tiny - for trying the tool)"


def small_models_in(models: object) -> list[str]:
    """The names among `models` (any iterable of names; other values are ignored) that are the small real model."""
    seen = models if isinstance(models, list | tuple | set) else []
    return [m for m in dict.fromkeys(seen) if isinstance(m, str) and m in SMALL_MODELS]


PRESETS: dict[str, EnsemblePreset] = {
    preset.name: preset
    for preset in (
        EnsemblePreset(
            name="paper",
            annotators=(
                "command-r-plus:104b-08-2024-q5_K_M",
                "gemma2:27b-instruct-q8_0",
                "nemotron:70b-instruct-q8_0",
                "mistral-large:123b-instruct-2407-q4_K_M",
                "qwen2.5:72b-instruct-q8_0",
            ),
            # The paper names Llama 3.3 70B as supervisor but lists no tag for it; this is the 8-bit build,
            # matching the quantization of the 70B annotators.
            supervisor="llama3.3:70b-instruct-q8_0",
            note="The OpeNLGauge paper's ensemble (App. C tags); needs a large multi-GPU server.",
        ),
        EnsemblePreset(
            name="workstation",
            annotators=("llama3.1:8b", "qwen2.5:7b", "gemma2:9b", "mistral:7b", "granite3.3:8b"),
            supervisor="qwen2.5:7b",
            note="7-9B models; fits one 24 GB GPU with one model loaded at a time.",
        ),
        EnsemblePreset(
            name="laptop",
            annotators=("llama3.2:3b", "qwen2.5:3b", "gemma2:2b", "phi3.5:3.8b"),
            supervisor="llama3.2:3b",
            note="1-4B models for a laptop; expect noisier error lists.",
        ),
        EnsemblePreset(
            name="tiny",
            annotators=SMALL_MODELS,
            supervisor=SMALL_MODELS[0],
            note=f"{SMALL_MODEL_LABEL}: the model `scripts/run.sh --small-model` serves on a CPU, under two names. "
            "Its answers are real and mostly poor: for trying the workflow, never as a result.",
            answer_tokens=320,
            # Measured on the demo (bench/small_model_runs.py): schema-constrained answers parse and locate far more
            # often than the free-text format (docs/measured.md).
            answer_format="json",
            # 3 errors of at most 160 + 80 characters, a label and its reasons fit in the 320 tokens: an answer
            # cut at the budget is asked again at twice it, which doubled some steps' time.
            answer_errors=3,
            answer_chars=160,
        ),
    )
}


def get_preset(name: str) -> EnsemblePreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise EngineError(f"unknown ensemble preset {name!r} (known: {', '.join(PRESETS)})") from None
