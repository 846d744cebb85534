"""gptscore-hf's scorer on tiny random GPT-2 and T5 models built in a temporary folder (no download): scores
equal a straightforward fp32 computation, in the caller's order whatever the batches, and a model too large for
the device is refused before its weights are read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from comparison.engine import gptscore_hf  # noqa: E402
from comparison.engine.errors import ComparisonError  # noqa: E402
from comparison.engine.gptscore_hf import HFScorer  # noqa: E402
from comparison.engine.hf_plan import pack_batches  # noqa: E402
from tests.comparison.hf_models import reference_decoder, reference_seq2seq, save_gpt2, save_t5  # noqa: E402

PAIRS = [
    ("Write a summary that is excellent in fluency.\nSummary:\n", "The Gulls beat the Hawks."),
    ("Task: summarise.\nSummary:\n", "Orla Venn scored 27 points and Kim grabbed nine rebounds on Saturday."),
    ("Context:", " Zoë said"),
    ("Summary:\n", "Kim grabbed nine rebounds. The bridge was old, not unsafe. The Gulls beat the Hawks 102-99."),
    ("Task: write about the game in one sentence, excellent in coherence.\nSummary:\n", "Orla Venn"),
]
SMALL_BUDGET = 130  # tokens per batch: several batches of one or two rows, padded


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def gpt2_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="module")
def t5_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_t5(tmp_path_factory.mktemp("tiny-t5"))


def _lengths(scorer: HFScorer) -> list[list[int]]:
    return [[len(scorer.tokenizer(c + t)["input_ids"])] for c, t in PAIRS]


def test_decoder_scores_equal_the_fp32_reference_in_sorted_padded_batches(gpt2_path: Path) -> None:
    scorer = HFScorer(str(gpt2_path), device="cpu", precision="fp32", batch_tokens=SMALL_BUDGET)
    assert not scorer.encoder_decoder and scorer.attention == "sdpa"
    batches = pack_batches(_lengths(scorer), SMALL_BUDGET)
    assert len(batches) > 1 and any(len(b) > 1 for b in batches)  # padding is exercised
    assert [i for b in batches for i in b] != list(range(len(PAIRS)))  # the batches run out of the pairs' order
    scores = scorer.score(PAIRS)
    for (context, text), got in zip(PAIRS, scores, strict=True):
        assert got.mean == pytest.approx(reference_decoder(gpt2_path, context, text), abs=1e-5)
        assert got.tokens >= 1


def test_decoder_answers_keep_the_callers_order_whatever_the_batches(gpt2_path: Path) -> None:
    scorer = HFScorer(str(gpt2_path), device="cpu", precision="fp32", batch_tokens=SMALL_BUDGET)
    alone = [scorer.score([pair])[0] for pair in PAIRS]
    together = scorer.score(PAIRS)
    backwards = scorer.score(PAIRS[::-1])[::-1]
    for one, two, three in zip(alone, together, backwards, strict=True):
        assert one.tokens == two.tokens == three.tokens
        assert one.mean == pytest.approx(two.mean, abs=1e-5) and one.mean == pytest.approx(three.mean, abs=1e-5)
    assert len({round(s.mean, 6) for s in alone}) == len(PAIRS)  # distinct scores: a swap would show


def test_the_whole_forward_pass_gives_the_same_scores_when_the_head_cannot_be_split(gpt2_path: Path,
                                                                                     monkeypatch) -> None:
    monkeypatch.setattr(gptscore_hf, "_split_head", lambda torch, model, device: None)
    scorer = HFScorer(str(gpt2_path), device="cpu", precision="fp32", batch_tokens=SMALL_BUDGET)
    assert scorer._split is None
    for (context, text), got in zip(PAIRS, scorer.score(PAIRS), strict=True):
        assert got.mean == pytest.approx(reference_decoder(gpt2_path, context, text), abs=1e-5)


def test_encoder_decoder_scores_equal_the_fp32_reference(t5_path: Path) -> None:
    scorer = HFScorer(str(t5_path), device="cpu", batch_tokens=SMALL_BUDGET)
    assert scorer.encoder_decoder and scorer.precision == "fp32"
    scores = scorer.score(PAIRS)
    for (context, text), got in zip(PAIRS, scores, strict=True):
        assert got.mean == pytest.approx(reference_seq2seq(t5_path, context, text), abs=1e-5)
    assert [s.tokens for s in scores] == [s.tokens for s in (scorer.score([p])[0] for p in PAIRS)]


@pytest.mark.parametrize("model", ["gpt2", "t5"])
def test_bf16_runs_in_bf16_and_stays_near_fp32(model: str, gpt2_path: Path, t5_path: Path) -> None:
    path = gpt2_path if model == "gpt2" else t5_path
    half = HFScorer(str(path), device="cpu", precision="bf16", batch_tokens=SMALL_BUDGET)
    full = HFScorer(str(path), device="cpu", precision="fp32", batch_tokens=SMALL_BUDGET)
    assert half.model.dtype == torch.bfloat16 and full.model.dtype == torch.float32
    low, high = half.score(PAIRS), full.score(PAIRS)
    differences = [abs(a.mean - b.mean) for a, b in zip(low, high, strict=True)]
    assert max(differences) < 0.05  # a random tiny model: bf16's 8-bit mantissa, a few thousandths per step
    assert max(differences) > 0  # it did compute in bf16


def test_auto_keeps_the_checkpoints_precision_on_the_cpu(gpt2_path: Path) -> None:
    assert HFScorer(str(gpt2_path), device="cpu").precision == "fp32"


def test_a_model_larger_than_the_free_memory_is_refused_before_loading(gpt2_path: Path, monkeypatch) -> None:
    loads: list[str] = []
    real = transformers.AutoModelForCausalLM.from_pretrained
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained",
                        lambda *a, **k: loads.append("loaded") or real(*a, **k))
    weights = HFScorer(str(gpt2_path), device="cpu", precision="fp32").parameters * 4
    loads.clear()
    monkeypatch.setattr(gptscore_hf, "free_memory", lambda device: weights // 2)
    with pytest.raises(ComparisonError, match=r"needs about .* GiB on cpu in fp32 .* but 0.00 GiB is free"):
        HFScorer(str(gpt2_path), device="cpu", precision="fp32")
    assert loads == []  # refused before a weight was read
    monkeypatch.setattr(gptscore_hf, "free_memory", lambda device: 2**34)
    HFScorer(str(gpt2_path), device="cpu", precision="fp32")
    assert loads == ["loaded"]


def test_a_text_longer_than_the_model_takes_is_a_clear_error(gpt2_path: Path) -> None:
    with pytest.raises(ComparisonError, match="exceed the model's 1024 positions"):
        HFScorer(str(gpt2_path), device="cpu").score([("Context:", " word" * 1100)])


def test_an_empty_text_is_refused(gpt2_path: Path) -> None:
    with pytest.raises(ComparisonError, match="no text to score"):
        HFScorer(str(gpt2_path), device="cpu").score([("Context:", "")])


def test_a_missing_model_is_a_clear_error_without_any_download(tmp_path: Path) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    with pytest.raises(ComparisonError, match="cannot load the model"):
        HFScorer(str(tmp_path / "no-such-model"))


def test_a_score_that_is_not_a_number_is_refused_not_stored(gpt2_path: Path, tmp_path: Path) -> None:
    """What fp16 overflow gives (T5 in fp16): the scorer says so instead of handing back NaN."""
    import shutil

    broken = tmp_path / "overflowing"
    shutil.copytree(gpt2_path, broken)
    model = transformers.AutoModelForCausalLM.from_pretrained(broken)
    with torch.no_grad():
        model.transformer.ln_f.weight.fill_(float("inf"))
    model.save_pretrained(broken)
    with pytest.raises(ComparisonError, match="not a number in fp32: .*; use bf16 or fp32"):
        HFScorer(str(broken), device="cpu").score(PAIRS[:1])
