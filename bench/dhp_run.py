"""Benchmark: a DHP run (30 items x 6 kinds x 2 metrics x 5 samples) on the simulated Ollama.

Runs the DHP job kind's `execute` (the code the Celery task runs) over a fresh summarization dataset: rule-based
perturbation, direct scoring of every original and perturbed text per metric and sample (one model,
P requests in flight), the statistics. Prints the measured wall time beside the lower bound of the
ensemble bench's formula `models*swap + sum_models ceil(calls/P)*call` (here one model), the calls made,
a rerun's calls (the cache should make it 0) and the discernment figures.

The simulated judge runs in this process (its answers are computed: originals get higher scores on
average than perturbed texts, with per-sample noise), so the figures include the DHP statistics too.

With `--realistic` it scores RotoWire-length items instead (the first `--items` of rotowire/train.jsonl in
$SPANJUDGE_DATA or ../shared/data; it says so and stops when they are absent): 2 metrics, 3 rule-based kinds,
`--samples` samples, on the token-timed simulator with the `ollama` profile and 4 prompt-cache slots (one per
parallel request). For each `--count` mode (what prompt_eval_count reports: full, evaluated, zero) it runs the
job twice on fresh copies of the data, in cache order and in the planned (naive) order, and prints the prompt
tokens the server evaluated beside the bound (every shared prefix once, plus every call's own suffix:
`evaluated_bound`), the wall time beside its token-based bound, and the answers stored as prompt_too_long
(target 0).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_i10 python bench/dhp_run.py \
        [--items 30] [--samples 5] [--swap 1.0] [--call 0.1] [--parallel 4]
        [--realistic [--items 6] [--samples 2] [--count all|full|evaluated|zero] [--prompt-tps 4000]
         [--gen-tps 400]]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)  # DEBUG is off: the settings want a key

from bench.pgdb import allow_servers, ensure_postgres_database  # noqa: E402

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_i10")

KINDS = "char-delete:minor,typo:major,word-delete:minor,sentence-reorder:minor,sentence-reorder:major,swap-ending:minor"
METRICS = ["coherence", "fluency"]
MODEL = "bench-judge:7b"
SENTENCES = [
    "The city council approved a new budget for public transport on Monday.",
    "Bus fares will stay the same for another two years.",
    "Three new tram lines are planned for the northern districts.",
    "Critics say the plan does little for cyclists.",
    "Construction is expected to start next spring.",
]


def _summary(i: int, nonce: str) -> str:
    rotated = SENTENCES[i % 5 :] + SENTENCES[: i % 5]
    return f"Item {i} ({nonce}): " + " ".join(rotated)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--swap", type=float, default=1.0)
    parser.add_argument("--call", type=float, default=0.1)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--realistic", action="store_true", help="RotoWire-length items, prompt caches, token time")
    parser.add_argument("--count", default="all", choices=["all", "full", "evaluated", "zero"])
    parser.add_argument("--prompt-tps", type=float, default=4000.0, help="--realistic: prompt tokens per second")
    parser.add_argument("--gen-tps", type=float, default=400.0, help="--realistic: generated tokens per second")
    args = parser.parse_args()
    if args.realistic:
        return realistic(args)

    ensure_postgres_database("bench/dhp_run.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from corpus.models import Dataset, Item, TaskType
    from dhp.engine.kinds import parse_kinds
    from dhp.models import DhpRun
    from dhp.services.runs import dhp_create
    from jobs.kinds import job_execute
    from tests.ollama_sim import OllamaSim, SimConfig, SimRequest, judged_text

    nonce = uuid.uuid4().hex[:8]
    originals = {_summary(i, nonce) for i in range(args.items)}

    def judge(request: SimRequest) -> str | None:
        text = judged_text(request.prompt).split("\n\nFinish your answer")[0].strip()
        noise = hashlib.sha256(f"{request.options.get('seed')}|{text}".encode()).digest()[0] % 3 - 1
        base = 4 if text in originals else 3
        return f"Judged.\nScore: {max(1, min(5, base + noise))}"

    task = TaskType.objects.get(slug="summarization")
    dataset = Dataset.objects.create(name=f"bench-dhp-{nonce}", task=task, input_headers=["Article"],
                                     output_header="Summary")
    Item.objects.bulk_create(
        Item(dataset=dataset, position=i, external_id=str(i), inputs={"Article": f"Council meeting report {i}."},
             output=_summary(i, nonce))
        for i in range(args.items)
    )
    kinds = parse_kinds(KINDS)
    texts = args.items * (1 + len(kinds))
    calls = texts * len(METRICS) * args.samples
    bound = 1 * args.swap + math.ceil(calls / args.parallel) * args.call

    config = SimConfig(models=[MODEL], swap_cost=args.swap, call_time=args.call, parallel=args.parallel,
                       max_loaded=1, answer=judge)
    with OllamaSim(config) as sim:
        allow_servers(sim.url)

        def launch() -> DhpRun:
            return dhp_create(dataset=dataset, evaluator=MODEL, metrics=METRICS, kinds=kinds, samples=args.samples,
                              seed=1, ollama_url=sim.url, parallel=args.parallel)

        run = launch()
        sim.reset_stats()
        sim.unload_all()
        began = time.perf_counter()
        status = job_execute(DhpRun, run.pk)
        wall = time.perf_counter() - began
        requests, loads = sim.stats.requests, sim.stats.loads
        run.refresh_from_db()

        rerun = launch()
        sim.reset_stats()
        began = time.perf_counter()
        job_execute(DhpRun, rerun.pk)
        rerun_wall = time.perf_counter() - began
        rerun_calls = sim.stats.requests
        rerun.refresh_from_db()

    summary = run.results["summary"] if run.results else {}
    print(f"DHP run: {args.items} items x {len(kinds)} kinds x {len(METRICS)} metrics x {args.samples} samples "
          f"({texts} texts, {calls} scoring calls), swap {args.swap}s, call {args.call}s, P={args.parallel}; "
          f"status {status}")
    print(f"lower bound  models*swap + ceil(calls/P)*call = {bound:.2f} s")
    print(f"measured wall time (perturb + score + stats)  = {wall:.2f} s")
    print(f"ratio measured / bound                        = {wall / bound:.3f}")
    print(f"LLM requests                                  = {requests}  ({calls} scores; {run.cache_hits} from "
          "the cache: texts that came out identical, e.g. two items' deletions of their only differing words); "
          f"model loads {loads}")
    print(f"rerun: LLM calls                              = {rerun_calls}  (target 0), {rerun.cache_hits} from the "
          f"cache, {rerun_wall:.2f} s")
    d_avg, d_min = summary.get("D_avg", float("nan")), summary.get("D_min", float("nan"))
    print(f"discernment: D_avg {d_avg:.3f}, D_min {d_min:.3f}")
    return 0 if status == "done" and rerun_calls == 0 else 1


# The Ollama release each --count mode stands for (evaluation.llm.counting): 0.33 sends the cached count beside
# the whole prompt; 0.30 on llama-server counted only what it evaluated; 0.1.30 left the count out (#3427).
COUNT_VERSIONS = {"full": "0.33.0", "evaluated": "0.30.3", "zero": "0.1.30"}
REALISTIC_METRICS = ["faithfulness", "correctness"]
REALISTIC_KINDS = "typo:major,word-delete:minor,sentence-reorder:minor"
REALISTIC_ANSWER = "The text follows the data on the whole.\nScore: {score}"


def _common(a: list[str], b: list[str]) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def evaluated_bound(prompts: list[list[str]]) -> int:
    """The fewest prompt tokens a server with prompt caches evaluates for these calls, in any order and on any
    number of slots: each call after the first reuses at most what it shares as a prefix with one prompt sent
    before it, so the total is at least the prompts' length minus a maximum spanning tree of their common-prefix
    lengths (Prim's algorithm), and at least one token per call (a server always evaluates the last, to have
    logits to sample from). Within a prefix group: its shared prefix once, plus every call's own suffix."""
    if not prompts:
        return 0
    total = len(prompts[0])
    best = {j: _common(prompts[0], prompts[j]) for j in range(1, len(prompts))}
    while best:
        j = max(best, key=best.get)
        total += max(len(prompts[j]) - best.pop(j), 1)
        for k in best:
            if best[k] < len(prompts[k]):
                best[k] = max(best[k], _common(prompts[j], prompts[k]))
    return total


def rotowire_rows(count: int) -> list[dict] | None:
    import json

    root = Path(os.environ.get("SPANJUDGE_DATA") or Path(__file__).resolve().parent.parent.parent / "shared" / "data")
    path = root.expanduser() / "rotowire" / "train.jsonl"
    if not path.exists():
        return None
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()][:count]


def realistic(args: argparse.Namespace) -> int:
    rows = rotowire_rows(args.items if args.items != 30 else 6)
    if rows is None:
        print("--realistic needs rotowire/train.jsonl in $SPANJUDGE_DATA or ../shared/data; it is not there, "
              "so nothing was measured.")
        return 0
    ensure_postgres_database("bench/dhp_run.py")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from corpus.models import Dataset, Item, TaskType
    from dhp.engine.kinds import parse_kinds
    from dhp.models import DhpRun, DhpScore
    from dhp.services.runs import dhp_create
    from jobs.kinds import job_execute
    from tests.ollama_sim import OllamaSim, SimConfig, SimRequest

    samples = args.samples if args.samples != 5 else 2
    kinds = parse_kinds(REALISTIC_KINDS)
    task = TaskType.objects.get(slug="data-to-text")
    modes = ["full", "evaluated", "zero"] if args.count == "all" else [args.count]
    prompts: list[str] = []

    def judge(request: SimRequest) -> str:
        prompts.append(request.prompt)
        digest = hashlib.sha256(f"{request.options.get('seed')}|{request.prompt}".encode()).digest()
        return REALISTIC_ANSWER.format(score=2 + digest[0] % 3)

    def one(mode: str, ordered: bool, rows: list[dict] = rows) -> dict:
        nonce = uuid.uuid4().hex[:8]
        dataset = Dataset.objects.create(name=f"bench-dhp-rw-{nonce}", task=task, input_headers=["Data"],
                                         output_header="Summary")
        Item.objects.bulk_create(
            Item(dataset=dataset, position=i, external_id=f"{row['id']}-{nonce}",
                 inputs={"Data": f"(run {nonce}) " + row["inputs"]["Data"]}, output=row["outputs"]["Summary"])
            for i, row in enumerate(rows)
        )
        config = SimConfig(models=[MODEL], swap_cost=args.swap, parallel=args.parallel, max_loaded=1,
                           profile="ollama", context_length=32_768, cache_slots=args.parallel, count=mode,
                           version=COUNT_VERSIONS[mode], prompt_tokens_per_second=args.prompt_tps,
                           tokens_per_second=args.gen_tps, answer=judge)
        settings.LLM_CACHE_ORDER = ordered
        prompts.clear()
        with OllamaSim(config) as sim:
            allow_servers(sim.url)
            run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=REALISTIC_METRICS, kinds=kinds,
                             samples=samples, seed=1, ollama_url=sim.url, parallel=args.parallel)
            sim.reset_stats()
            sim.unload_all()
            began = time.perf_counter()
            status = job_execute(DhpRun, run.pk)
            wall = time.perf_counter() - began
            stats = sim.stats
        run = DhpRun.objects.get(pk=run.pk)
        groups: dict[str, list[list[str]]] = {}
        for prompt in prompts:
            groups.setdefault(prompt.split("### Summary\n")[0], []).append(prompt.split())
        bound_tokens = evaluated_bound([p.split() for p in prompts])
        calls = len(stats.ok_calls())
        generated = calls * len(REALISTIC_ANSWER.split())
        busy = bound_tokens / args.prompt_tps + generated / args.gen_tps
        longest = max((len(p.split()) for p in prompts), default=0) / args.prompt_tps
        wall_bound = args.swap + max(busy / args.parallel, longest)
        pairs = [s for s in (run.results or {}).get("scores", [])]
        return {
            "status": status, "wall": wall, "wall_bound": wall_bound, "sent": stats.prompt_tokens_sent,
            "evaluated": stats.prompt_tokens_evaluated, "cached": stats.prompt_tokens_cached, "bound": bound_tokens,
            "calls": calls, "groups": len(groups), "problems": (run.config or {}).get("problems", {}),
            "missing": sum(1 for p in pairs if p["original"] is None or p["perturbed"] is None),
            "pairs": len(pairs), "scores": DhpScore.objects.filter(run=run, score__isnull=False).count(),
        }

    print(f"DHP realistic: {len(rows)} RotoWire items x {len(kinds)} kinds x {len(REALISTIC_METRICS)} metrics x "
          f"{samples} samples, profile ollama (context 32768), {args.parallel} parallel requests with one prompt-cache "
          f"slot each, prompt {args.prompt_tps:g} tok/s, generation {args.gen_tps:g} tok/s, load {args.swap}s")
    one("full", ordered=True, rows=rows[:1])  # warm-up, not measured: imports, the sentence splitter, first queries
    worst = 0
    for mode in modes:
        cached = one(mode, ordered=True)
        naive = one(mode, ordered=False)
        too_long = cached["problems"].get("prompt_too_long", 0) + naive["problems"].get("prompt_too_long", 0)
        worst = max(worst, too_long)
        unchecked = sorted(k for k in cached["problems"] if k.startswith("truncation_unchecked:"))
        print(f"--count {mode} (Ollama {COUNT_VERSIONS[mode]}): status {cached['status']} / naive {naive['status']}; "
              f"{cached['calls']} calls in {cached['groups']} prefix groups")
        print(f"  prompt tokens sent                            = {cached['sent']}")
        print(f"  evaluated, cache order                        = {cached['evaluated']}  "
              f"({cached['evaluated'] / cached['bound']:.3f} x the bound; target <= 1.2)")
        print(f"  evaluated, naive order                        = {naive['evaluated']}  "
              f"({naive['evaluated'] / cached['evaluated']:.2f} x cache order; target >= 2)")
        print(f"  bound: shared prefixes once + own suffixes    = {cached['bound']}")
        print(f"  wall time, cache order                        = {cached['wall']:.2f} s  "
              f"(token bound {cached['wall_bound']:.2f} s, ratio {cached['wall'] / cached['wall_bound']:.3f})")
        print(f"  wall time, naive order                        = {naive['wall']:.2f} s")
        print(f"  prompt_too_long answers (both orders)         = {too_long}  (target 0); score pairs without a "
              f"score {cached['missing']} of {cached['pairs']}; {unchecked or 'no truncation_unchecked'}")
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
