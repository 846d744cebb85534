"""In-process log-probabilities of a text after a context, from `llama_cpp.Llama`'s own logits: the reference the
server's echoed log-probabilities are checked against.

It runs in the server's virtualenv (which has llama_cpp; the app's does not), reads one JSON request on stdin,
`{"model", "context", "text", "n_ctx"}`, and writes `{"tokens", "logprobs"}` for the text's tokens. The text's
tokens are those after the context's own tokenization, so the context must end where a token ends (a newline).
"""

from __future__ import annotations

import json
import sys

import numpy as np
from llama_cpp import Llama


def main() -> None:
    request = json.load(sys.stdin)
    llm = Llama(model_path=request["model"], n_ctx=request["n_ctx"], logits_all=True, verbose=False)
    context, text = request["context"], request["text"]
    # As the server tokenizes a completion prompt: special tokens read as such, a BOS where the model wants one.
    head = llm.tokenize(context.encode(), add_bos=True, special=True)
    whole = llm.tokenize((context + text).encode(), add_bos=True, special=True)
    if whole[: len(head)] != head:
        sys.exit("the context's tokens are not a prefix of the prompt's: end the context with a newline")
    llm.eval(whole)
    logits = np.asarray(llm.scores[: len(whole)], dtype=np.float64)  # row i: the distribution of token i + 1
    shifted = logits - logits.max(axis=1, keepdims=True)
    logprobs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    picked = range(max(len(head), 1), len(whole))
    json.dump({"tokens": [llm.detokenize([whole[i]]).decode(errors="replace") for i in picked],
               "logprobs": [float(logprobs[i - 1, whole[i]]) for i in picked],
               "bos": llm.token_bos(), "first": whole[0]}, sys.stdout)


if __name__ == "__main__":
    main()
