"""gptscore-hf: tiny random GPT-2 and T5 models built from configs in a temporary folder (no download), loaded
by path like a real model, and scored against a direct computation of the mean token log-probability."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.kinds import job_execute

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from comparison.engine.errors import ComparisonError  # noqa: E402
from comparison.engine.gptscore_hf import HFScorer  # noqa: E402

CORPUS = [
    "The Harbor Gulls beat the Quarry Hawks 102-99 on Saturday night.",
    "Orla Venn scored 27 points and Kim grabbed nine rebounds.",
    "Write a summary that is excellent in fluency.\nSummary:\n",
    "Zoë said the bridge was old, not unsafe.",
]
PAIRS = [
    ("Write a summary that is excellent in fluency.\nSummary:\n", "The Gulls beat the Hawks."),
    ("Task: summarise.\nSummary:\n", "Orla Venn scored 27 points and Kim grabbed nine rebounds on Saturday."),
    ("Context:", " Zoë said"),
]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def _tokenizer(folder: Path, **special: str) -> transformers.PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<pad>", "</s>", "<unk>", "<s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 3, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", **special)
    fast.save_pretrained(folder)
    return fast


@pytest.fixture(scope="module")
def gpt2_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    tok = _tokenizer(folder, eos_token="</s>", bos_token="<s>")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(tok), n_positions=1024, n_embd=32, n_layer=2, n_head=2)
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def t5_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-t5")
    tok = _tokenizer(folder, eos_token="</s>", pad_token="<pad>")
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=2,
                                   decoder_start_token_id=tok.pad_token_id, pad_token_id=tok.pad_token_id,
                                   eos_token_id=tok.eos_token_id)
    transformers.T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def _direct_decoder(path: Path, context: str, text: str) -> float:
    """One unpadded sequence, token by token: log p(token | everything before it) over the text's tokens."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    context_ids = tok(context)["input_ids"]
    ids = tok(context + text)["input_ids"]
    assert ids[: len(context_ids)] == context_ids  # the boundary falls between tokens in these examples
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
    values = [torch.log_softmax(logits[i - 1], -1)[ids[i]].item() for i in range(max(1, len(context_ids)), len(ids))]
    return sum(values) / len(values)


def _direct_seq2seq(path: Path, context: str, text: str) -> float:
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(path).eval()
    source = tok(context, return_tensors="pt")
    ids = tok(text)["input_ids"]
    labels = torch.tensor([ids if ids[-1] == tok.eos_token_id else [*ids, tok.eos_token_id]])
    with torch.no_grad():
        logits = model(**source, labels=labels).logits[0]
    values = [torch.log_softmax(logits[i], -1)[labels[0, i]].item() for i in range(labels.shape[1])]
    return sum(values) / len(values)


def test_decoder_model_scores_equal_the_direct_mean_token_logprob(gpt2_path: Path) -> None:
    scorer = HFScorer(str(gpt2_path), device="cpu", batch_size=2)  # batches of two: padding is exercised
    assert not scorer.encoder_decoder
    scores = scorer.score(PAIRS)
    for (context, text), got in zip(PAIRS, scores, strict=True):
        assert got.mean == pytest.approx(_direct_decoder(gpt2_path, context, text), abs=1e-5)
        assert got.tokens >= 1


def test_encoder_decoder_model_scores_equal_the_direct_mean_token_logprob(t5_path: Path) -> None:
    scorer = HFScorer(str(t5_path), device="cpu", batch_size=2)
    assert scorer.encoder_decoder
    scores = scorer.score(PAIRS)
    for (context, text), got in zip(PAIRS, scores, strict=True):
        assert got.mean == pytest.approx(_direct_seq2seq(t5_path, context, text), abs=1e-5)


def test_a_text_longer_than_the_model_takes_is_a_clear_error(gpt2_path: Path) -> None:
    with pytest.raises(ComparisonError, match="exceed the model's 1024 positions"):
        HFScorer(str(gpt2_path), device="cpu").score([("Context:", " word" * 1100)])


def test_a_missing_model_is_a_clear_error_without_any_download(tmp_path: Path) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    with pytest.raises(ComparisonError, match="cannot load the model"):
        HFScorer(str(tmp_path / "no-such-model"))


@pytest.mark.django_db(transaction=True)
def test_a_comparison_job_scores_gptscore_hf_locally_and_a_rerun_computes_nothing(gpt2_path: Path, summaries) -> None:
    from comparison.models import ComparisonJob, MetricScore
    from comparison.services.jobs import comparison_create
    from corpus.models import Item
    from evaluation.models import LLMCall
    from jobs.models import JobStatus

    metric = f"gptscore-hf:{gpt2_path}"
    job = comparison_create(dataset=summaries, metrics=f"{metric},length", gptscore_url="")
    assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE, ComparisonJob.objects.get(pk=job.pk).message
    items = list(Item.objects.filter(dataset=summaries))
    scores = {s.item_id: s.value for s in MetricScore.objects.filter(metric=metric)}
    assert set(scores) == {i.pk for i in items}
    audit = {c.prompt: c for c in LLMCall.objects.filter(model=str(gpt2_path))}
    assert len(audit) == len(items)
    for item in items:
        call = next(c for p, c in audit.items() if p.endswith(item.output))
        context = call.prompt[: call.options["scored_from"]]
        assert scores[item.pk] == pytest.approx(_direct_decoder(gpt2_path, context, item.output), abs=1e-5)
    again = comparison_create(dataset=summaries, metrics=metric, gptscore_url="")
    assert job_execute(ComparisonJob, again.pk) == JobStatus.DONE
    assert ComparisonJob.objects.get(pk=again.pk).llm_calls == 0
