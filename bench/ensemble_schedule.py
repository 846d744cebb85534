"""Benchmark: the real ensemble job on the simulated Ollama against its scheduling lower bound.

Runs the evaluator run's job kind (the code the Celery task runs) over a fresh dataset against the
simulated server in its own process, then prints the lower bound
`models*swap + sum_models ceil(calls/P)*call`, the measured wall time, their ratio, the number of model
loads, a rerun's LLM calls (the cache should make it 0), and the same calls made by a naive item-by-item
sequential loop for contrast.

With `--servers K` (K > 1) it then runs the same job over another fresh dataset on K simulated servers
(each a process with every model, one loaded at a time) and prints the wall time beside the K-server
bound: the best spread of the models' work over K servers, and the last annotator answer plus one
supervisor call (`evaluation.runs.placement.job_bound`).

With `--realistic` it runs RotoWire-length items instead (the first `--items` of rotowire/train.jsonl in
$SPANJUDGE_DATA or ../shared/data; it says so and stops when they are absent) on the token-timed simulator
with the `ollama` profile (context 32k, prompt tokens at `--prompt-tps`, generated tokens at `--gen-tps`,
a load of `--swap` s), and prints the wall time beside the token-based lower bound: for each model its load
plus the larger of (its calls' token time / P) and its longest call, summed over the models.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/ensemble_schedule.py \
        [--items 24] [--annotators 5] [--swap 1.0] [--call 0.3] [--parallel 4] [--servers 1] [--skip-naive]
        [--realistic [--prompt-tps 4000] [--gen-tps 400]]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Benches run with DEBUG off, where the settings require a key; this one signs nothing that outlives the run.
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)

from bench.pgdb import allow_servers, ensure_postgres_database  # noqa: E402

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_bench")


def setup_django() -> None:
    """The bench's own database, migrated."""
    ensure_postgres_database("bench/ensemble_schedule.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def timed_run(sim, dataset, annotators: list[str], supervisor: str, parallel: int):
    """Create the job on `sim` (models unloaded first) and run it: (run, status, wall seconds, sim stats)."""
    from evaluation.models import EvaluatorRun
    from evaluation.runs.launch import run_create
    from jobs.kinds import job_execute

    allow_servers(sim.url)
    run = run_create(dataset=dataset, aspect_name="accuracy", annotators=annotators, supervisor=supervisor,
                     ollama_url=sim.url, parallel=parallel)
    sim.reset(models=True)
    began = time.perf_counter()
    status = job_execute(EvaluatorRun, run.pk)
    wall = time.perf_counter() - began
    stats = sim.stats()
    run.refresh_from_db()
    return run, status, wall, stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--annotators", type=int, default=5)
    parser.add_argument("--swap", type=float, default=1.0)
    parser.add_argument("--call", type=float, default=0.3)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--servers", type=int, default=1, help="also run the job on this many servers")
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--realistic", action="store_true", help="RotoWire-length items on the token-timed simulator")
    parser.add_argument("--prompt-tps", type=float, default=4000.0, help="--realistic: prompt tokens per second")
    parser.add_argument("--gen-tps", type=float, default=400.0, help="--realistic: generated tokens per second")
    args = parser.parse_args()
    if args.realistic:
        return realistic(args)

    setup_django()

    from corpus.models import Dataset, Item, TaskType
    from evaluation.engine.prompts import render_annotator_prompt
    from evaluation.llm.ollama_backend import OllamaBackend
    from evaluation.models import EvaluatorRun
    from evaluation.runs.launch import run_create
    from evaluation.runs.placement import job_bound
    from evaluation.runs.steps import run_specs
    from jobs.kinds import job_execute
    from tests.ollama_sim.config import SimConfig
    from tests.ollama_sim.process import SimProcess

    annotators = [f"bench-ann-{i}:7b" for i in range(args.annotators)]
    supervisor = "bench-sup:7b"
    models = [*annotators, supervisor]
    config = SimConfig(models=models, swap_cost=args.swap, call_time=args.call, parallel=args.parallel, max_loaded=1)
    task = TaskType.objects.get(slug="data-to-text")

    def fresh_dataset() -> Dataset:
        """A dataset no call was cached for: every prompt carries a new nonce."""
        nonce = uuid.uuid4().hex[:8]
        made = Dataset.objects.create(name=f"bench-{nonce}", task=task, input_headers=["Data"], output_header="Text")
        Item.objects.bulk_create(
            Item(dataset=made, position=i, external_id=str(i),
                 inputs={"Data": f"home {i} | away {i + 1} | run {nonce}"},
                 output=f"The home side {i} beat the visitors {i + 1} by {3 + i} points in front of a full arena.")
            for i in range(args.items)
        )
        return made

    dataset = fresh_dataset()
    calls_per_model = args.items
    bound = len(models) * args.swap + len(models) * math.ceil(calls_per_model / args.parallel) * args.call

    with SimProcess(config) as sim:
        run, status, wall, stats = timed_run(sim, dataset, annotators, supervisor, args.parallel)

        rerun = run_create(dataset=dataset, aspect_name="accuracy", annotators=annotators, supervisor=supervisor,
                           ollama_url=sim.url, parallel=args.parallel)
        sim.reset(models=False)
        began = time.perf_counter()
        job_execute(EvaluatorRun, rerun.pk)
        rerun_wall = time.perf_counter() - began
        rerun_calls = sim.stats().requests

        naive_wall = None
        if not args.skip_naive:
            # The contrast: one item at a time, every model in turn, one request in flight.
            sim.reset(models=True)
            task_spec, aspect_spec = run_specs(run)
            items = list(Item.objects.filter(dataset=dataset).order_by("position").values_list("inputs", "output"))
            backend = OllamaBackend(sim.url, timeout=600)
            options = {**run.config["options"], "seed": 7}
            began = time.perf_counter()
            for inputs, output in items:
                prompt = render_annotator_prompt(run.templates["annotator"], task=task_spec, aspect=aspect_spec,
                                                 inputs=inputs, output=output, output_header="Text")
                for model in models:
                    backend.chat(model, prompt, options=options)
            naive_wall = time.perf_counter() - began
            naive_loads = sim.stats().loads

    spread = None
    if args.servers > 1:
        per_model = args.swap + math.ceil(calls_per_model / args.parallel) * args.call
        k_bound = job_bound([per_model] * args.annotators, per_model, args.servers, args.call)
        sims = [SimProcess(config) for _ in range(args.servers)]
        try:
            for server in sims:
                server.start()
            allow_servers(*(server.url for server in sims))
            k_run = run_create(dataset=fresh_dataset(), aspect_name="accuracy", annotators=annotators,
                               supervisor=supervisor, ollama_url=[server.url for server in sims],
                               parallel=args.parallel)
            for server in sims:
                server.reset(models=True)
            began = time.perf_counter()
            k_status = job_execute(EvaluatorRun, k_run.pk)
            k_wall = time.perf_counter() - began
            k_stats = [server.stats() for server in sims]
            k_run.refresh_from_db()
            spread = (k_bound, k_wall, k_status, k_stats, k_run.placement)
        finally:
            for server in sims:
                server.stop()

    print(f"job: {args.items} items x ({args.annotators} annotators + supervisor), swap {args.swap}s, "
          f"call {args.call}s, P={args.parallel}, one loaded model; status {status}")
    print(f"lower bound  models*swap + sum ceil(calls/P)*call = {bound:.2f} s")
    print(f"measured wall time                              = {wall:.2f} s")
    print(f"ratio measured / bound                          = {wall / bound:.3f}  (target <= 1.15)")
    print(f"model loads (swaps)                             = {stats.loads}  (minimum {len(models)})")
    needed = len(models) * args.items
    print(f"LLM requests                                    = {stats.requests}  (calls needed {needed})")
    print(f"rerun of the finished job: LLM calls            = {rerun_calls}  (target 0), {rerun_wall:.2f} s")
    if naive_wall is not None:
        print(f"naive item-by-item sequential loop              = {naive_wall:.2f} s, {naive_loads} model loads "
              f"({naive_wall / wall:.1f}x slower)")
    if spread is not None:
        k_bound, k_wall, k_status, k_stats, placement = spread
        print(f"{args.servers} servers (every model on each, one loaded at a time per server); status {k_status}")
        for entry in placement["servers"]:
            print(f"  placement {entry['server']}: {', '.join(entry['models'])}")
        print(f"{args.servers}-server bound  best spread of per-model work, last annotator + supervisor call "
              f"= {k_bound:.2f} s")
        print(f"{args.servers}-server measured wall time                    = {k_wall:.2f} s")
        print(f"{args.servers}-server ratio measured / bound                = {k_wall / k_bound:.3f}  (target <= 1.30)")
        print(f"{args.servers}-server model loads per server                = "
              f"{[stats.loads for stats in k_stats]}")
        print(f"{args.servers}-server LLM requests                          = "
              f"{sum(stats.requests for stats in k_stats)}  (calls needed {needed}), repeated answered calls "
              f"{sum(stats.repeated_calls() for stats in k_stats)}")
    return 0


def rotowire_rows(count: int) -> list[dict] | None:
    """The first `count` RotoWire items, or None when the shared data is not there."""
    import json

    root = Path(os.environ.get("SPANJUDGE_DATA") or Path(__file__).resolve().parent.parent.parent / "shared" / "data")
    path = root.expanduser() / "rotowire" / "train.jsonl"
    if not path.exists():
        return None
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return rows[:count]


def realistic(args: argparse.Namespace) -> int:
    rows = rotowire_rows(args.items)
    if rows is None:
        print("--realistic needs rotowire/train.jsonl in $SPANJUDGE_DATA or ../shared/data; it is not there, "
              "so nothing was measured.")
        return 0
    setup_django()
    from corpus.models import Dataset, Item, TaskType
    from evaluation.models import LLMCall, RunCall
    from tests.ollama_sim.config import SimConfig
    from tests.ollama_sim.process import SimProcess

    annotators = [f"bench-ann-{i}:7b" for i in range(args.annotators)]
    supervisor = "bench-sup:7b"
    models = [*annotators, supervisor]
    # Ollama keeps one prompt cache per parallel slot (REAL_SERVERS.md): the simulator does the same, so the
    # prompt tokens evaluated show what the calls' order saves (LLM_CACHE_ORDER=0 sends them as planned).
    config = SimConfig(models=models, swap_cost=args.swap, parallel=args.parallel, max_loaded=1, profile="ollama",
                       context_length=32_768, prompt_tokens_per_second=args.prompt_tps,
                       tokens_per_second=args.gen_tps, cache_slots=args.parallel)
    nonce = uuid.uuid4().hex[:8]
    task = TaskType.objects.get(slug="data-to-text")
    dataset = Dataset.objects.create(name=f"bench-rw-{nonce}", task=task, input_headers=["Data"],
                                     output_header="Summary")
    Item.objects.bulk_create(
        Item(dataset=dataset, position=i, external_id=f"{row['id']}-{nonce}",
             inputs={"Data": row["inputs"]["Data"] + f" (run {nonce})"}, output=row["outputs"]["Summary"])
        for i, row in enumerate(rows)
    )
    with SimProcess(config) as sim:
        run, status, wall, stats = timed_run(sim, dataset, annotators, supervisor, args.parallel)
    calls = LLMCall.objects.filter(run_calls__run=run, run_calls__from_cache=False).distinct()
    per_model: dict[str, list[float]] = {}
    prompt_tokens = []
    for model, prompt, completion in calls.values_list("model", "prompt_tokens", "completion_tokens"):
        per_model.setdefault(model, []).append((prompt or 0) / args.prompt_tps + (completion or 0) / args.gen_tps)
        prompt_tokens.append(prompt or 0)
    bound = sum(args.swap + max(sum(times) / args.parallel, max(times)) for times in per_model.values())
    from evaluation.selectors import run_problems

    problems = run_problems(run.pk)
    ctx = run.config.get("num_ctx", {})
    print(f"realistic job: {len(rows)} RotoWire items x ({args.annotators} annotators + supervisor), profile ollama "
          f"(context 32768), prompt {args.prompt_tps:g} tok/s, generation {args.gen_tps:g} tok/s, load {args.swap}s, "
          f"P={args.parallel}; status {status}")
    print(f"prompt tokens per call (server count)           = min {min(prompt_tokens)}, "
          f"median {sorted(prompt_tokens)[len(prompt_tokens) // 2]}, max {max(prompt_tokens)}")
    print(f"num_ctx chosen per model                        = {sorted(set(ctx.values()))}")
    print(f"token-based lower bound  sum(load + max(token time / P, longest call)) = {bound:.2f} s")
    print(f"measured wall time                              = {wall:.2f} s")
    print(f"ratio measured / bound                          = {wall / bound:.3f}")
    print(f"truncated requests (simulator log)              = {stats.truncated}  (target 0)")
    from django.conf import settings

    print(f"prompt tokens evaluated / from the prompt cache = {stats.prompt_tokens_evaluated} / "
          f"{stats.prompt_tokens_cached}  (LLM_CACHE_ORDER={int(settings.LLM_CACHE_ORDER)})")
    print(f"prompt_too_long pairs / answer_cut pairs        = {problems['prompt_too_long']} / {problems['answer_cut']}")
    print(f"LLM requests                                    = {stats.requests}  "
          f"(steps {RunCall.objects.filter(run=run).count()}), model loads {stats.loads} (minimum {len(models)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
