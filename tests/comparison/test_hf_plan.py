"""The local scorer's decisions as plain functions: precision by device and model, length-sorted token-budget
batches, and the memory a model needs against what the device has free."""

from __future__ import annotations

import pytest

from comparison.engine.errors import ComparisonError
from comparison.engine.hf_plan import (
    CPU_BATCH_TOKENS,
    GPU_BATCH_TOKENS,
    MemoryNeed,
    Precision,
    default_batch_tokens,
    memory_need,
    pack_batches,
    parse_precision,
    refuse_unless_fits,
    resolve_precision,
    saved_precision,
)


@pytest.mark.parametrize(("requested", "gpu", "bf16", "encoder_decoder", "saved", "expected"), [
    # auto on the CPU: the checkpoint's own precision, whatever it is
    ("auto", False, False, False, "fp32", "fp32"),
    ("auto", False, False, True, "fp32", "fp32"),
    ("auto", False, False, False, "bf16", "bf16"),
    ("auto", False, False, False, "fp16", "fp16"),
    # auto on a GPU: an fp32 decoder in bf16 where the GPU has it, else fp32
    ("auto", True, True, False, "fp32", "bf16"),
    ("auto", True, False, False, "fp32", "fp32"),
    # an encoder-decoder stays in fp32 (fp16 overflows T5), or as saved in half precision
    ("auto", True, True, True, "fp32", "fp32"),
    ("auto", True, True, True, "bf16", "bf16"),
    # a half-precision checkpoint runs as saved, except bf16 where the GPU lacks it
    ("auto", True, True, False, "fp16", "fp16"),
    ("auto", True, False, False, "bf16", "fp32"),
    # an explicit choice wins everywhere
    ("fp32", True, True, False, "bf16", "fp32"),
    ("bf16", True, True, True, "fp32", "bf16"),
    ("fp16", False, False, False, "fp32", "fp16"),
    ("BF16", False, False, False, "fp32", "bf16"),
])
def test_resolve_precision_follows_device_model_and_setting(requested, gpu, bf16, encoder_decoder, saved,
                                                             expected) -> None:
    got = resolve_precision(requested, gpu=gpu, bf16_supported=bf16, encoder_decoder=encoder_decoder, saved=saved)
    assert got == Precision(expected)


def test_an_unknown_precision_is_refused_with_the_accepted_names() -> None:
    with pytest.raises(ComparisonError, match="unknown precision 'int8'; one of auto, fp32, bf16, fp16"):
        parse_precision("int8")


@pytest.mark.parametrize(("dtype", "expected"), [
    (None, "fp32"), ("float32", "fp32"), ("torch.float32", "fp32"), ("torch.bfloat16", "bf16"),
    ("float16", "fp16"),
])
def test_saved_precision_reads_the_configs_dtype(dtype, expected) -> None:
    assert saved_precision(dtype) == Precision(expected)


def test_default_batch_tokens_by_device_unless_the_setting_names_one() -> None:
    assert default_batch_tokens(gpu=True) == GPU_BATCH_TOKENS > default_batch_tokens(gpu=False) == CPU_BATCH_TOKENS
    assert default_batch_tokens(gpu=True, setting=2048) == 2048


def test_pack_batches_sorts_by_length_and_stays_within_the_budget() -> None:
    lengths = [[5], [30], [12], [29], [6], [11], [50], [4]]
    batches = pack_batches(lengths, 60)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # every row once
    assert [i for b in batches for i in b] == [6, 1, 3, 2, 5, 4, 0, 7]  # longest first
    for batch in batches:
        assert len(batch) * max(lengths[i][0] for i in batch) <= 60
    assert batches == [[6], [1, 3], [2, 5, 4, 0, 7]]  # greedy: a batch closes when one more row would not fit


def test_pack_batches_counts_every_padded_tensor_and_sends_an_oversized_row_alone() -> None:
    # (source, target): a batch costs rows x (longest source + longest target)
    assert pack_batches([[10, 2], [3, 9], [10, 1]], 24) == [[0, 2], [1]]
    assert pack_batches([[100], [2], [3]], 10) == [[0], [2, 1]]
    assert pack_batches([], 10) == []


def test_memory_need_counts_weights_by_precision_and_one_batch() -> None:
    need = memory_need(parameters=1000, precision=Precision.BF16, batch_tokens=10, hidden=8, vocab=50, logit_rows=4)
    assert need.weights == 2000
    assert need.working == 10 * 8 * 16 * 2 + 4 * 50 * (4 + 2)
    assert memory_need(parameters=1000, precision=Precision.FP32, batch_tokens=0, hidden=8, vocab=50,
                       logit_rows=0).total == 4000


def test_a_model_that_does_not_fit_is_refused_with_the_memory_it_needs() -> None:
    need = MemoryNeed(weights=3 * 2**30, working=2**29)
    refuse_unless_fits(need, 4 * 2**30, model="m", device="cuda", precision=Precision.BF16)
    refuse_unless_fits(need, None, model="m", device="cpu", precision=Precision.BF16)  # unknown: not refused
    with pytest.raises(ComparisonError, match=r"m needs about 3.50 GiB on cuda in bf16 \(3.00 GiB of weights and "
                                              r"0.50 GiB for a batch\) but 3.00 GiB is free"):
        refuse_unless_fits(need, 3 * 2**30, model="m", device="cuda", precision=Precision.BF16)
