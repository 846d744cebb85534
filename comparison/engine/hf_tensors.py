"""The tensor arithmetic of the local GPTScore scorer: which tokens are the text's, and their log-probabilities.

Imported only once torch is known to be there (gptscore_hf builds a scorer); every function works on whole
tensors, never on one token at a time.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

LOGIT_VALUES = 2**25  # fp32 logits per chunk (128 MiB): bounds the vocabulary-wide working set


def chunk_rows(vocab: int) -> int:
    """How many positions' logits one chunk holds, for a vocabulary of `vocab` entries."""
    return max(1, LOGIT_VALUES // max(1, vocab))


def text_window(offsets: torch.Tensor, lengths: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
    """Return (rows, length) booleans: the real tokens whose characters reach past the context.

    `offsets` are the tokenizer's (start, end) character spans of `context + text`, right-padded; `lengths`
    the real tokens per row; `context` the context's characters per row. A special token (BOS, EOS) has an
    empty span and is never the text's; a token merged across the boundary is (it carries text)."""
    start, end = offsets[..., 0], offsets[..., 1]
    real = torch.arange(offsets.shape[1])[None, :] < lengths[:, None]
    return real & (end > start) & (end > context[:, None])


def target_logprobs(rows: torch.Tensor, where: torch.Tensor, targets: torch.Tensor, *, chunk: int,
                    project: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """Return log p(target) at the positions `where` of `rows` (N, width), in fp32.

    `rows` are logits, or hidden states that `project` turns into logits (then only the chosen positions
    are projected). Each chunk of positions becomes fp32 logits once: the target's logit minus the
    logsumexp, which is log_softmax at one entry without writing the whole vocabulary's log-probabilities."""
    out = torch.empty(len(where), dtype=torch.float32, device=rows.device)
    for start in range(0, len(where), chunk):
        picked = rows.index_select(0, where[start : start + chunk])
        logits = (project(picked) if project is not None else picked).float()
        wanted = targets[start : start + chunk]
        out[start : start + chunk] = logits.gather(1, wanted[:, None]).squeeze(1) - torch.logsumexp(logits, dim=1)
    return out


def row_means(chosen: torch.Tensor, logprobs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row of `chosen` (rows, length): the mean of its log-probabilities and how many there are.

    `logprobs` lists the chosen positions in row-major order, as `chosen.nonzero()` does; rows without one
    get a count of 0 (and a mean the caller must not use)."""
    counts = chosen.sum(dim=1)
    owner = chosen.nonzero()[:, 0]
    sums = torch.zeros(chosen.shape[0], dtype=torch.float64).index_add_(0, owner, logprobs.double())
    return sums / counts.clamp(min=1), counts
