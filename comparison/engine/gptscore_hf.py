"""GPTScore on a local model with transformers: the mean log-probability of an output's tokens given its context.

For models no server can echo (or no server at all): decoder models (GPT-2, OPT, GPT-J, Llama) score
`context + text` and average over the tokens that cover `text` (found by the tokenizer's character
offsets, so a BOS token or a merged boundary never shifts the window); encoder-decoder models (FLAN-T5,
as in the GPTScore paper) read the context in the encoder and score the text as the decoder's target,
end-of-sequence token included as the paper's code does. Work goes in padded batches, on CUDA when torch
sees a GPU, else on the CPU. torch and transformers are imported only when a scorer is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from comparison.engine.errors import ComparisonError

DEFAULT_BATCH = 8


@dataclass(frozen=True)
class HFScore:
    mean: float
    tokens: int


class HFScorer:
    """A loaded model and tokenizer; `score(pairs)` gives one HFScore per (context, text)."""

    def __init__(self, name_or_path: str, *, device: str | None = None, batch_size: int = DEFAULT_BATCH) -> None:
        try:
            import torch
            from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer
        except ImportError as exc:  # an optional, heavy dependency
            raise ComparisonError(
                f"gptscore-hf needs torch and transformers ({exc}); see requirements-hf.txt"
            ) from None
        self._torch = torch
        try:
            config = AutoConfig.from_pretrained(name_or_path)
            self.tokenizer = AutoTokenizer.from_pretrained(name_or_path)
            loader = AutoModelForSeq2SeqLM if config.is_encoder_decoder else AutoModelForCausalLM
            self.model = loader.from_pretrained(name_or_path)
        except (OSError, ValueError) as exc:
            raise ComparisonError(f"cannot load the model {name_or_path!r} for gptscore-hf: {exc}") from None
        self.encoder_decoder = bool(config.is_encoder_decoder)
        if not self.tokenizer.is_fast:
            raise ComparisonError(f"gptscore-hf needs a fast tokenizer (character offsets) for {name_or_path!r}")
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        self.tokenizer.padding_side = "right"  # positions count from the first real token
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.batch_size = max(1, batch_size)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[HFScore]:
        out: list[HFScore] = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = list(pairs[start : start + self.batch_size])
            if any(not text for _, text in chunk):
                raise ComparisonError("gptscore-hf: there is no text to score")
            with self._torch.inference_mode():
                out += self._seq2seq(chunk) if self.encoder_decoder else self._decoder(chunk)
        return out

    def _decoder(self, chunk: list[tuple[str, str]]) -> list[HFScore]:
        torch = self._torch
        enc = self.tokenizer([c + t for c, t in chunk], return_offsets_mapping=True, padding=True,
                             return_tensors="pt")
        offsets = enc.pop("offset_mapping")
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit and enc["input_ids"].shape[1] > limit:
            longest = int(enc["attention_mask"].sum(dim=1).max())
            raise ComparisonError(f"gptscore-hf: a context and output of {longest} tokens exceed the model's "
                                  f"{limit} positions")
        batch = {k: v.to(self.device) for k, v in enc.items()}
        logits = self.model(**batch).logits.float()
        logprobs = torch.log_softmax(logits[:, :-1], dim=-1)
        targets = batch["input_ids"][:, 1:]
        picked = logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).cpu()
        mask = batch["attention_mask"].cpu()
        scores = []
        for row, (context, _) in enumerate(chunk):
            # a token is the text's when it ends past the context (special tokens have empty offsets)
            values = [float(picked[row, i - 1]) for i in range(1, offsets.shape[1])
                      if mask[row, i] and offsets[row, i, 1] > offsets[row, i, 0] and offsets[row, i, 1] > len(context)]
            if not values:
                raise ComparisonError("gptscore-hf: the text gave no token to score")
            scores.append(HFScore(sum(values) / len(values), len(values)))
        return scores

    def _seq2seq(self, chunk: list[tuple[str, str]]) -> list[HFScore]:
        torch = self._torch
        source = self.tokenizer([c for c, _ in chunk], padding=True, return_tensors="pt")
        eos = self.tokenizer.eos_token_id
        targets = [list(self.tokenizer(text_target=t)["input_ids"]) for _, t in chunk]
        targets = [ids if eos is None or (ids and ids[-1] == eos) else [*ids, eos] for ids in targets]
        width = max(len(ids) for ids in targets)
        labels = torch.tensor([ids + [-100] * (width - len(ids)) for ids in targets])
        batch: dict[str, Any] = {k: v.to(self.device) for k, v in source.items()}
        logits = self.model(**batch, labels=labels.to(self.device)).logits.float()
        logprobs = torch.log_softmax(logits, dim=-1)
        safe = labels.clamp(min=0).to(self.device)
        picked = logprobs.gather(-1, safe.unsqueeze(-1)).squeeze(-1).cpu()
        keep = labels != -100
        return [HFScore(float(picked[row][keep[row]].mean()), int(keep[row].sum())) for row in range(len(chunk))]
