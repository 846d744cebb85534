"""Decisions of the local GPTScore scorer made before any arithmetic: which precision it computes in, how pairs
are packed into batches, and whether the model fits the device at all.

Plain functions over plain numbers (no torch here), so each rule is tested without a model or a GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from comparison.engine.errors import ComparisonError


class Precision(StrEnum):
    """What a user may ask for: `auto` picks by device and model (resolve_precision); the others are dtypes."""

    AUTO = "auto"
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"


PRECISIONS = tuple(p.value for p in Precision)
BYTES_PER_VALUE = {Precision.FP32: 4, Precision.BF16: 2, Precision.FP16: 2}

# Tokens per batch (rows x padded length) when no setting says otherwise. On a GPU larger batches keep the
# tensor cores busy; on the CPU a batch gains little beyond a few thousand tokens and the memory grows.
GPU_BATCH_TOKENS = 16384
CPU_BATCH_TOKENS = 4096


def parse_precision(value: str) -> Precision:
    """Return the precision named `value`, or raise ComparisonError listing the accepted names."""
    try:
        return Precision(value.strip().lower())
    except ValueError:
        raise ComparisonError(f"unknown precision {value!r}; one of {', '.join(PRECISIONS)}",
                              field="precision") from None


def resolve_precision(requested: str, *, gpu: bool, bf16_supported: bool, encoder_decoder: bool,
                      saved: str) -> Precision:
    """Return the dtype to compute in: the one asked for, or for `auto` the fastest safe one.

    `saved` is the checkpoint's own precision. The CPU keeps it (half precision buys little there and
    changes the figures). On a GPU an fp32 decoder runs in bf16 where the GPU has it: bf16 keeps fp32's
    exponent range, so its log-probabilities stay within a few thousandths. Encoder-decoder models stay in
    fp32 unless bf16 is asked: T5's activations overflow fp16, and its figures are the ones papers report in
    fp32. A half-precision checkpoint runs as saved, except bf16 on a GPU without it (fp32 then)."""
    asked = parse_precision(requested)
    if asked is not Precision.AUTO:
        return asked
    kept = parse_precision(saved)
    if not gpu:
        return kept
    if kept is Precision.BF16 and not bf16_supported:
        return Precision.FP32
    if kept is not Precision.FP32 or encoder_decoder:
        return kept
    return Precision.BF16 if bf16_supported else Precision.FP32


def saved_precision(dtype_name: str | None) -> Precision:
    """The checkpoint's precision from its config's dtype name (`float32`, `torch.bfloat16`, None: fp32)."""
    name = (dtype_name or "float32").removeprefix("torch.")
    return {"bfloat16": Precision.BF16, "float16": Precision.FP16, "half": Precision.FP16}.get(name, Precision.FP32)


def default_batch_tokens(*, gpu: bool, setting: int = 0) -> int:
    """The token budget of one batch: the setting when it names one (> 0), else the device's default."""
    if setting > 0:
        return setting
    return GPU_BATCH_TOKENS if gpu else CPU_BATCH_TOKENS


def pack_batches(lengths: Sequence[Sequence[int]], budget: int) -> list[list[int]]:
    """Return the indices of `lengths` grouped into batches, sorted by length, each within `budget` tokens.

    A row's lengths are one per padded tensor (a decoder's one sequence; an encoder's source and a decoder's
    target): a batch costs its rows times the sum of each tensor's longest length, which is what padding
    makes the model compute. Sorting puts similar lengths together so little is padding; longest first,
    so a batch that does not fit in memory fails at once. A row longer than the budget goes alone."""
    order = sorted(range(len(lengths)), key=lambda i: tuple(lengths[i]), reverse=True)
    batches: list[list[int]] = []
    current: list[int] = []
    widest: list[int] = []
    for index in order:
        row = list(lengths[index])
        grown = [max(a, b) for a, b in zip(widest, row, strict=True)] if widest else row
        if current and (len(current) + 1) * sum(grown) > budget:
            batches.append(current)
            current, grown = [], row
        current.append(index)
        widest = grown
    if current:
        batches.append(current)
    return batches


@dataclass(frozen=True)
class MemoryNeed:
    """Bytes a model needs on its device: the weights, and one batch's working set (an estimate)."""

    weights: int
    working: int

    @property
    def total(self) -> int:
        return self.weights + self.working


def memory_need(*, parameters: int, precision: Precision, batch_tokens: int, hidden: int, vocab: int,
                logit_rows: int) -> MemoryNeed:
    """Estimate what scoring needs: parameters x bytes per value, plus one batch's activations.

    The working set counts a layer's widest activations (about 16 values per token and hidden unit: the
    attention projections and the 4x MLP, in the compute dtype) and one chunk of logits in fp32 beside its
    compute-dtype copy. Weights dominate for any model worth refusing; the rest is a margin, not a promise."""
    size = BYTES_PER_VALUE[precision]
    working = batch_tokens * hidden * 16 * size + logit_rows * vocab * (4 + size)
    return MemoryNeed(weights=parameters * size, working=working)


def _gib(value: int) -> str:
    return f"{value / 2**30:.2f} GiB"


def refuse_unless_fits(need: MemoryNeed, free: int | None, *, model: str, device: str, precision: Precision) -> None:
    """Raise ComparisonError, before any weight is loaded, when `need` exceeds the device's `free` bytes
    (None: the device's memory is unknown, nothing is refused)."""
    if free is None or need.total <= free:
        return
    raise ComparisonError(
        f"gptscore-hf: {model} needs about {_gib(need.total)} on {device} in {precision} "
        f"({_gib(need.weights)} of weights and {_gib(need.working)} for a batch) but {_gib(free)} is free; "
        "choose a smaller precision (bf16), a smaller GPTSCORE_HF_BATCH_TOKENS or a larger device"
    )
