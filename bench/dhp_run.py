"""Benchmark: a DHP run (30 items x 6 kinds x 2 metrics x 5 samples) on the simulated Ollama.

Runs `dhp_execute` (the code the Celery task runs) over a fresh summarization dataset: rule-based
perturbation, direct scoring of every original and perturbed text per metric and sample (one model,
P requests in flight), the statistics. Prints the measured wall time beside the lower bound of the
ensemble bench's formula `models*swap + sum_models ceil(calls/P)*call` (here one model), the calls made,
a rerun's calls (the cache should make it 0) and the discernment figures.

The simulated judge runs in this process (its answers are computed: originals get higher scores on
average than perturbed texts, with per-sample noise), so the figures include the DHP statistics too.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_i10 python bench/dhp_run.py \
        [--items 30] [--samples 5] [--swap 1.0] [--call 0.1] [--parallel 4]
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
    args = parser.parse_args()

    ensure_postgres_database("bench/dhp_run.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from corpus.models import Dataset, Item, TaskType
    from dhp.engine.kinds import parse_kinds
    from dhp.models import DhpRun
    from dhp.services.runs import dhp_create, dhp_execute
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
        status = dhp_execute(run.pk)
        wall = time.perf_counter() - began
        requests, loads = sim.stats.requests, sim.stats.loads
        run.refresh_from_db()

        rerun = launch()
        sim.reset_stats()
        began = time.perf_counter()
        dhp_execute(rerun.pk)
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


if __name__ == "__main__":
    raise SystemExit(main())
