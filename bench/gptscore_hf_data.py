"""The GPTScore bench's material, made here: items (a compact RotoWire box score and a summary, or generated ones
when the shared data is absent) and a random GPT-2-shaped model with a BPE tokenizer trained on those texts."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

ASPECTS = ("accuracy", "fluency", "coherence", "relevance")
PLAYERS_SHOWN = 10  # the box score's top scorers: keeps a pair near the issue's ~540 tokens, under 1024 positions


def _rotowire(repo: Path) -> list[dict] | None:
    root = Path(os.environ.get("SPANJUDGE_DATA") or repo.parent / "shared" / "data")
    path = root / "rotowire" / "train.jsonl"
    if not path.exists():
        return None
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _number(value: object) -> int:
    """A box-score figure; players who did not play have `N/A`."""
    return int(value) if str(value).isdigit() else 0


def _box_text(data: dict) -> str:
    """A box score as compact lines: each team's line, then its best scorers."""
    lines = []
    for side in ("home", "vis"):
        team = data[f"{side}_line"]
        lines.append(f"{team['TEAM-CITY']} {team['TEAM-NAME']}: {team['TEAM-PTS']} points, {team['TEAM-REB']} "
                     f"rebounds, {team['TEAM-AST']} assists, FG {team['TEAM-FG_PCT']}%, record "
                     f"{team['TEAM-WINS']}-{team['TEAM-LOSSES']}")
    players = sorted(data.get("box_score", []), key=lambda p: -_number(p.get("PTS")))[:PLAYERS_SHOWN]
    for p in players:
        lines.append(f"{p['PLAYER_NAME']} ({p['TEAM_CITY']}): {p['PTS']} pts, {p['REB']} reb, {p['AST']} ast, "
                     f"{p['FGM']}-{p['FGA']} FG, {p['MIN']} min")
    return "\n".join(lines)


def _generated(n: int) -> list[tuple[str, str]]:
    """Box scores and summaries made from a seeded generator, for machines without the shared data."""
    rng = random.Random(7)
    cities = ["Harbor", "Quarry", "Ridge", "Delta", "Summit", "Canyon", "Prairie", "Lakeside"]
    names = ["Gulls", "Hawks", "Rams", "Otters", "Foxes", "Bears", "Comets", "Pines"]
    first = ["Orla", "Kim", "Tarik", "Luol", "Zoe", "Ivo", "Mara", "Jalen", "Noor", "Ada"]
    last = ["Venn", "Okafor", "Deng", "Silva", "Marsh", "Ibsen", "Cole", "Reyes", "Abara", "Lind"]
    out = []
    for _ in range(n):
        a, b = rng.sample(range(len(cities)), 2)
        pa, pb = rng.randint(85, 130), rng.randint(85, 130)
        lines = [f"{cities[a]} {names[a]}: {pa} points, {rng.randint(35, 55)} rebounds, record {rng.randint(5, 40)}-"
                 f"{rng.randint(5, 40)}", f"{cities[b]} {names[b]}: {pb} points, {rng.randint(35, 55)} rebounds"]
        players = [(f"{rng.choice(first)} {rng.choice(last)}", rng.randint(2, 38)) for _ in range(PLAYERS_SHOWN)]
        lines += [f"{p}: {pts} pts, {rng.randint(0, 14)} reb, {rng.randint(0, 11)} ast" for p, pts in players]
        winner, loser = (a, b) if pa > pb else (b, a)
        star = max(players, key=lambda p: p[1])
        day = rng.choice(["Monday", "Friday", "Sunday"])
        story = [f"The {names[winner]} beat the {names[loser]} {max(pa, pb)}-{min(pa, pb)} on {day}."]
        story += [f"{p} scored {pts} points {rng.choice(['off the bench', 'late', 'in a starting role'])}."
                  for p, pts in rng.sample(players, 6)]
        story.append(f"{star[0]} led everyone with {star[1]} points, and the {names[loser]} fell to a long road trip.")
        out.append(("\n".join(lines), " ".join(story)))
    return out


def bench_items(n_items: int, repo: Path) -> tuple[list[dict], str]:
    """`n_items` items in the import format, each with its own (box score, summary) pairing and human scores."""
    rows = _rotowire(repo)
    if rows:
        source = "rotowire/train.jsonl"
        boxes = [_box_text(json.loads(r["inputs"]["Data"])) for r in rows]
        summaries = [next(iter(r["outputs"].values())) for r in rows]
        k = len(rows)
        pairs = [(boxes[i % k], summaries[(i // k + i) % k]) for i in range(n_items)]  # no pairing twice
    else:
        source = "generated texts (no shared data)"
        pairs = _generated(n_items)
    rng = random.Random(11)
    items = [{"id": f"b{i}", "inputs": {"Data": box}, "outputs": {"Summary": summary}, "system": f"s{i % 4}",
              "score": {aspect: rng.randint(1, 5) for aspect in ASPECTS}} for i, (box, summary) in enumerate(pairs)]
    return items, source


def build_model(folder: Path, items: list[dict], *, layers: int, hidden: int, vocab: int) -> tuple[Path, int]:
    """Save a byte-level BPE tokenizer trained on the items' texts and a random GPT-2 of that shape; return the
    folder and the parameter count."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    texts = [t for item in items for t in (*item["inputs"].values(), *item["outputs"].values())]
    tok.train_from_iterator(texts * 2, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                                bos_token="<|endoftext|>")
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=vocab, n_positions=1024, n_embd=hidden, n_layer=layers,
                                     n_head=max(1, hidden // 64), bos_token_id=fast.eos_token_id,
                                     eos_token_id=fast.eos_token_id)
    model = transformers.GPT2LMHeadModel(config)
    model.save_pretrained(folder)
    return folder, sum(p.numel() for p in model.parameters())
