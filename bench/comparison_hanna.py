"""Benchmark: `compare_metrics --metrics length,wordllama@input --sync` on HANNA (1,056 stories, 6 aspects).

Imports ../shared/data/meta_eval/hanna.json (or $SPANJUDGE_DATA/meta_eval/hanna.json) into a fresh dataset,
then runs the command as a separate process, the way an admin would, and prints its wall time (Django start-up,
wordllama's load, scoring, and all correlations with 1,000 bootstrap resamples each included). A second job on
the same dataset reuses every stored score and shows what the statistics alone cost.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/comparison_hanna.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)  # DEBUG is off: the settings want a key
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spanjudge_bench")

from bench.pgdb import ensure_postgres_database  # noqa: E402

TARGET_SECONDS = 30.0  # the "finishes in seconds"
METRICS = "length,wordllama@input"


def _command(*args: str) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - began
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return wall, done.stdout


def main() -> int:
    data = Path(os.environ.get("SPANJUDGE_DATA") or REPO.parent / "shared" / "data") / "meta_eval" / "hanna.json"
    if not data.exists():
        raise SystemExit(f"{data} not found: set SPANJUDGE_DATA to the folder with meta_eval/")
    ensure_postgres_database("bench/comparison_hanna.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from comparison.models import ComparisonJob

    name = f"hanna-bench-{uuid.uuid4().hex[:8]}"
    _command("import_items", str(data), "--dataset", name, "--task", "story-generation")

    wall, out = _command("compare_metrics", "--dataset", name, "--metrics", METRICS, "--sync")
    job = ComparisonJob.objects.get(pk=int(out.splitlines()[0]))
    n_scores = sum(p["done"] for p in job.progress.values())
    rerun_wall, out = _command("compare_metrics", "--dataset", name, "--metrics", METRICS, "--sync")
    rerun = ComparisonJob.objects.get(pk=int(out.splitlines()[0]))
    startup_wall, _ = _command("check")
    from comparison.services.results import job_results

    began = time.perf_counter()
    job_results(rerun)
    stats_wall = time.perf_counter() - began
    cpu = os.cpu_count()
    load = os.getloadavg()[0]
    print(f"compare_metrics --metrics {METRICS} on hanna.json: 1056 items x {len(job.aspects)} aspects, "
          f"{n_scores} scores, {len(job.results['correlations'])} correlation rows, "
          f"{job.options['bootstrap']} bootstrap resamples each ({cpu} cores, load average {load:.1f})")
    print(f"first job (scores computed):  {wall:.1f} s wall   target <= {TARGET_SECONDS:.0f} s   "
          f"{'OK' if wall <= TARGET_SECONDS else 'OVER'}   status {job.status}")
    print(f"second job (scores reused):   {rerun_wall:.1f} s wall   status {rerun.status}, "
          f"{rerun.llm_calls} LLM calls")
    print(f"of which: Django start-up (manage.py check) {startup_wall:.1f} s; correlations + checklist in process "
          f"{stats_wall:.1f} s")
    return 0 if job.status == "done" and wall <= TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
