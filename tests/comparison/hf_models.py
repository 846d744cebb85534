"""Tiny random transformers models saved in a folder (no download), loaded by path like a real model, and the
straightforward computation of GPTScore the local scorer must agree with."""

from __future__ import annotations

from pathlib import Path

import torch
import transformers

CORPUS = [
    "The Harbor Gulls beat the Quarry Hawks 102-99 on Saturday night.",
    "Orla Venn scored 27 points and Kim grabbed nine rebounds.",
    "Write a summary that is excellent in fluency.\nSummary:\n",
    "Zoë said the bridge was old, not unsafe.",
]


def tokenizer(folder: Path, **special: str) -> transformers.PreTrainedTokenizerFast:
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


def save_gpt2(folder: Path) -> Path:
    tok = tokenizer(folder, eos_token="</s>", bos_token="<s>")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(tok), n_positions=1024, n_embd=32, n_layer=2, n_head=2,
                                     bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


def save_t5(folder: Path) -> Path:
    tok = tokenizer(folder, eos_token="</s>", pad_token="<pad>")
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=2,
                                   decoder_start_token_id=tok.pad_token_id, pad_token_id=tok.pad_token_id,
                                   eos_token_id=tok.eos_token_id)
    transformers.T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def reference_decoder(path: Path, context: str, text: str) -> float:
    """One unpadded sequence in fp32: log_softmax over the whole vocabulary at every position, then a Python
    loop picks the tokens whose character span ends past the context."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    enc = tok(context + text, return_offsets_mapping=True)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    with torch.no_grad():
        logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
    values = [logprobs[i - 1, ids[i]].item() for i in range(1, len(ids))
              if offsets[i][1] > offsets[i][0] and offsets[i][1] > len(context)]
    return sum(values) / len(values)


def reference_seq2seq(path: Path, context: str, text: str) -> float:
    """The context in the encoder, the text (and EOS) as the decoder's labels; log_softmax, then each label's."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(path, dtype=torch.float32).eval()
    source = tok(context, return_tensors="pt")
    ids = tok(text)["input_ids"]
    labels = torch.tensor([ids if ids[-1] == tok.eos_token_id else [*ids, tok.eos_token_id]])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(**source, labels=labels).logits[0].float(), dim=-1)
    values = [logprobs[i, labels[0, i]].item() for i in range(labels.shape[1])]
    return sum(values) / len(values)
