"""GPTScore on a local model with transformers: the mean log-probability of an output's tokens given its context.

For models no server can echo (or no server at all): decoder models (GPT-2, OPT, GPT-J, Llama) score
`context + text` and average over the tokens that cover `text` (found by the tokenizer's character
offsets, so a BOS token or a merged boundary never shifts the window); encoder-decoder models (FLAN-T5,
as in the GPTScore paper) read the context in the encoder and score the text as the decoder's target,
end-of-sequence token included as the paper's code does.

Speed comes from doing only the arithmetic the score needs: pairs sorted by length and packed up to a token
budget (little padding), SDPA attention, a half precision on GPUs that have it (hf_plan.resolve_precision),
and log-probabilities as the target's logit minus the logsumexp, in fp32 on chunks of rows, for the text's
positions only (a decoder's context positions never reach the vocabulary projection). torch and transformers
are imported only when a scorer is built.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from comparison.engine.errors import ComparisonError
from comparison.engine.hf_plan import (
    Precision,
    default_batch_tokens,
    memory_need,
    pack_batches,
    refuse_unless_fits,
    resolve_precision,
    saved_precision,
)

DTYPES = {Precision.FP32: "float32", Precision.BF16: "bfloat16", Precision.FP16: "float16"}


@dataclass(frozen=True)
class HFScore:
    mean: float
    tokens: int


def _libraries() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:  # an optional, heavy dependency
        raise ComparisonError(f"gptscore-hf needs torch and transformers ({exc}); see requirements-hf.txt") from None
    return torch, transformers


def _tensors() -> Any:
    _libraries()
    from comparison.engine import hf_tensors  # imports torch: only once a scorer is built

    return hf_tensors


def _config(name_or_path: str) -> Any:
    _, transformers = _libraries()
    try:
        return transformers.AutoConfig.from_pretrained(name_or_path)
    except (OSError, ValueError) as exc:
        raise ComparisonError(f"cannot load the model {name_or_path!r} for gptscore-hf: {exc}") from None


def local_device() -> str:
    torch, _ = _libraries()
    return "cuda" if torch.cuda.is_available() else "cpu"


def _bf16_supported(device: str) -> bool:
    torch, _ = _libraries()
    return device.startswith("cuda") and torch.cuda.is_bf16_supported()


def scorer_precision(name_or_path: str, requested: str, *, device: str | None = None) -> Precision:
    """The precision a scorer of this model would compute in on this machine (reads the config only)."""
    return _precision_for(_config(name_or_path), requested, device or local_device())


def _precision_for(config: Any, requested: str, device: str) -> Precision:
    return resolve_precision(requested, gpu=device.startswith("cuda"), bf16_supported=_bf16_supported(device),
                             encoder_decoder=bool(config.is_encoder_decoder),
                             saved=saved_precision(str(getattr(config, "dtype", None) or "") or None))


def free_memory(device: str) -> int | None:
    """Bytes free on `device`: the GPU's own figure, on the CPU Linux's MemAvailable (None when unknown)."""
    torch, _ = _libraries()
    if device.startswith("cuda"):
        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class HFScorer:
    """A loaded model and tokenizer; `score(pairs)` gives one HFScore per (context, text), in the pairs' order.

    The model's size is checked against the device's free memory before any weight is read, so a model
    that cannot fit is refused with the memory it needs instead of failing halfway."""

    def __init__(self, name_or_path: str, *, device: str | None = None, precision: str = "auto",
                 batch_tokens: int = 0) -> None:
        torch, transformers = _libraries()
        self._torch = torch
        self.name = name_or_path
        config = _config(name_or_path)
        self.device = device or local_device()
        gpu = self.device.startswith("cuda")
        self.encoder_decoder = bool(config.is_encoder_decoder)
        self.precision = _precision_for(config, precision, self.device)
        self.batch_tokens = default_batch_tokens(gpu=gpu, setting=batch_tokens)
        loader = transformers.AutoModelForSeq2SeqLM if self.encoder_decoder else transformers.AutoModelForCausalLM
        self.parameters = _parameter_count(torch, loader, config)
        vocab = int(getattr(config, "vocab_size", 0) or 0)
        hidden = int(getattr(config, "hidden_size", 0) or getattr(config, "d_model", 0) or 0)
        self._t = _tensors()
        self._logit_rows = self._t.chunk_rows(vocab)
        need = memory_need(parameters=self.parameters, precision=self.precision, batch_tokens=self.batch_tokens,
                           hidden=hidden, vocab=vocab, logit_rows=self._logit_rows)
        refuse_unless_fits(need, free_memory(self.device), model=name_or_path, device=self.device,
                           precision=self.precision)
        self.model, self.attention = _load(loader, name_or_path, getattr(torch, DTYPES[self.precision]))
        self.tokenizer = _tokenizer(transformers, name_or_path)
        self.model.to(self.device).eval()
        self.limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        self._split = None if self.encoder_decoder else _split_head(torch, self.model, self.device)
        self.peak_memory: int | None = None  # bytes of GPU memory at the busiest moment of the last score()
        self.last_tokens = 0  # tokens the model read in the last score() (contexts included, padding not)

    def score(self, pairs: Sequence[tuple[str, str]], *,
              on_batch: Callable[[int], None] | None = None) -> list[HFScore]:
        """Score every pair; `on_batch(done)` after each batch (a heartbeat for long work)."""
        if any(not text for _, text in pairs):
            raise ComparisonError("gptscore-hf: there is no text to score")
        torch = self._torch
        gpu = self.device.startswith("cuda")
        if gpu:
            torch.cuda.reset_peak_memory_stats(self.device)
        out: list[HFScore | None] = [None] * len(pairs)
        self.last_tokens = 0
        with torch.inference_mode():
            if self.encoder_decoder:
                self._seq2seq(pairs, out, on_batch)
            else:
                self._decoder(pairs, out, on_batch)
        if gpu:
            self.peak_memory = int(torch.cuda.max_memory_allocated(self.device))
        return [score for score in out if score is not None]  # _file filled every place or raised

    # --- decoder models ---------------------------------------------------------------------------------
    def _decoder(self, pairs: Sequence[tuple[str, str]], out: list[HFScore | None],
                 on_batch: Callable[[int], None] | None) -> None:
        torch = self._torch
        enc = self.tokenizer([c + t for c, t in pairs], return_offsets_mapping=True)
        ids, offsets = enc["input_ids"], enc["offset_mapping"]
        longest = max(len(row) for row in ids)
        if self.limit and longest > self.limit:
            raise ComparisonError(f"gptscore-hf: a context and output of {longest} tokens exceed the model's "
                                  f"{self.limit} positions")
        pad = self.tokenizer.pad_token_id
        done = 0
        for batch in pack_batches([[len(row)] for row in ids], self.batch_tokens):
            input_ids = _padded(torch, [ids[i] for i in batch], pad)
            spans = _padded(torch, [offsets[i] for i in batch], 0)  # (rows, length, 2); pads are empty spans
            lengths = torch.tensor([len(ids[i]) for i in batch])
            context = torch.tensor([len(pairs[i][0]) for i in batch])
            chosen = self._t.text_window(spans, lengths, context)[:, 1:]  # token i is predicted at position i - 1
            predicting = torch.zeros(input_ids.shape, dtype=torch.bool)
            predicting[:, :-1] = chosen
            attention = (torch.arange(input_ids.shape[1])[None, :] < lengths[:, None]).long()
            targets = input_ids[:, 1:][chosen].to(self.device)
            where = predicting.reshape(-1).nonzero().squeeze(1).to(self.device)
            input_ids, attention = input_ids.to(self.device), attention.to(self.device)
            if self._split is not None:
                body, head = self._split
                hidden = body(input_ids=input_ids, attention_mask=attention).last_hidden_state
                logprobs = self._t.target_logprobs(hidden.reshape(-1, hidden.shape[-1]), where, targets,
                                                   project=head, chunk=self._logit_rows)
            else:
                logits = self.model(input_ids=input_ids, attention_mask=attention).logits
                logprobs = self._t.target_logprobs(logits.reshape(-1, logits.shape[-1]), where, targets,
                                                   chunk=self._logit_rows)
            self._file(batch, chosen, logprobs, out)
            self.last_tokens += int(lengths.sum())
            done += len(batch)
            if on_batch is not None:
                on_batch(done)

    # --- encoder-decoder models -------------------------------------------------------------------------
    def _seq2seq(self, pairs: Sequence[tuple[str, str]], out: list[HFScore | None],
                 on_batch: Callable[[int], None] | None) -> None:
        torch = self._torch
        sources = self.tokenizer([c for c, _ in pairs])["input_ids"]
        eos = self.tokenizer.eos_token_id
        targets = self.tokenizer(text_target=[t for _, t in pairs])["input_ids"]
        targets = [ids if eos is None or (ids and ids[-1] == eos) else [*ids, eos] for ids in targets]
        pad = self.tokenizer.pad_token_id
        done = 0
        for batch in pack_batches([[len(sources[i]), len(targets[i])] for i in range(len(pairs))],
                                  self.batch_tokens):
            source = _padded(torch, [sources[i] for i in batch], pad)
            source_lengths = torch.tensor([len(sources[i]) for i in batch])
            attention = (torch.arange(source.shape[1])[None, :] < source_lengths[:, None]).long()
            labels = _padded(torch, [targets[i] for i in batch], pad)
            lengths = torch.tensor([len(targets[i]) for i in batch])
            chosen = torch.arange(labels.shape[1])[None, :] < lengths[:, None]
            labels = labels.to(self.device)
            decoder_ids = _decoder_inputs(self.model, labels.masked_fill(~chosen.to(self.device), -100))
            logits = self.model(input_ids=source.to(self.device), attention_mask=attention.to(self.device),
                                decoder_input_ids=decoder_ids).logits
            where = chosen.reshape(-1).nonzero().squeeze(1).to(self.device)
            logprobs = self._t.target_logprobs(logits.reshape(-1, logits.shape[-1]), where,
                                               labels[chosen.to(self.device)], chunk=self._logit_rows)
            self._file(batch, chosen, logprobs, out)
            self.last_tokens += int(source_lengths.sum() + lengths.sum())
            done += len(batch)
            if on_batch is not None:
                on_batch(done)

    def _file(self, batch: list[int], chosen: Any, logprobs: Any, out: list[HFScore | None]) -> None:
        """Put each row's mean where its pair was: batches run in length order, answers in the caller's."""
        means, counts = self._t.row_means(chosen, logprobs.cpu())
        for row, index in enumerate(batch):
            if int(counts[row]) == 0:
                raise ComparisonError("gptscore-hf: the text gave no token to score")
            if not math.isfinite(float(means[row])):
                raise ComparisonError(f"gptscore-hf: a score is not a number in {self.precision}: the model's "
                                      "values overflow (T5's do in fp16); use bf16 or fp32")
            out[index] = HFScore(float(means[row]), int(counts[row]))


def _parameter_count(torch: Any, loader: Any, config: Any) -> int:
    """The model's parameters, counted on a skeleton without memory (the meta device): nothing is read yet."""
    with torch.device("meta"):
        skeleton = loader.from_config(config)
    return sum(p.numel() for p in skeleton.parameters())


def _load(loader: Any, name_or_path: str, dtype: Any) -> tuple[Any, str]:
    """Load in `dtype` with SDPA attention, or the model's own attention where it has no SDPA path."""
    try:
        return loader.from_pretrained(name_or_path, dtype=dtype, attn_implementation="sdpa"), "sdpa"
    except ValueError:
        pass  # no SDPA path in this architecture (or another problem, which the plain load reports)
    try:
        model = loader.from_pretrained(name_or_path, dtype=dtype)
    except (OSError, ValueError) as exc:
        raise ComparisonError(f"cannot load the model {name_or_path!r} for gptscore-hf: {exc}") from None
    return model, str(getattr(model.config, "_attn_implementation", "") or "eager")


def _tokenizer(transformers: Any, name_or_path: str) -> Any:
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(name_or_path)
    except (OSError, ValueError) as exc:
        raise ComparisonError(f"cannot load the tokenizer of {name_or_path!r} for gptscore-hf: {exc}") from None
    if not tokenizer.is_fast:
        raise ComparisonError(f"gptscore-hf needs a fast tokenizer (character offsets) for {name_or_path!r}")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    return tokenizer


def _padded(torch: Any, rows: list[list[Any]], value: int) -> Any:
    """Right-padded tensor of ragged rows (positions count from each row's first real token)."""
    return torch.nn.utils.rnn.pad_sequence([torch.tensor(row) for row in rows], batch_first=True,
                                           padding_value=value)


def _decoder_inputs(model: Any, labels: Any) -> Any:
    """The decoder's inputs for `labels` (shifted right behind the start token), without computing a loss."""
    prepare = getattr(model, "prepare_decoder_input_ids_from_labels", None)
    if prepare is None:
        raise ComparisonError(f"gptscore-hf cannot build decoder inputs for {type(model).__name__}")
    return prepare(labels=labels)


def _split_head(torch: Any, model: Any, device: str) -> tuple[Any, Any] | None:
    """The model's body and its vocabulary projection, when the logits are exactly `head(body(x))`.

    Then only the positions that score the text go through the projection. Some models scale or cap the
    logits after it (Gemma's soft cap, Cohere's scale): a five-token check against the full forward pass
    finds those, and they keep the whole pass."""
    body, head = getattr(model, "base_model", None), model.get_output_embeddings()
    if body is None or body is model or head is None:
        return None
    probe = torch.arange(5, device=device)[None, :] % int(model.config.vocab_size)
    with torch.inference_mode():
        whole = model(input_ids=probe).logits.float()
        split = head(body(input_ids=probe).last_hidden_state).float()
    if whole.shape != split.shape or not torch.allclose(whole, split, rtol=1e-3, atol=1e-3):
        return None
    return body, head
