"""Benchmark: GPTScore on a local model through a comparison job (`gptscore-hf:MODEL`, the path users take).

Builds a random GPT-2-shaped model and a byte-level BPE tokenizer trained on the texts (no download; the
weights' values do not change the arithmetic), imports N/4 items (a RotoWire box score as the input, a
summary as the output, four aspects with made-up human scores, so N GPTScore pairs) and runs one comparison
job per precision with `job_execute` (the code a worker runs), each in a fresh process. Prints, per run, the
job's wall time and tokens/s (contexts and texts; model load and storing included) beside the FLOP bound
(2 x parameters x tokens at the device's matmul peak, measured here in the run's dtype), the peak memory, and
the largest difference from a straightforward fp32 reference (log_softmax over the vocabulary, one unpadded
pair at a time). Targets: fp32 within 1e-5 of the reference, bf16 within 5e-3; on a GPU >= 200k tokens/s
for the 311M model; on the CPU not slower than the code it replaces.

`--against DIR` runs the same fp32 job on another checkout's code (e.g. the branch point:
`git archive $(git merge-base HEAD main) | tar -x -C /tmp/base`) and prints the speed-up beside it;
`--repeat K` alternates the jobs K times and compares the best of each (other work on the machine then falls on
both alike). On a CPU a bf16 or fp16 job scores 2 items (8 pairs) only: without native bf16 (no AVX512-BF16)
it is several times slower than fp32, and only its agreement is a target there.

Texts: ../shared/data/rotowire/train.jsonl (or $SPANJUDGE_DATA/rotowire/train.jsonl); without it, generated
box scores and summaries. Sizes: on the CPU a 6-layer model (384 wide) and 64 pairs; on a GPU 24 layers,
1024 wide, 512 pairs (311M parameters with the 8k vocabulary).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/gptscore_hf.py \
        [--pairs N] [--layers L] [--hidden H] [--precisions fp32,bf16] [--against DIR] [--repeat K]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)  # DEBUG is off: the settings want a key
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_bench")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ASPECTS = ("accuracy", "fluency", "coherence", "relevance")
AGREEMENT = {"fp32": 1e-5, "bf16": 5e-3, "fp16": 5e-3}
GPU_TARGET_TPS = 200_000
VOCAB = 8192
CPU_HALF_ITEMS = 2  # items (x 4 aspects) a bf16 or fp16 job scores on a CPU
SHOWN = ("precision", "batch_tokens", "attention")  # what the job recorded, printed beside each run


def main() -> int:
    args = _arguments()
    if args.child:
        return _child(args)
    import torch

    if args.against and not (Path(args.against) / "manage.py").exists():
        raise SystemExit(f"--against {args.against}: no checkout there (no manage.py)")
    gpu = torch.cuda.is_available()
    pairs = args.pairs or (512 if gpu else 64)
    layers, hidden = args.layers or (24 if gpu else 6), args.hidden or (1024 if gpu else 384)
    sys.path.insert(0, str(REPO))
    from bench.gptscore_hf_data import bench_items, build_model

    work = Path(args.work or tempfile.mkdtemp(prefix="gptscore-hf-bench-"))
    texts, source = bench_items(pairs // len(ASPECTS), REPO)
    model, parameters = build_model(work / "model", texts, layers=layers, hidden=hidden, vocab=VOCAB)
    data = work / "items.json"
    data.write_text(json.dumps(texts))
    # bf16 without native support (a CPU without AVX512-BF16) is several times slower than fp32: there it
    # scores a few items only, enough to measure its agreement, and its speed is not a target
    few = work / "items-few.json"
    few.write_text(json.dumps(texts[:CPU_HALF_ITEMS]))
    _migrate()
    device = torch.cuda.get_device_name() if gpu else f"cpu ({os.cpu_count()} cores)"
    print(f"GPTScore through a comparison job: {len(texts) * len(ASPECTS)} pairs ({len(texts)} items x "
          f"{len(ASPECTS)} aspects, texts from {source}); GPT-2-shaped random model, {layers} layers x {hidden}, "
          f"vocabulary {VOCAB}, {parameters / 1e6:.1f}M parameters; {device}")
    runs = []
    for _ in range(args.repeat):  # old and new alternate, so load from other work falls on both alike
        runs += [("this tree", REPO, p, data if gpu or p == "fp32" else few) for p in args.precisions.split(",")]
        if args.against:
            runs.append(("other tree", Path(args.against).resolve(), "fp32", data))
    results = []
    for index, (label, tree, precision, items) in enumerate(runs):
        copy = work / f"model-{index}"  # its own path: the call cache never answers one run from another
        if not copy.exists():
            copy.symlink_to(model, target_is_directory=True)
        load = os.getloadavg()[0]
        results.append((label, precision, load, _run_child(tree, copy, items, precision)))
    reference = _reference(model, [pair for *_, run in results for pair in run["pairs"]])
    return _report(results, reference, parameters, gpu, args.against)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=0, help="GPTScore pairs (default 64 on the CPU, 512 on a GPU)")
    parser.add_argument("--layers", type=int, default=0)
    parser.add_argument("--hidden", type=int, default=0)
    parser.add_argument("--precisions", default="fp32,bf16", help="one job per precision, in this order")
    parser.add_argument("--against", default="", help="another checkout whose code runs the same fp32 job")
    parser.add_argument("--repeat", type=int, default=1, help="run every job this often (the best time counts)")
    parser.add_argument("--work", default="", help="folder for the model and items (default: a new temporary one)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", default="", help=argparse.SUPPRESS)
    parser.add_argument("--model", default="", help=argparse.SUPPRESS)
    parser.add_argument("--data", default="", help=argparse.SUPPRESS)
    parser.add_argument("--precision", default="", help=argparse.SUPPRESS)
    return parser.parse_args()


def _migrate() -> None:
    sys.path.insert(0, str(REPO))
    from bench.pgdb import ensure_postgres_database

    ensure_postgres_database("bench/gptscore_hf.py")
    subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=REPO, check=True)


def _run_child(tree: Path, model: Path, data: Path, precision: str) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--tree", str(tree), "--model", str(model),
               "--data", str(data), "--precision", precision]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(f"the job on {tree} ({precision}) failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child(args: argparse.Namespace) -> int:
    """One comparison job on `--tree`'s code: import the items, run the job, hand back its pairs and scores."""
    sys.path[:] = [args.tree, *(p for p in sys.path if Path(p or ".").resolve() not in (REPO, REPO / "bench"))]
    import django

    django.setup()
    from comparison.engine.gptscore import gptscore_context
    from comparison.models import ComparisonJob, MetricScore
    from comparison.services.jobs import comparison_create
    from corpus.models import Dataset
    from corpus.services.importing import items_import
    from evaluation.models import Aspect, LLMCall
    from jobs.kinds import job_execute

    name = f"gptscore-hf-bench-{uuid.uuid4().hex[:8]}"
    items_import(path=Path(args.data), dataset_name=name, task_slug="data-to-text")
    dataset = Dataset.objects.get(name=name)
    metric = f"gptscore-hf:{args.model}"
    extra = {"precision": args.precision} if "precision" in inspect.signature(comparison_create).parameters else {}
    job = comparison_create(dataset=dataset, metrics=metric, check=False, **extra)
    began = time.perf_counter()
    status = job_execute(ComparisonJob, job.pk)
    wall = time.perf_counter() - began
    job.refresh_from_db()
    if status != "done":
        raise SystemExit(f"job ended {status}: {job.message}")
    prompts = set(LLMCall.objects.filter(model=args.model).values_list("prompt", flat=True))
    task = dataset.task
    definitions = {a.name.lower(): a.definition for a in Aspect.objects.filter(task=task)}
    pairs = []
    for score in MetricScore.objects.filter(item__dataset=dataset).select_related("item").order_by("item_id",
                                                                                                   "aspect"):
        item = score.item
        context = gptscore_context(task=task.description, output_noun=task.output_noun, aspect=score.aspect,
                                   definition=definitions.get(score.aspect.lower(), ""), inputs=item.inputs,
                                   output_header=dataset.output_header)
        if context + item.output not in prompts:
            raise SystemExit(f"no LLM call holds the prompt of item {item.external_id}, {score.aspect}")
        pairs.append([context, item.output, score.value])
    record = (job.options.get("gptscore_hf") or {}).get(metric, {})
    print(json.dumps({"wall": wall, "pairs": pairs, "tokens": _tokens(args.model, pairs), "record": record,
                      "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
    return 0


def _tokens(model: str, pairs: list) -> int:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    return sum(len(ids) for ids in tokenizer([c + t for c, t, _ in pairs])["input_ids"])


def _reference(model: Path, pairs: list) -> dict[tuple[str, str], float]:
    """fp32, one unpadded pair at a time: log_softmax over the vocabulary, the text's tokens picked one by one."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(model)
    net = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).to(device).eval()
    out = {}
    for context, text, _ in pairs:
        if (context, text) in out:
            continue
        enc = tokenizer(context + text, return_offsets_mapping=True)
        ids, offsets = enc["input_ids"], enc["offset_mapping"]
        with torch.no_grad():
            logprobs = torch.log_softmax(net(torch.tensor([ids], device=device)).logits[0].float(), dim=-1).cpu()
        values = [logprobs[i - 1, ids[i]].item() for i in range(1, len(ids))
                  if offsets[i][1] > offsets[i][0] and offsets[i][1] > len(context)]
        out[(context, text)] = sum(values) / len(values)
    return out


def _peak_flops(dtype_name: str) -> float:
    """The device's matmul rate in `dtype_name`, measured (the best of a few large products)."""
    import torch

    gpu = torch.cuda.is_available()
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    n = 8192 if gpu else 1024
    a = torch.randn(n, n, device="cuda" if gpu else "cpu").to(dtype)
    b = torch.randn(n, n, device=a.device).to(dtype)
    best = float("inf")
    for _ in range(5):
        if gpu:
            torch.cuda.synchronize()
        began = time.perf_counter()
        (a @ b).sum().item()
        best = min(best, time.perf_counter() - began)
    return 2 * n**3 / best


def _report(results: list, reference: dict, parameters: int, gpu: bool, against: str) -> int:
    ok = True
    peaks = {precision: _peak_flops(precision) for precision in {r[1] for r in results}}
    best: dict[tuple[str, str], float] = {}
    for label, precision, load, run in results:
        tokens, peak = run["tokens"], peaks[precision]
        bound_tps = peak / (2 * parameters)
        tps = tokens / run["wall"]
        best[(label, precision)] = max(best.get((label, precision), 0.0), tps)
        worst = max(abs(reference[(c, t)] - value) for c, t, value in run["pairs"])
        limit = AGREEMENT[precision]
        ok &= worst <= limit
        memory = run["record"].get("peak_gpu_memory_bytes") if gpu else run["peak_rss"]
        print(f"{label if label == 'this tree' else against}, {precision}, {len(run['pairs'])} pairs, "
              f"{tokens:,} tokens (load average {load:.1f}): {run['wall']:.2f} s, {tps:,.0f} tokens/s | FLOP bound "
              f"(2 x {parameters / 1e6:.1f}M x tokens at {peak / 1e12:.3f} TFLOP/s, matmul measured) "
              f"{bound_tps:,.0f} tokens/s, {bound_tps / tps:.1f}x away | max |score - fp32 reference| {worst:.1e}, "
              f"target <= {limit:.0e} {'OK' if worst <= limit else 'OVER'} | peak {'GPU memory' if gpu else 'RSS'} "
              f"{(memory or 0) / 2**20:,.0f} MiB | {json.dumps({k: run['record'].get(k) for k in SHOWN})}")
    for (label, precision), tps in best.items():
        if gpu and label == "this tree" and precision != "fp32":
            ok &= tps >= GPU_TARGET_TPS
            print(f"{precision} on the GPU: {tps:,.0f} tokens/s, target >= {GPU_TARGET_TPS:,} "
                  f"{'OK' if tps >= GPU_TARGET_TPS else 'UNDER'}")
    old, new = best.get(("other tree", "fp32")), best.get(("this tree", "fp32"))
    if old and new:
        ok &= new >= old
        print(f"fp32, best of each: this tree {new:,.0f} tokens/s, {against} {old:,.0f} tokens/s: {new / old:.2f}x, "
              f"target >= 1.00 (not slower) {'OK' if new >= old else 'SLOWER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
